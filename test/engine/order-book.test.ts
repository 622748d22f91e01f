/**
 * The order book (src/engine/order-book.ts) against a plain reference model: random add / remove / reduce /
 * match sequences (fast-check) must give the same best prices, levels, FIFO order within a level, depth and
 * fills. Prices are drawn near a mid (the ladder's fast path), far away (growth, re-basing, the sorted
 * fallback), and off the tick grid (the tick shrinks by gcd), with and without a tick hint.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { matchBare, MAX_SLOTS, OrderBook, type BookOrder, type BookSide, type PriceLevel } from '../../src/engine/order-book.js';

class Node implements BookOrder {
  prev: BookOrder | null = null;
  next: BookOrder | null = null;
  level: PriceLevel | null = null;
  constructor(readonly id: number, public price: number, public remaining: number, readonly isBid: boolean) {}
}

/** Reference: live orders in arrival order; best = highest bid / lowest ask, FIFO among equals. */
class Model {
  orders: Node[] = [];

  side(isBid: boolean): Node[] {
    return this.orders.filter((o) => o.isBid === isBid);
  }

  /** Levels best last, as BookSide.levels: [price, total, count, ids in FIFO]. */
  levels(isBid: boolean): Array<[number, number, number, number[]]> {
    const byPrice = new Map<number, Node[]>();
    for (const o of this.side(isBid)) {
      let l = byPrice.get(o.price);
      if (!l) byPrice.set(o.price, (l = []));
      l.push(o);
    }
    const prices = [...byPrice.keys()].sort((a, b) => (isBid ? a - b : b - a));
    return prices.map((p) => {
      const l = byPrice.get(p)!;
      return [p, l.reduce((s, o) => s + o.remaining, 0), l.length, l.map((o) => o.id)];
    });
  }

  /** Same contract as matchBare: fills (maker id, qty, price) in price-time order, returns what is left. */
  match(takerIsBid: boolean, limit: number, quantity: number, fills: Array<[number, number, number]>): number {
    let left = quantity;
    while (left > 0) {
      const lv = this.levels(!takerIsBid);
      if (lv.length === 0) break;
      const [price, , , ids] = lv[lv.length - 1];
      if (takerIsBid ? price > limit : price < limit) break;
      for (const id of ids) {
        if (left === 0) break;
        const o = this.orders.find((x) => x.id === id)!;
        const q = Math.min(o.remaining, left);
        left -= q;
        fills.push([id, q, price]);
        o.remaining -= q;
        if (o.remaining === 0) this.orders.splice(this.orders.indexOf(o), 1);
      }
    }
    return left;
  }
}

function bookLevels(side: BookSide): Array<[number, number, number, number[]]> {
  return side.levels.map((lv) => {
    const ids: number[] = [];
    for (let o = lv.head; o !== null; o = o.next) ids.push((o as Node).id);
    return [lv.price, lv.total, lv.count, ids];
  });
}

type Op =
  | { k: 'add'; bid: boolean; where: number; dist: number; qty: number }
  | { k: 'remove'; pick: number }
  | { k: 'reduce'; pick: number; frac: number }
  | { k: 'match'; bid: boolean; dist: number; qty: number };

const TICK = 1_000_000;
const MID = 100_000 * TICK;

/** Price for an add: mostly near the mid, sometimes far (beyond the ladder's limit), sometimes off-grid. */
function priceOf(bid: boolean, where: number, dist: number): number {
  const dir = bid ? -1 : 1;
  switch (where) {
    case 0: return MID + dir * (1 + (dist % 60)) * TICK; // passive, near
    case 1: return MID - dir * (dist % 5) * TICK; // marketable-ish
    case 2: { // far: beyond the ladder's limit, around its fallback thresholds, or just outside the first ladder
      const ticks = dist % 3 === 0 ? MAX_SLOTS + dist : dist % 3 === 1 ? (MAX_SLOTS >> 2) + (dist % (MAX_SLOTS >> 1)) : 600 + (dist % 5000);
      return MID + dir * ticks * TICK;
    }
    case 3: return MID + dir * ((1 + (dist % 40)) * TICK + (dist % 2 === 0 ? TICK / 2 : TICK / 5)); // off the hint's grid
    default: return MID + dir * (dist % 7) * TICK * 3;
  }
}

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ k: fc.constant('add' as const), bid: fc.boolean(), where: fc.nat(4), dist: fc.nat(1_000_000), qty: fc.integer({ min: 1, max: 20 }) }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('remove' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('reduce' as const), pick: fc.nat(), frac: fc.double({ min: 0, max: 0.99, noNaN: true }) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('match' as const), bid: fc.boolean(), dist: fc.integer({ min: -80, max: 80 }), qty: fc.integer({ min: 1, max: 60 }) }) },
);

function run(ops: Op[], tickHint: number): void {
  const book = new OrderBook(tickHint);
  const model = new Model();
  let id = 0;
  for (const op of ops) {
    if (op.k === 'add') {
      const price = priceOf(op.bid, op.where, op.dist);
      // Only resting (non-crossing) orders are added directly, as the engine does.
      const opp = op.bid ? book.bestAsk() : book.bestBid();
      if (opp !== undefined && (op.bid ? price >= opp : price <= opp)) continue;
      const n = new Node(++id, price, op.qty, op.bid);
      book.side(op.bid).add(n);
      model.orders.push(n);
    } else if (op.k === 'remove' || op.k === 'reduce') {
      if (model.orders.length === 0) continue;
      const n = model.orders[op.pick % model.orders.length];
      if (op.k === 'remove') {
        book.side(n.isBid).remove(n);
        model.orders.splice(model.orders.indexOf(n), 1);
      } else {
        const by = Math.floor(n.remaining * op.frac);
        if (by > 0 && by < n.remaining) book.side(n.isBid).reduce(n, by);
      }
    } else {
      const limit = MID + op.dist * TICK;
      const got: Array<[number, number, number]> = [];
      // The model mutates the same nodes' `remaining`, so it runs on copies of the numbers first.
      const snapshot = model.orders.map((o) => [o, o.remaining] as const);
      const want: Array<[number, number, number]> = [];
      const wantLeft = model.match(op.bid, limit, op.qty, want);
      const modelAfter = model.orders.slice();
      for (const [o, r] of snapshot) o.remaining = r;
      const left = matchBare(book, op.bid, limit, op.qty, (m, q, p) => got.push([(m as Node).id, q, p]));
      assert.deepEqual(got, want);
      assert.equal(left, wantLeft);
      for (const [o] of snapshot) if (o.remaining === 0) assert.equal(o.level, null);
      model.orders = modelAfter;
    }
    for (const bid of [true, false]) {
      const side = book.side(bid);
      const want = model.levels(bid);
      assert.deepEqual(bookLevels(side), want);
      assert.equal(side.size, want.length);
      assert.equal(side.best()?.price, want.length ? want[want.length - 1][0] : undefined);
      for (const [p, total] of want) assert.equal(side.level(p)?.total, total);
      assert.equal(side.level(MID + 7), undefined);
      assert.deepEqual([...side.orders()].map((o) => (o as Node).id), want.slice().reverse().flatMap((l) => l[3]));
      assert.deepEqual(side.depth(5, 0), want.slice().reverse().slice(0, 5).map(([price, quantity]) => ({ price, quantity })));
      const walked: number[] = [];
      for (let lv = side.best(); lv !== undefined; lv = side.worse(lv)) walked.push(lv.price);
      assert.deepEqual(walked, want.map((l) => l[0]).reverse());
    }
    assert.equal(book.isCrossed(), false);
  }
}

describe('order book vs a reference model', () => {
  it('random add/remove/reduce/match sequences, tick hint given', () => {
    fc.assert(fc.property(fc.array(opArb, { maxLength: 120 }), (ops) => run(ops, TICK)), { numRuns: 300 });
  });
  it('random sequences, no tick hint (inferred by gcd)', () => {
    fc.assert(fc.property(fc.array(opArb, { maxLength: 120 }), (ops) => run(ops, 0)), { numRuns: 300 });
  });
  it('random sequences, a wrong (too coarse) tick hint', () => {
    fc.assert(fc.property(fc.array(opArb, { maxLength: 120 }), (ops) => run(ops, TICK * 10)), { numRuns: 150 });
  });
});

describe('order book ladder', () => {
  it('falls back to the sorted levels for a far price and returns to the ladder when the span shrinks', () => {
    const book = new OrderBook(TICK);
    const near = new Node(1, MID - TICK, 5, true);
    const far = new Node(2, MID - (MAX_SLOTS + 10) * TICK, 5, true);
    book.bids.add(near);
    assert.equal(book.bids.mode.kind, 'ladder');
    book.bids.add(far);
    assert.equal(book.bids.mode.kind, 'sorted');
    assert.equal(book.bestBid(), MID - TICK);
    book.bids.remove(far);
    assert.equal(book.bids.mode.kind, 'ladder');
    assert.equal(book.bestBid(), MID - TICK);
    assert.deepEqual(book.bids.levels.map((l) => l.price), [MID - TICK]);
  });

  it('keeps far-away prices cheap in memory (no ladder spanning them)', () => {
    const book = new OrderBook(1);
    book.asks.add(new Node(1, 10, 1, false));
    book.asks.add(new Node(2, Number.MAX_SAFE_INTEGER - 1, 1, false));
    assert.ok(book.asks.mode.slots <= MAX_SLOTS);
    assert.equal(book.bestAsk(), 10);
    assert.equal(matchBare(book, true, Number.MAX_SAFE_INTEGER, 5), 3);
    assert.equal(book.bestAsk(), undefined);
  });

  it('infers the tick from the prices and shrinks it for an off-grid price', () => {
    const book = new OrderBook();
    book.bids.add(new Node(1, 1000, 1, true));
    book.bids.add(new Node(2, 1300, 1, true));
    assert.equal(book.bids.mode.tick, 100);
    book.bids.add(new Node(3, 1310, 1, true));
    assert.equal(book.bids.mode.tick, 10);
    assert.deepEqual(book.bids.levels.map((l) => l.price), [1000, 1300, 1310]);
    assert.equal(book.bids.level(1300)?.count, 1);
  });

  it('an odd price that shrank the tick is forgotten once the side is empty again', () => {
    const book = new OrderBook(TICK);
    const odd = new Node(1, MID + 1, 1, true); // off the grid: the tick shrinks to 1 unit
    const near = new Node(2, MID - 5000 * TICK, 1, true); // 5e9 units away: too wide a ladder at that tick
    book.bids.add(odd);
    book.bids.add(near);
    assert.equal(book.bids.mode.kind, 'sorted');
    book.bids.remove(odd);
    book.bids.remove(near);
    book.bids.add(new Node(3, MID - TICK, 1, true));
    book.bids.add(new Node(4, MID - 3000 * TICK, 1, true));
    assert.deepEqual(book.bids.mode, { kind: 'ladder', slots: book.bids.mode.slots, tick: TICK });
    assert.equal(book.bestBid(), MID - TICK);
  });

  it('a price level emptied and refilled keeps FIFO and totals right', () => {
    const book = new OrderBook(1);
    const a = new Node(1, 100, 3, false);
    book.asks.add(a);
    book.asks.remove(a);
    assert.equal(book.asks.size, 0);
    assert.equal(book.asks.level(100), undefined);
    const b = new Node(2, 100, 4, false);
    const c = new Node(3, 100, 6, false);
    book.asks.add(b);
    book.asks.add(c);
    assert.equal(book.asks.level(100)?.total, 10);
    assert.equal(book.asks.best()?.head, b);
  });
});
