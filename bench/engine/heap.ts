/**
 * Heap bytes per resting order: an instance is set up (instruments, users, deposits), the heap is
 * measured after a full GC, then `orders` non-crossing GTC limits are added one at a time (inputs are made
 * per order and dropped, so only what the implementation keeps stays reachable), and the heap is measured
 * again after a full GC. (after − before) / orders. The instance is kept reachable until the second
 * measurement.
 */
import { OrderBook as PeerBook, Side as PeerSide } from 'nodejs-order-book';
import { orderIdPrefix } from '../../src/domain/order-id.js';
import type { Command } from '../../src/engine/commands.js';
import { applySetup, bareInstance, LEVERAGE, ResultTally, type EngineFactory } from './runs.js';
import { gcNow } from './stats.js';
import { BASE_TS, INSTRUMENTS, restingOrderAt } from './workload.js';
import { mulberry32 } from '../../src/simulation/seeded-random.js';

export interface HeapResult {
  bytesPerOrder: number;
  /** Rate at which the resting orders were added (includes making each input). */
  insertsPerSec: number;
  resting: number;
  note: string;
}

const ID_BASE = 0x7000_0000;

/** JS heap plus typed-array backing stores (held outside the JS heap, e.g. the used-order-id table): both are the engine's memory. */
function heapUsed(): number {
  gcNow(2);
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

export function heapBare(orders: number, users: number, seed: number): HeapResult {
  const rnd = mulberry32(seed);
  const prefix = orderIdPrefix(BASE_TS);
  const b = bareInstance();
  const before = heapUsed();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < orders; i++) {
    const s = restingOrderAt(i, rnd, users, prefix, ID_BASE);
    b.rest(s.inst, s.bid, s.id, s.price, s.qty);
  }
  const sec = Number(process.hrtime.bigint() - t0) / 1e9;
  const after = heapUsed();
  const resting = b.byId.size;
  return { bytesPerOrder: (after - before) / orders, insertsPerSec: orders / sec, resting, note: `${levels(b.books)} price levels` };
}

function levels(books: Array<{ bids: { size: number }; asks: { size: number } }>): number {
  let n = 0;
  for (const bk of books) n += bk.bids.size + bk.asks.size;
  return n;
}

export function heapPeer(orders: number, users: number, seed: number): HeapResult {
  const rnd = mulberry32(seed);
  const prefix = orderIdPrefix(BASE_TS);
  const books = INSTRUMENTS.map(() => new PeerBook());
  const before = heapUsed();
  const t0 = process.hrtime.bigint();
  let errors = 0;
  for (let i = 0; i < orders; i++) {
    const s = restingOrderAt(i, rnd, users, prefix, ID_BASE);
    const r = books[s.inst].limit({ id: s.id, side: s.bid ? PeerSide.BUY : PeerSide.SELL, size: s.qty, price: s.price });
    if (r.err) errors++;
  }
  const sec = Number(process.hrtime.bigint() - t0) / 1e9;
  const after = heapUsed();
  let resting = 0;
  for (const bk of books) {
    const [asks, bids] = bk.depth();
    resting += asks.length + bids.length; // levels, reported in the note
  }
  return { bytesPerOrder: (after - before) / orders, insertsPerSec: orders / sec, resting: orders - errors, note: `${resting} price levels, ${errors} errors` };
}

export function heapEngine(create: EngineFactory, orders: number, users: number, seed: number): HeapResult {
  const rnd = mulberry32(seed);
  const engine = create();
  applySetup(engine, users);
  const prefix = orderIdPrefix(BASE_TS);
  const tally = new ResultTally();
  let resting = 0;
  let ts = BASE_TS + 1_000_000;
  const before = heapUsed();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < orders; i++) {
    const s = restingOrderAt(i, rnd, users, prefix, ID_BASE);
    const cmd: Command = {
      ts: ts++, kind: 'order.place', userId: s.user,
      order: {
        id: s.id, instrument: INSTRUMENTS[s.inst].id, side: s.bid ? 'BUY' : 'SELL', type: 'LIMIT', timeInForce: 'GTC',
        leverage: LEVERAGE, quantity: s.qty, limitPrice: s.price,
      },
    };
    const r = engine.apply(cmd);
    if (r.reply.ok && r.reply.order?.status === 'NEW') resting++;
    else tally.add(cmd, r);
  }
  const sec = Number(process.hrtime.bigint() - t0) / 1e9;
  const after = heapUsed();
  const detail = tally.detail();
  const note = detail.length ? `not resting: ${detail.slice(0, 3).join('; ')}` : '';
  // Keep the engine reachable until after the second measurement.
  if (engine.seq < 0) console.log(engine);
  return { bytesPerOrder: (after - before) / orders, insertsPerSec: orders / sec, resting, note };
}
