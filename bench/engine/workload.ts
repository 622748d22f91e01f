/**
 * The benchmark's seeded order stream, generated once up front and shared by every run.
 *
 * Stored compactly (typed arrays + one id string per order) so a few million operations do not leave a
 * large object graph in the heap while the runs are measured; each run turns it into its own input
 * objects (engine commands, peer calls) before its timed loop.
 *
 * Cancels always name an order that is resting at that point: the generator replays the stream through a
 * reference price-time book (the product's own `OrderBook` + `matchBare`) and picks the victim among the
 * orders still resting there. An implementation with the same matching rules therefore finds every
 * cancelled order; a difference shows up as "cancel: not found" in the run's notes.
 */
import { parseUnits, type Units } from '../../src/domain/fixed.js';
import { DEMO_INSTRUMENTS, DEMO_START_PRICES } from '../../src/domain/instrument.js';
import { orderIdPrefix } from '../../src/domain/order-id.js';
import { matchBare, OrderBook, type BookOrder, type PriceLevel } from '../../src/engine/order-book.js';
import { mulberry32 } from '../../src/simulation/seeded-random.js';

/**
 * A v2 order id as a flat string. (A template literal would make a ConsString, which V8 flattens into a
 * second copy the first time it is hashed: ids parsed from a request body are flat, so the heap and
 * hashing costs would be off.)
 */
export function orderId(prefix: string, n: number): string {
  return [prefix, n.toString(16).padStart(26, '0')].join(':');
}


export const OP_LIMIT = 0;
export const OP_CANCEL = 1;
/** LIMIT + IOC at an aggressive price. */
export const OP_IOC = 2;
/** MARKET (IOC) order. */
export const OP_MARKET = 3;

/** Kinds of idOps entries. */
export const ID_SET = 0;
export const ID_CANCEL = 1;
export const ID_FILLED = 2;

export interface InstrumentSpec {
  id: string;
  /** Units per price tick / quantity lot. */
  tick: Units;
  lot: Units;
  /** Start price in ticks (the fixed mid the flow is centred on). */
  midTicks: number;
  startPrice: Units;
}

export const INSTRUMENTS: InstrumentSpec[] = DEMO_INSTRUMENTS.map((c) => {
  const tick = parseUnits(c.priceIncrement);
  const startPrice = parseUnits(DEMO_START_PRICES[c.id]);
  return { id: c.id, tick, lot: parseUnits(c.quantityIncrement), midTicks: startPrice / tick, startPrice };
});

/** Command time base: a fixed date, so order-id prefixes (days since 2025-07-24) are stable. */
export const BASE_TS = Date.UTC(2026, 10, 22);

export interface WorkloadOptions {
  ops: number;
  seed: number;
  users: number;
  /** First command ts (ms); op i gets tsStart + i. */
  tsStart: number;
  /** Order-id counter offset, so streams generated for different runs never share ids. */
  idBase: number;
}

export interface Workload {
  n: number;
  op: Uint8Array;
  inst: Uint8Array;
  /** 1 = buy. For a cancel: the side of the cancelled order. */
  bid: Uint8Array;
  /** Owner (1-based). For a cancel: the owner of the cancelled order. */
  user: Uint16Array;
  /** Price in Units (LIMIT/IOC; 0 for MARKET and cancel). */
  price: Float64Array;
  /** Quantity in Units (0 for cancel). */
  qty: Float64Array;
  /**
   * MARKET only: notional (Units of USDT, 1e-8) of the fills the reference book produced for it, so an
   * implementation that sizes market orders by cash spends the same amount.
   */
  notional: Float64Array;
  /** Order id (v2). For a cancel: the id of the cancelled order. */
  id: string[];
  /** Integer handle of the order: the index of the op that placed it (for a cancel: of the cancelled order). */
  ref: Int32Array;
  /**
   * The id → order work of a book that keeps its resting orders in a map by id, in stream order: each entry is
   * (index of the op that placed the order) × 4 + ID_SET (it rests), ID_CANCEL (it is cancelled) or ID_FILLED
   * (it filled as a maker). Used by (a)'s ceiling run.
   */
  idOps: Int32Array;
  ts: Float64Array;
  counts: { limit: number; cancel: number; ioc: number; market: number; fills: number; restingAtEnd: number };
}

/**
 * The book node of every bench-side book (the reference book here, (a) and its integer-handle variant): one
 * class, so the book's property accesses see one node shape besides the engine's OrderState.
 */
export class BenchOrder implements BookOrder {
  prev: BookOrder | null = null;
  next: BookOrder | null = null;
  level: PriceLevel | null = null;
  /** Position in the generator's live array (for O(1) removal); unused elsewhere. */
  slot = -1;
  constructor(
    readonly id: string,
    /** Index of the op that placed it. */
    readonly ref: number,
    public price: Units,
    public remaining: Units,
  ) {}
}

/** Exponential with the given mean, floored (ticks from the touch). */
function expTicks(rnd: () => number, mean: number): number {
  return Math.floor(-Math.log(1 - rnd()) * mean);
}

/**
 * Mix: 55% limit (GTC; 10% of them marketable), 35% cancel, 10% taker (half LIMIT IOC, half MARKET).
 * Prices centre on the instruments' start prices, so the book stays two-sided and fills keep happening.
 */
export function generateWorkload(o: WorkloadOptions): Workload {
  const n = o.ops;
  const rnd = mulberry32(o.seed);
  const w: Workload = {
    n,
    op: new Uint8Array(n),
    inst: new Uint8Array(n),
    bid: new Uint8Array(n),
    user: new Uint16Array(n),
    price: new Float64Array(n),
    qty: new Float64Array(n),
    notional: new Float64Array(n),
    id: new Array<string>(n),
    ref: new Int32Array(n),
    idOps: new Int32Array(0),
    ts: new Float64Array(n),
    counts: { limit: 0, cancel: 0, ioc: 0, market: 0, fills: 0, restingAtEnd: 0 },
  };
  const books = INSTRUMENTS.map((spec) => new OrderBook(spec.tick));
  const live: BenchOrder[] = [];
  const idOps: number[] = [];
  const prefix = orderIdPrefix(o.tsStart);
  if (orderIdPrefix(o.tsStart + n) !== prefix) throw new Error('stream crosses midnight: lower BENCH_OPS or move tsStart');
  let idCounter = o.idBase;
  let fillNotional = 0;

  const dropLive = (r: BenchOrder): void => {
    const last = live.pop()!;
    if (last !== r) {
      live[r.slot] = last;
      last.slot = r.slot;
    }
    r.slot = -1;
  };
  const onFill = (maker: BookOrder, q: Units, price: Units): void => {
    w.counts.fills++;
    fillNotional += (q / 1e8) * price; // Units of USDT (only used to size market orders by cash)
    if (q === maker.remaining) {
      idOps.push((maker as BenchOrder).ref * 4 + ID_FILLED);
      dropLive(maker as BenchOrder);
    }
  };

  for (let i = 0; i < n; i++) {
    w.ts[i] = o.tsStart + i;
    const r = rnd();
    let kind = r < 0.55 ? OP_LIMIT : r < 0.9 ? OP_CANCEL : r < 0.95 ? OP_IOC : OP_MARKET;
    if (kind === OP_CANCEL && live.length === 0) kind = OP_LIMIT;
    w.op[i] = kind;

    if (kind === OP_CANCEL) {
      const victim = live[Math.floor(rnd() * live.length)];
      const v = victim.ref;
      w.inst[i] = w.inst[v];
      w.bid[i] = w.bid[v];
      w.user[i] = w.user[v];
      w.id[i] = w.id[v];
      w.ref[i] = v;
      books[w.inst[v]].side(w.bid[v] === 1).remove(victim);
      dropLive(victim);
      idOps.push(v * 4 + ID_CANCEL);
      w.counts.cancel++;
      continue;
    }

    const ii = rnd() < 0.5 ? 0 : 1;
    const spec = INSTRUMENTS[ii];
    const isBid = rnd() < 0.5;
    const dir = isBid ? 1 : -1;
    const lots = 1 + Math.floor(rnd() * 10);
    w.inst[i] = ii;
    w.bid[i] = isBid ? 1 : 0;
    w.user[i] = 1 + Math.floor(rnd() * o.users);
    w.qty[i] = lots * spec.lot;
    w.id[i] = orderId(prefix, idCounter++);
    w.ref[i] = i;
    const book = books[ii];

    if (kind === OP_LIMIT) {
      w.counts.limit++;
      // 10% marketable (up to 20 ticks through the mid), the rest passive (exponential distance, mean 40 ticks).
      const ticks = rnd() < 0.1
        ? spec.midTicks + dir * (1 + Math.floor(rnd() * 20))
        : spec.midTicks - dir * (1 + expTicks(rnd, 40));
      const price = ticks * spec.tick;
      w.price[i] = price;
      const left = matchBare(book, isBid, price, w.qty[i], onFill);
      if (left > 0) {
        const ro = new BenchOrder(w.id[i], i, price, left);
        book.side(isBid).add(ro);
        ro.slot = live.length;
        live.push(ro);
        idOps.push(i * 4 + ID_SET);
      }
    } else if (kind === OP_IOC) {
      w.counts.ioc++;
      const price = (spec.midTicks + dir * 50) * spec.tick;
      w.price[i] = price;
      matchBare(book, isBid, price, w.qty[i], onFill);
    } else {
      w.counts.market++;
      fillNotional = 0;
      matchBare(book, isBid, isBid ? Number.MAX_SAFE_INTEGER : 0, w.qty[i], onFill);
      w.notional[i] = Math.round(fillNotional);
    }
  }
  w.counts.restingAtEnd = live.length;
  w.idOps = Int32Array.from(idOps);
  return w;
}

/** Setup for the heap run: `count` non-crossing GTC limits on both instruments, `users` owners. */
export interface RestingSpec {
  inst: number;
  bid: boolean;
  user: number;
  price: Units;
  qty: Units;
  id: string;
}

export function restingOrderAt(i: number, rnd: () => number, users: number, prefix: string, idBase: number): RestingSpec {
  const ii = i & 1;
  const spec = INSTRUMENTS[ii];
  const bid = rnd() < 0.5;
  // 1..2000 ticks away from the mid on the passive side: never crosses.
  const ticks = spec.midTicks + (bid ? -1 : 1) * (1 + Math.floor(rnd() * 2000));
  return {
    inst: ii,
    bid,
    user: 1 + Math.floor(rnd() * users),
    price: ticks * spec.tick,
    qty: (1 + Math.floor(rnd() * 10)) * spec.lot,
    id: orderId(prefix, idBase + i),
  };
}
