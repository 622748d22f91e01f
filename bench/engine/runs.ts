/**
 * The four implementations the benchmark drives with the same stream:
 *   (a) the bare order book (src/engine/order-book.ts: OrderBook + matchBare, a Map id → node for cancels),
 *   (b) the full engine (`apply`, margin checks, events, replies),
 *   (c) the engine behind the Sequencer with the SQLite journal (fsync group commit),
 *   (d) the npm package `nodejs-order-book` as a peer.
 *
 * Each "pass" builds a fresh instance, then runs the whole stream either untimed per command (throughput)
 * or with `process.hrtime.bigint()` around every command (latency). Input objects (engine commands, peer
 * arguments) are built before the pass, outside the timing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { OrderBook as PeerBook, Side as PeerSide, type LimitOrderOptions, type MarketOrderOptions } from 'nodejs-order-book';
import type { Units } from '../../src/domain/fixed.js';
import { DEMO_INSTRUMENTS } from '../../src/domain/instrument.js';
import { orderIdPrefix } from '../../src/domain/order-id.js';
import type { ExchangeEngine } from '../../src/engine/api.js';
import type { Command } from '../../src/engine/commands.js';
import type { CommandResult } from '../../src/engine/records.js';
import { matchBare, OrderBook, type BookOrder } from '../../src/engine/order-book.js';
import type { CommandJournal } from '../../src/journal/ports.js';
import { openSqliteJournal } from '../../src/journal/sqlite-journal.js';
import { openThreadedSqliteJournal } from '../../src/journal/threaded-sqlite-journal.js';
import { Sequencer } from '../../src/sequencer/sequencer.js';
import { gcNow, mainThreadCpuNs } from './stats.js';
import {
  BASE_TS, BenchOrder, ID_CANCEL, ID_SET, INSTRUMENTS, OP_CANCEL, OP_IOC, OP_LIMIT, OP_MARKET, orderId, type Workload,
} from './workload.js';

export const LEVERAGE = 10;
/** 10 million USDT per user, in 1e-8 units. */
export const DEPOSIT = '1000000000000000';

export interface PassResult {
  /** Wall time of the whole pass, ns. */
  elapsedNs: number;
  /** Process CPU time (all threads: main + GC helpers) during the pass, ns. Well below elapsedNs = CPU contention. */
  cpuNs?: number;
  /** CPU time of the main thread alone during the pass, ns (Linux). */
  mainCpuNs?: number;
  /** Per-command latency in ns (latency passes only). */
  lat?: Float64Array;
  notes: Record<string, number | string>;
}

/** Starts CPU accounting for a pass; the returned function gives { cpuNs, mainCpuNs } so far. */
function cpuMeter(): () => { cpuNs: number; mainCpuNs?: number } {
  const c0 = process.cpuUsage();
  const m0 = mainThreadCpuNs();
  return () => {
    const d = process.cpuUsage(c0);
    const m1 = mainThreadCpuNs();
    return { cpuNs: (d.user + d.system) * 1000, mainCpuNs: m0 === undefined || m1 === undefined ? undefined : m1 - m0 };
  };
}

/** An untimed pass: `loop` runs once after a gc, between clock and CPU readings (no timer per command). */
function untimedPass(loop: () => void, notes: () => PassResult['notes'] = () => ({})): PassResult {
  gcNow();
  const cpu = cpuMeter();
  const t0 = process.hrtime.bigint();
  loop();
  return { elapsedNs: Number(process.hrtime.bigint() - t0), ...cpu(), notes: notes() };
}

// ---------------------------------------------------------------- (a) bare book

export function bareInstance() {
  const books = INSTRUMENTS.map((spec) => new OrderBook(spec.tick));
  const byId = new Map<string, BenchOrder>();
  let fills = 0;
  let missedCancels = 0;
  const onFill = (maker: BookOrder, q: Units): void => {
    fills++;
    if (q === maker.remaining) byId.delete((maker as BenchOrder).id);
  };
  const step = (w: Workload, i: number): void => {
    const book = books[w.inst[i]];
    const isBid = w.bid[i] === 1;
    switch (w.op[i]) {
      case OP_LIMIT: {
        const price = w.price[i];
        const left = matchBare(book, isBid, price, w.qty[i], onFill);
        if (left > 0) {
          const o = new BenchOrder(w.id[i], i, price, left);
          book.side(isBid).add(o);
          byId.set(o.id, o);
        }
        break;
      }
      case OP_CANCEL: {
        const id = w.id[i];
        const o = byId.get(id);
        if (o === undefined) missedCancels++;
        else {
          book.side(isBid).remove(o);
          byId.delete(id);
        }
        break;
      }
      case OP_IOC:
        matchBare(book, isBid, w.price[i], w.qty[i], onFill);
        break;
      case OP_MARKET:
        matchBare(book, isBid, isBid ? Number.MAX_SAFE_INTEGER : 0, w.qty[i], onFill);
        break;
    }
  };
  /** Adds one non-crossing resting order (heap run). */
  const rest = (inst: number, isBid: boolean, id: string, price: Units, qty: Units): void => {
    const o = new BenchOrder(id, -1, price, qty);
    books[inst].side(isBid).add(o);
    byId.set(id, o);
  };
  const notes = () => ({ fills, 'cancel not found': missedCancels, 'resting at end': byId.size });
  return { step, rest, notes, books, byId };
}

/**
 * A ceiling for (a): the same book with no id lookup at all. Each order's handle is the index of the op that
 * placed it, and the nodes sit in an array at that index (a cancel knows its order's handle), so finding an
 * order costs one array read. Any (a) that finds orders by their string id is slower than this, whatever its
 * table; its ratio to the peer bounds what a faster table could give (a). Reported in the details.
 * Its step is written out rather than shared with (a)'s through a store callback: one call site seeing both
 * callbacks would be polymorphic, and (a) itself would be measured slower.
 */
export function bookAlonePass(w: Workload): PassResult {
  const books = INSTRUMENTS.map((spec) => new OrderBook(spec.tick));
  const byRef = new Array<BenchOrder | undefined>(w.n).fill(undefined);
  const onFill = (maker: BookOrder, q: Units): void => {
    if (q === maker.remaining) byRef[(maker as BenchOrder).ref] = undefined;
  };
  const step = (i: number): void => {
    const book = books[w.inst[i]];
    const isBid = w.bid[i] === 1;
    switch (w.op[i]) {
      case OP_LIMIT: {
        const price = w.price[i];
        const left = matchBare(book, isBid, price, w.qty[i], onFill);
        if (left > 0) {
          const o = new BenchOrder(w.id[i], i, price, left);
          book.side(isBid).add(o);
          byRef[i] = o;
        }
        break;
      }
      case OP_CANCEL: {
        const ref = w.ref[i];
        const o = byRef[ref];
        if (o !== undefined) {
          book.side(isBid).remove(o);
          byRef[ref] = undefined;
        }
        break;
      }
      case OP_IOC:
        matchBare(book, isBid, w.price[i], w.qty[i], onFill);
        break;
      case OP_MARKET:
        matchBare(book, isBid, isBid ? Number.MAX_SAFE_INTEGER : 0, w.qty[i], onFill);
        break;
    }
  };
  const n = w.n;
  return untimedPass(() => {
    for (let i = 0; i < n; i++) step(i);
  });
}

/**
 * A ceiling for (a): only the string-id lookups the stream needs (set when an order rests, get + delete on a
 * cancel, delete when a maker fills), through a Map<string, number>, with no book at all. Any book that finds
 * orders by their string id in a JS Map, (a) included, is slower than this; its ratio to the peer bounds
 * what (a)/(d) can reach that way. Reported in the details, not in the table.
 */
export function idMapCeilingPass(w: Workload): PassResult {
  const script = w.idOps;
  const ids = w.id;
  const byId = new Map<string, number>();
  let missed = 0;
  return untimedPass(() => {
    for (let k = 0; k < script.length; k++) {
      const e = script[k];
      const id = ids[e >> 2];
      switch (e & 3) {
        case ID_SET: byId.set(id, e); break;
        case ID_CANCEL: if (byId.get(id) === undefined) missed++; byId.delete(id); break;
        default: byId.delete(id);
      }
    }
  }, () => ({ missed }));
}

export function barePass(w: Workload, timed: boolean): PassResult {
  const b = bareInstance();
  const step = b.step;
  const n = w.n;
  if (!timed) {
    return untimedPass(() => {
      for (let i = 0; i < n; i++) step(w, i);
    }, b.notes);
  }
  gcNow();
  const lat = new Float64Array(n);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const s = process.hrtime.bigint();
    step(w, i);
    lat[i] = Number(process.hrtime.bigint() - s);
  }
  return { elapsedNs: Number(process.hrtime.bigint() - t0), lat, notes: b.notes() };
}

// ---------------------------------------------------------------- (d) peer: nodejs-order-book

type PeerArg = LimitOrderOptions | MarketOrderOptions | string;

/**
 * The peer's inputs. Prices and sizes are given as integer ticks and lots (its most favourable encoding:
 * it keys price levels by `price.toString()`, and a small integer is an array-index key; BENCH_PEER_UNITS=1
 * passes the engine's 1e-8 Units instead).
 */
export function peerArgs(w: Workload): PeerArg[] {
  const out = new Array<PeerArg>(w.n);
  const asUnits = process.env.BENCH_PEER_UNITS === '1';
  for (let i = 0; i < w.n; i++) {
    const side = w.bid[i] === 1 ? PeerSide.BUY : PeerSide.SELL;
    const spec = INSTRUMENTS[w.inst[i]];
    const price = asUnits ? w.price[i] : w.price[i] / spec.tick;
    const size = asUnits ? w.qty[i] : w.qty[i] / spec.lot;
    switch (w.op[i]) {
      case OP_LIMIT:
        out[i] = { id: w.id[i], side, size, price };
        break;
      case OP_IOC:
        out[i] = { id: w.id[i], side, size, price, timeInForce: 'IOC' as LimitOrderOptions['timeInForce'] };
        break;
      case OP_MARKET:
        out[i] = { side, size };
        break;
      case OP_CANCEL:
        out[i] = w.id[i];
        break;
    }
  }
  return out;
}

export function peerInstance() {
  const books = INSTRUMENTS.map(() => new PeerBook());
  let missedCancels = 0;
  let errors = 0;
  let done = 0;
  const step = (w: Workload, args: PeerArg[], i: number, check: boolean): void => {
    const book = books[w.inst[i]];
    const op = w.op[i];
    if (op === OP_CANCEL) {
      const r = book.cancel(args[i] as string);
      if (check && r === undefined) missedCancels++;
      return;
    }
    const r = op === OP_MARKET ? book.market(args[i] as MarketOrderOptions) : book.limit(args[i] as LimitOrderOptions);
    if (check) {
      if (r.err) errors++;
      done += r.done.length;
    }
  };
  const notes = () => ({ 'orders done': done, errors, 'cancel not found': missedCancels });
  return { step, notes, books };
}

export function peerPass(w: Workload, args: PeerArg[], timed: boolean): PassResult {
  const p = peerInstance();
  const step = p.step;
  const n = w.n;
  if (!timed) {
    return untimedPass(() => {
      for (let i = 0; i < n; i++) step(w, args, i, false);
    });
  }
  gcNow();
  const lat = new Float64Array(n);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const s = process.hrtime.bigint();
    step(w, args, i, true);
    lat[i] = Number(process.hrtime.bigint() - s);
  }
  return { elapsedNs: Number(process.hrtime.bigint() - t0), lat, notes: p.notes() };
}

// ---------------------------------------------------------------- (b) engine

export type EngineFactory = () => ExchangeEngine;

/** Instruments, start prices, and a deposit for each user 1..users; ts from BASE_TS. */
export function setupCommands(users: number): Command[] {
  const cmds: Command[] = [];
  let ts = BASE_TS;
  for (const config of DEMO_INSTRUMENTS) cmds.push({ ts, kind: 'instrument.upsert', config });
  for (const spec of INSTRUMENTS) cmds.push({ ts, kind: 'price.tick', instrument: spec.id, indexPrice: spec.startPrice });
  for (let u = 1; u <= users; u++) {
    cmds.push({ ts: ++ts, kind: 'funds.deposit', userId: u, amount: DEPOSIT, transferId: `bench-deposit-${u}` });
  }
  return cmds;
}

export function applySetup(engine: ExchangeEngine, users: number): void {
  for (const cmd of setupCommands(users)) {
    const r = engine.apply(cmd);
    if (!r.reply.ok) throw new Error(`setup ${cmd.kind} refused: ${r.reply.error.code} ${r.reply.error.message}`);
  }
}

/**
 * The stream as engine commands. A MARKET order's `cashQuantity` (the notional it may spend, USDT Units)
 * is the notional its fills had in the reference book, so the engine fills about the same quantity.
 *
 * The commands (b) and (c) run (these, setupCommands, tpslLoadCommands; heap.ts too) are written `ts` first,
 * the shape the Sequencer hands the engine (`{ ts, ...input }`), so the engine's property loads see the same
 * shape per kind in (b) as in (c) and in the app. With `ts` second, (b) taught them a shape the app never
 * makes; (c) run after it measured 154–175k main-thread cmds/s against 167–179k this way (three process pairs,
 * 2026-11-23): a few percent, within this VM's noise.
 */
export function engineCommands(w: Workload): Command[] {
  const out = new Array<Command>(w.n);
  for (let i = 0; i < w.n; i++) {
    const ts = w.ts[i];
    const userId = w.user[i];
    const instrument = INSTRUMENTS[w.inst[i]].id;
    const side = w.bid[i] === 1 ? 'BUY' : 'SELL';
    switch (w.op[i]) {
      case OP_LIMIT:
      case OP_IOC:
        out[i] = {
          ts, kind: 'order.place', userId,
          order: {
            id: w.id[i], instrument, side, type: 'LIMIT', timeInForce: w.op[i] === OP_IOC ? 'IOC' : 'GTC',
            leverage: LEVERAGE, quantity: w.qty[i], limitPrice: w.price[i],
          },
        };
        break;
      case OP_MARKET: {
        const notional = w.notional[i] > 0 ? w.notional[i] : 100_000_000; // empty book in the reference: 1 USDT
        out[i] = {
          ts, kind: 'order.place', userId,
          order: {
            id: w.id[i], instrument, side, type: 'MARKET', timeInForce: 'IOC', leverage: LEVERAGE,
            cashQuantity: notional,
          },
        };
        break;
      }
      case OP_CANCEL:
        out[i] = { ts, kind: 'order.cancel', userId, orderId: w.id[i] };
        break;
    }
  }
  return out;
}

/** Tallies what the engine said, so a run reports refusals instead of silently measuring them. */
export class ResultTally {
  refused = new Map<string, number>();
  rejectedOrders = new Map<string, number>();
  trades = 0;
  events = 0;
  samples: string[] = [];

  add(cmd: Command, r: CommandResult): void {
    this.events += r.events.length;
    for (const e of r.events) if (e.type === 'trade') this.trades++;
    if (!r.reply.ok) {
      const key = `${cmd.kind}: ${r.reply.error.code}`;
      this.refused.set(key, (this.refused.get(key) ?? 0) + 1);
      if (this.samples.length < 5) this.samples.push(`${key} (${r.reply.error.message})`);
      return;
    }
    const o = r.reply.order;
    if (o && o.status === 'REJECTED') {
      const key = `${o.type}/${o.timeInForce}: ${o.rejectedReason}`;
      this.rejectedOrders.set(key, (this.rejectedOrders.get(key) ?? 0) + 1);
    }
  }

  get refusedTotal(): number {
    let s = 0;
    for (const v of this.refused.values()) s += v;
    return s;
  }

  get rejectedTotal(): number {
    let s = 0;
    for (const v of this.rejectedOrders.values()) s += v;
    return s;
  }

  notes(): Record<string, number | string> {
    const out: Record<string, number | string> = { trades: this.trades, refused: this.refusedTotal, 'rejected orders': this.rejectedTotal };
    return out;
  }

  detail(): string[] {
    const lines: string[] = [];
    for (const [k, v] of this.refused) lines.push(`refused ${k}: ${v}`);
    for (const [k, v] of this.rejectedOrders) lines.push(`rejected ${k}: ${v}`);
    return lines;
  }
}

/**
 * Commands that leave `perUser` resting orders per user, each with a take-profit waiting on it (status
 * waitOrder): buys 8% below the start price (inside the fat-finger band, far below where the stream trades,
 * so they never fill), of the fewest lots worth 2 USDT or more (above minVolume). Makes the live TpSl count of
 * a venue whose traders use TP/SL.
 */
export function tpslLoadCommands(users: number, perUser: number): Command[] {
  const cmds: Command[] = [];
  const prefix = orderIdPrefix(BASE_TS);
  let n = 0x7000_0000;
  for (let u = 1; u <= users; u++) {
    for (let k = 0; k < perUser; k++) {
      const spec = INSTRUMENTS[k % INSTRUMENTS.length];
      const deep = spec.startPrice - Math.floor((spec.startPrice * 8) / 100 / spec.tick) * spec.tick - k * spec.tick;
      const lots = Math.ceil(200_000_000 / ((spec.lot * deep) / 1e8)) * spec.lot;
      cmds.push({
        ts: BASE_TS + users + 1, kind: 'order.place', userId: u,
        order: {
          id: orderId(prefix, n++), instrument: spec.id, side: 'BUY', type: 'LIMIT', timeInForce: 'GTC', leverage: LEVERAGE,
          quantity: lots, limitPrice: deep, tpsl: [{ type: 'take-profit', side: 'SELL', quantity: 0, price: spec.startPrice * 2 }],
        },
      });
    }
  }
  return cmds;
}

export function enginePass(
  create: EngineFactory, users: number, cmds: Command[], timed: boolean, extraSetup: readonly Command[] = [],
): PassResult & { tally?: ResultTally; engine?: ExchangeEngine } {
  const engine = create();
  applySetup(engine, users);
  for (const cmd of extraSetup) {
    const r = engine.apply(cmd);
    if (!r.reply.ok || r.reply.order?.status === 'REJECTED') throw new Error(`extra setup ${cmd.kind} refused: ${JSON.stringify(r.reply, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`);
  }
  const n = cmds.length;
  if (!timed) {
    // No engine in the result: the caller keeps every pass's result, and a retained engine (a million used
    // order ids) would make the next pass's garbage collection — and so its ops/s — worse.
    return untimedPass(() => {
      for (let i = 0; i < n; i++) engine.apply(cmds[i]);
    });
  }
  gcNow();
  const lat = new Float64Array(n);
  const tally = new ResultTally();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const cmd = cmds[i];
    const s = process.hrtime.bigint();
    const r = engine.apply(cmd);
    lat[i] = Number(process.hrtime.bigint() - s);
    tally.add(cmd, r);
  }
  // The tally runs between commands, outside each command's timing but inside the pass's wall time.
  return { elapsedNs: Number(process.hrtime.bigint() - t0), lat, notes: tally.notes(), tally, engine };
}

// ---------------------------------------------------------------- (c) engine + sequencer + SQLite journal

/** Where (c)'s journal commits run, as the app's JOURNAL_WRITER: thread (default) or inline. */
export const JOURNAL_WRITER = process.env.BENCH_JOURNAL_WRITER === 'inline' ? 'inline' : 'thread';
/** (c): event-loop turns of submissions that may await durability at once (BENCH_BATCHES_IN_FLIGHT). */
export const BATCHES_IN_FLIGHT = Math.max(1, Number(process.env.BENCH_BATCHES_IN_FLIGHT ?? 4));

export interface JournalPassResult extends PassResult {
  tally: ResultTally;
  flushes: number;
  flushedCommands: number;
  flushP99Ms: number;
  journalBytes: number;
}

export type JournalOpener = (file: string) => Promise<CommandJournal>;

/** The app's default (JOURNAL_WRITER=thread) commits on a writer thread; BENCH_JOURNAL_WRITER=inline measures the event-loop writer. */
export const openBenchJournal: JournalOpener = (file) => (JOURNAL_WRITER === 'inline' ? openSqliteJournal : openThreadedSqliteJournal)({ file });

/**
 * Submits the stream to a Sequencer over a fresh journal in a temporary directory (by default the app's SQLite
 * journal: WAL, synchronous=FULL, one fsync per group commit; c-breakdown.ts passes others), `inflight`
 * commands per event-loop turn without awaiting each one, up to BATCHES_IN_FLIGHT turns outstanding; every
 * promise gets a handler, as a gateway's would. Latency = submit → acknowledgement (durable).
 */
export async function journalPass(
  create: EngineFactory, users: number, cmds: Command[], inflight: number, openJournal: JournalOpener = openBenchJournal,
): Promise<JournalPassResult> {
  const dir = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'perpx-bench-'));
  const file = join(dir, 'journal.db');
  const journal = await openJournal(file);
  const engine = create();
  let clockTs = BASE_TS;
  let fatal: Error | undefined;
  const seq = new Sequencer({
    engine,
    journal,
    clock: () => clockTs,
    logger: pino({ level: 'silent' }),
    onFatal: (err) => {
      fatal = err;
    },
  });
  try {
    let last: Promise<CommandResult> | undefined;
    for (const c of setupCommands(users)) {
      clockTs = c.ts;
      last = seq.submit(c);
    }
    await last;

    const n = cmds.length;
    const submitAt = new Float64Array(n);
    const lat = new Float64Array(n);
    const tally = new ResultTally();
    let acked = 0;
    let firstError: unknown;
    const onErr = (err: unknown): void => {
      firstError ??= err;
    };
    gcNow();
    const flushes0 = seq.stats.flushes;
    const flushed0 = seq.stats.flushedCommands;
    const cpu = cpuMeter();
    const t0 = performance.now();
    // A gateway with many clients keeps submitting while earlier groups are being made durable: up to
    // BATCHES_IN_FLIGHT turns of `inflight` commands are outstanding, so the event loop does not idle through
    // each fsync (the writer thread commits one group while the next is applied).
    const outstanding: Array<Promise<unknown>> = [];
    for (let start = 0; start < n && firstError === undefined && fatal === undefined; start += inflight) {
      const end = Math.min(n, start + inflight);
      let p: Promise<CommandResult> | undefined;
      for (let i = start; i < end; i++) {
        const cmd = cmds[i];
        clockTs = cmd.ts;
        submitAt[i] = performance.now();
        p = seq.submit(cmd);
        p.then((r) => {
          acked++;
          // Kept light (a gateway just serializes the reply): only refusals and rejections are tallied.
          if (!r.reply.ok || r.reply.order?.status === 'REJECTED') tally.add(cmd, r);
        }, onErr);
      }
      // Acknowledgements come in seq order: the turn's last one stamps the whole turn.
      outstanding.push(p!.then(() => {
        const ackedAt = performance.now();
        for (let i = start; i < end; i++) lat[i] = (ackedAt - submitAt[i]) * 1e6;
      }, () => undefined));
      if (outstanding.length >= BATCHES_IN_FLIGHT) await outstanding.shift();
      // Every turn is its own event-loop turn, as a gateway's requests arrive (awaiting a turn that is already
      // acknowledged does not yield: without this, turns ran back to back and merged into one group).
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await Promise.all(outstanding);
    const elapsedMs = performance.now() - t0;
    const cpuUsed = cpu();
    if (firstError !== undefined || fatal !== undefined) throw firstError ?? fatal;
    if (acked !== n) throw new Error(`only ${acked} of ${n} commands acknowledged`);
    const { statSync } = await import('node:fs');
    let journalBytes = 0;
    for (const f of [file, `${file}-wal`]) {
      try {
        journalBytes += statSync(f).size;
      } catch {
        /* no wal */
      }
    }
    const flushes = seq.stats.flushes - flushes0;
    return {
      elapsedNs: elapsedMs * 1e6,
      ...cpuUsed,
      lat,
      notes: { refused: tally.refusedTotal, 'rejected orders': tally.rejectedTotal },
      tally,
      flushes,
      flushedCommands: seq.stats.flushedCommands - flushed0,
      flushP99Ms: seq.stats.flushLatency.quantile(0.99) * 1000,
      journalBytes,
    };
  } finally {
    await seq.stop().catch(() => undefined);
    await journal.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}
