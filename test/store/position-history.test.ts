/** Position lifetimes from position events: open → add → reduce → close, reopen → flip, liquidation. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { EngineEvent, OrderView, PositionView } from '../../src/engine/records.js';
import type { OrderGroup, Side } from '../../src/domain/enums.js';
import type { ProjectionBatch, PositionHistoryView, ReadStore } from '../../src/store/index.js';
import { DIALECTS, type TestStore } from './dialects.js';

const U = (x: number) => Math.round(x * 1e8);
const M = (x: number) => BigInt(Math.round(x * 1e8));
const T = 1_760_000_000_000;

function order(id: string, side: Side, group: OrderGroup, t: number): OrderView {
  return {
    id, userId: 1, instrument: 'BTCUSDT', type: 'MARKET', side, status: 'FILLED', rejectedReason: '', timeInForce: 'IOC',
    postOnly: false, leverage: 10, quantity: U(1), limitPrice: 0, stopPrice: null, group, unFilledQuantity: 0,
    cashQuantity: 0, filledQuantity: U(1), filledValue: 0n, realizedPnL: 0n, fee: 0n, triggeredAt: null, createdAt: t, updatedAt: t,
  };
}

function position(id: string, side: Side, qty: number, cost: number, rpnl: number, fee: number, funding: number, t: number, instrument = 'BTCUSDT'): PositionView {
  return {
    id, userId: 1, instrument, side, quantity: U(qty), costBasis: M(cost), avgPrice: qty ? U(cost / qty) : 0, leverage: 10,
    maintenanceMargin: 0n, fundingPaid: M(funding), fee: M(fee), realizedPnL: M(rpnl), unRealizedPnL: 0n, markPrice: 0,
    bankruptcyPrice: null, adlLevel: 0, createdAt: T, updatedAt: t,
  };
}

/** A trade: the order, its fill, then the position after it (fill after position in the flip batch to test ordering). */
function trade(seq: number, orderId: string, side: Side, group: OrderGroup, qty: number, price: number, pos: PositionView, fillLast = false): ProjectionBatch {
  const t = T + seq * 1000;
  const fill: EngineEvent = { type: 'fill', fill: {
    executionId: `ex${seq}`, userId: 1, orderId, instrument: pos.instrument, side, role: 'TAKER', quantity: U(qty), price: U(price),
    fee: 0n, realizedPnL: 0n, createdAt: t,
  } };
  const o: EngineEvent = { type: 'order', order: order(orderId, side, group, t) };
  const p: EngineEvent = { type: 'position', position: pos };
  return { seq, ts: t, events: fillLast ? [o, p, fill] : [o, fill, p] };
}

const id = (n: number) => `00090:${n.toString(16).padStart(26, '0')}`;
const at = (seq: number) => T + seq * 1000;

const BATCHES: ProjectionBatch[] = [
  trade(1, id(1), 'BUY', 'manually', 2, 100, position('p1', 'BUY', 2, 200, 0, 1, 0, at(1))),
  trade(2, id(2), 'BUY', 'manually', 1, 130, position('p1', 'BUY', 3, 330, 0, 2, 0, at(2))),
  trade(3, id(3), 'SELL', 'manually', 1, 150, position('p1', 'BUY', 2, 220, 40, 3, 0, at(3))),
  { seq: 4, ts: at(4), events: [{ type: 'position', position: position('p1', 'BUY', 2, 220, 40, 3, -5, at(4)) }] },
  trade(5, id(5), 'SELL', 'manually', 2, 120, position('p1', 'BUY', 0, 0, 60, 4, -5, at(5))),
  // Same position object reopens (counters keep running: only deltas count).
  trade(6, id(6), 'BUY', 'manually', 1, 100, position('p1', 'BUY', 1, 100, 60, 5, -5, at(6))),
  // TP/SL order flips long 1 → short 2 in one event.
  trade(7, id(7), 'SELL', 'tpsl', 3, 90, position('p1', 'SELL', 2, 180, 50, 6, -5, at(7)), true),
  // Liquidated at 95.
  trade(8, id(8), 'BUY', 'liquidation', 2, 95, position('p1', 'SELL', 0, 0, 40, 6, -5, at(8))),
  // A new position object on ETH, still open: not history.
  trade(9, id(9), 'BUY', 'manually', 1, 10, position('p2', 'BUY', 1, 10, 0, 0, 0, at(9), 'ETHUSDT')),
];

const EXPECTED: Omit<PositionHistoryView, 'id'>[] = [
  { userId: 1, instrument: 'BTCUSDT', positionId: 'p1', side: 'BUY', openAt: at(1), closeAt: at(5), maxQuantity: U(3),
    avgEntryPrice: U(110), avgExitPrice: U(130), realizedPnL: M(60), fee: M(4), fundingPaid: M(-5), closeType: 'manually' },
  { userId: 1, instrument: 'BTCUSDT', positionId: 'p1', side: 'BUY', openAt: at(6), closeAt: at(7), maxQuantity: U(1),
    avgEntryPrice: U(100), avgExitPrice: U(90), realizedPnL: M(-10), fee: M(2), fundingPaid: 0n, closeType: 'tpsl' },
  { userId: 1, instrument: 'BTCUSDT', positionId: 'p1', side: 'SELL', openAt: at(7), closeAt: at(8), maxQuantity: U(2),
    avgEntryPrice: U(90), avgExitPrice: U(95), realizedPnL: M(-10), fee: 0n, fundingPaid: 0n, closeType: 'liquidation' },
];

const strip = (rows: PositionHistoryView[]) => rows.map(({ id: _id, ...rest }) => rest);

for (const dialect of DIALECTS) {
  describe(`position history (${dialect.name})`, async () => {
    const available = await dialect.available();
    let one: TestStore;
    let split: TestStore;
    let store: ReadStore;
    before(async () => {
      if (!available) return;
      one = await dialect.open();
      split = await dialect.open();
      store = one.store;
      await one.store.projector.project(BATCHES);
      // Same batches one by one: the open lifetime must carry across project() calls.
      for (const b of BATCHES) await split.store.projector.project([b]);
    });
    after(async () => {
      await one?.dispose();
      await split?.dispose();
    });

    it('one row per closed lifetime, open → close → reopen → flip → liquidation', { skip: !available }, async () => {
      const page = await store.queries.positionHistory(1, { sort: 'open-at-asc' });
      assert.equal(page.count, 3);
      assert.deepEqual(strip(page.list), EXPECTED);
      assert.deepEqual(strip((await split.store.queries.positionHistory(1, { sort: 'open-at-asc' })).list), EXPECTED);
    });

    it('filters and sorts', { skip: !available }, async () => {
      const q = store.queries;
      assert.deepEqual(strip((await q.positionHistory(1)).list), [...EXPECTED].reverse());
      assert.deepEqual(strip((await q.positionHistory(1, { sort: 'close-at-desc', limit: 1 })).list), [EXPECTED[2]]);
      assert.deepEqual(strip((await q.positionHistory(1, { closeType: ['tpsl', 'liquidation'], sort: 'close-at-asc' })).list), [EXPECTED[1], EXPECTED[2]]);
      assert.deepEqual(strip((await q.positionHistory(1, { side: 'SELL' })).list), [EXPECTED[2]]);
      assert.deepEqual(strip((await q.positionHistory(1, { openAfter: at(6), openBefore: new Date(at(7)).toISOString() })).list), [EXPECTED[1]]);
      assert.deepEqual(strip((await q.positionHistory(1, { closeAfter: at(7), sort: 'open-at-asc' })).list), [EXPECTED[1], EXPECTED[2]]);
      assert.equal((await q.positionHistory(1, { instrument: 'ETHUSDT' })).count, 0);
      assert.equal((await q.positionHistory(2)).count, 0);
      const first = await q.positionHistory(1, { limit: 2, sort: 'open-at-asc' });
      assert.ok(first.next);
      assert.deepEqual(strip((await q.positionHistory(1, { limit: 2, sort: 'open-at-asc', next: first.next })).list), [EXPECTED[2]]);
    });

    it('closing the ETH position later closes its row', { skip: !available }, async () => {
      await store.projector.project([trade(10, id(10), 'SELL', 'adl', 1, 12, position('p2', 'BUY', 0, 0, 2, 0, 0, at(10), 'ETHUSDT'))]);
      const [row] = (await store.queries.positionHistory(1, { instrument: ['ETHUSDT'] })).list;
      assert.equal(row?.closeType, 'adl');
      assert.equal(row?.avgExitPrice, U(12));
      assert.equal(row?.realizedPnL, M(2));
    });
  });
}
