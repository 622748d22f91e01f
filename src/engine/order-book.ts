/**
 * Price-time priority order book for one instrument.
 *
 * Hand-written (not a library) because it is the product's hot path: prices are safe-integer Units, each
 * side keeps its price levels in an array sorted so the BEST level is LAST (exhausting the best level is
 * an O(1) pop), a Map finds a level by price, and each level is an intrusive doubly-linked FIFO of its
 * orders (O(1) add, cancel and in-place size decrease). See bench/engine.bench.ts for its numbers.
 */
import type { Units } from '../domain/fixed.js';

export interface BookOrder {
  price: Units;
  /** Quantity still resting. */
  remaining: Units;
  /** Time priority (engine sequence), used only to restore snapshots in order. */
  prev: BookOrder | null;
  next: BookOrder | null;
  level: PriceLevel | null;
}

export class PriceLevel {
  total: Units = 0;
  count = 0;
  head: BookOrder | null = null;
  tail: BookOrder | null = null;
  constructor(readonly price: Units) {}
}

export class BookSide {
  /** Sorted so the best price is last: bids ascending, asks descending. */
  readonly levels: PriceLevel[] = [];
  private readonly byPrice = new Map<Units, PriceLevel>();

  constructor(readonly isBid: boolean) {}

  get size(): number {
    return this.levels.length;
  }

  best(): PriceLevel | undefined {
    return this.levels[this.levels.length - 1];
  }

  level(price: Units): PriceLevel | undefined {
    return this.byPrice.get(price);
  }

  /** Appends the order at the tail of its price level (lowest time priority). */
  add(order: BookOrder): void {
    let level = this.byPrice.get(order.price);
    if (level === undefined) {
      level = new PriceLevel(order.price);
      this.byPrice.set(order.price, level);
      this.insertLevel(level);
    }
    order.level = level;
    order.prev = level.tail;
    order.next = null;
    if (level.tail) level.tail.next = order;
    else level.head = order;
    level.tail = order;
    level.total += order.remaining;
    level.count++;
  }

  /** Unlinks the order; drops its level when it becomes empty. */
  remove(order: BookOrder): void {
    const level = order.level;
    if (level === null) return;
    if (order.prev) order.prev.next = order.next;
    else level.head = order.next;
    if (order.next) order.next.prev = order.prev;
    else level.tail = order.prev;
    level.total -= order.remaining;
    level.count--;
    order.prev = order.next = null;
    order.level = null;
    if (level.count === 0) this.dropLevel(level);
  }

  /** Reduces a resting order's quantity in place (keeps time priority). */
  reduce(order: BookOrder, by: Units): void {
    order.remaining -= by;
    if (order.level) order.level.total -= by;
  }

  private insertLevel(level: PriceLevel): void {
    const arr = this.levels;
    const p = level.price;
    // Binary search for the insertion point; most inserts land near the end (near the best price).
    let lo = 0;
    let hi = arr.length;
    if (this.isBid) {
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (arr[mid].price < p) lo = mid + 1;
        else hi = mid;
      }
    } else {
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (arr[mid].price > p) lo = mid + 1;
        else hi = mid;
      }
    }
    if (lo === arr.length) arr.push(level);
    else arr.splice(lo, 0, level);
  }

  private dropLevel(level: PriceLevel): void {
    this.byPrice.delete(level.price);
    const arr = this.levels;
    const last = arr.length - 1;
    if (arr[last] === level) {
      arr.pop();
      return;
    }
    let lo = 0;
    let hi = arr.length;
    const p = level.price;
    if (this.isBid) {
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (arr[mid].price < p) lo = mid + 1;
        else hi = mid;
      }
    } else {
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (arr[mid].price > p) lo = mid + 1;
        else hi = mid;
      }
    }
    arr.splice(lo, 1);
  }

  /** Levels from best to worse, aggregated into buckets of `grouping` Units (0 = raw levels). */
  depth(maxLevels: number, grouping: Units): Array<{ price: Units; quantity: Units }> {
    const out: Array<{ price: Units; quantity: Units }> = [];
    const arr = this.levels;
    for (let i = arr.length - 1; i >= 0; i--) {
      const lv = arr[i];
      // Bids round down, asks round up, so a grouped level never looks better than the real book.
      const price = grouping > 0
        ? (this.isBid ? Math.floor(lv.price / grouping) * grouping : Math.ceil(lv.price / grouping) * grouping)
        : lv.price;
      const last = out[out.length - 1];
      if (last && last.price === price) last.quantity += lv.total;
      else {
        if (out.length === maxLevels) break;
        out.push({ price, quantity: lv.total });
      }
    }
    return out;
  }

  /** Every resting order, best level first, FIFO within a level. */
  *orders(): IterableIterator<BookOrder> {
    for (let i = this.levels.length - 1; i >= 0; i--) {
      for (let o = this.levels[i].head; o !== null; o = o.next) yield o;
    }
  }
}

export class OrderBook {
  readonly bids = new BookSide(true);
  readonly asks = new BookSide(false);

  side(isBid: boolean): BookSide {
    return isBid ? this.bids : this.asks;
  }

  bestBid(): Units | undefined {
    return this.bids.best()?.price;
  }

  bestAsk(): Units | undefined {
    return this.asks.best()?.price;
  }

  isCrossed(): boolean {
    const b = this.bids.best();
    const a = this.asks.best();
    return b !== undefined && a !== undefined && b.price >= a.price;
  }
}

/**
 * The bare matching loop (no margin, no accounts): a taker of `quantity` at `limit` against the opposite
 * side, price-time priority, returning the quantity left. Used by the benchmark's "bare book" run and by
 * the engine's FOK pre-check to measure liquidity (with `dryRun`).
 */
export function matchBare(
  book: OrderBook,
  takerIsBid: boolean,
  limit: Units,
  quantity: Units,
  onFill?: (maker: BookOrder, qty: Units, price: Units) => void,
): Units {
  const opposite = takerIsBid ? book.asks : book.bids;
  let left = quantity;
  while (left > 0) {
    const level = opposite.best();
    if (level === undefined) break;
    if (takerIsBid ? level.price > limit : level.price < limit) break;
    let maker = level.head;
    while (maker !== null && left > 0) {
      const next = maker.next;
      const q = maker.remaining < left ? maker.remaining : left;
      left -= q;
      if (onFill) onFill(maker, q, level.price);
      if (q === maker.remaining) opposite.remove(maker);
      else opposite.reduce(maker, q);
      maker = next;
    }
  }
  return left;
}
