// Over 400 lines: the price ladder and its sorted-array fallback share every level operation, kept together.
/**
 * Price-time priority order book for one instrument.
 *
 * Hand-written (not a library) because it is the product's hot path. Prices are safe-integer Units; each
 * price level is an intrusive doubly-linked FIFO of its orders (O(1) add, cancel and in-place size
 * decrease). Each side finds its levels through a price LADDER: an array indexed by the distance in ticks
 * from a base price, oriented so a higher index is a better price (bids: price = base + i·tick; asks:
 * price = base − i·tick), with a bitset of the non-empty slots and the index of the best one. Adding at a
 * known price, cancelling, and finding the next-best level after the best empties (a scan of the bitset,
 * 32 slots per word) involve no hashing and no array splicing; a slot keeps its PriceLevel object when the
 * level empties, so a price that comes back reuses it.
 *
 * The tick does not have to be known: the book starts from the tick it is given (if any) and divides it
 * by a gcd whenever a price is off the grid, re-indexing the ladder. The ladder grows (and re-bases) to
 * cover the prices present, up to LADDER_SPAN ticks from the worst level to the best (MAX_SLOTS slots); a
 * side whose prices span more than that (a stink bid far from the market) falls back to a sorted array of
 * levels + a Map by price (best last), the previous design, until its span shrinks to RETURN_SLOTS again.
 * An empty side starts again from the tick hint. See bench/engine.bench.ts for the numbers.
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
  /** Ladder slot (internal to BookSide; −1 in the sorted fallback). */
  slot = -1;
  constructor(readonly price: Units) {}
}

/** Ladder size limits (slots per side): a ladder has at most MAX_SLOTS slots (1 MB of pointers). */
const INITIAL_SLOTS = 1 << 10;
export const MAX_SLOTS = 1 << 18;
/**
 * A side whose prices span more ticks than this uses the sorted fallback; it comes back to a ladder once the
 * span is at most RETURN_SLOTS (hysteresis: placing and cancelling one far order does not rebuild big ladders).
 * A ladder has twice its span in slots, so the next growth is at least half the span away.
 */
const LADDER_SPAN = MAX_SLOTS >> 1;
const RETURN_SLOTS = MAX_SLOTS >> 2;

function gcd(a: number, b: number): number {
  a = Math.abs(a);
  b = Math.abs(b);
  while (b !== 0) {
    const t = a % b;
    a = b;
    b = t;
  }
  return a;
}

function emptySlots(n: number): Array<PriceLevel | null> {
  return new Array<PriceLevel | null>(n).fill(null);
}

export class BookSide {
  /** Price grid (Units); 0 until the first price is seen when the book was not told the tick. */
  private tick: Units;
  /** tick for bids, −tick for asks: price of slot i = base + i·stride (higher i = better). */
  private stride: Units;
  /** Price of slot 0 (the worst end of the ladder). */
  private base: Units = 0;
  private cap = INITIAL_SLOTS;
  private slots: Array<PriceLevel | null> = emptySlots(INITIAL_SLOTS);
  /** Bit i set = slot i holds a non-empty level. */
  private bits = new Int32Array(INITIAL_SLOTS >> 5);
  /** Slot of the best non-empty level; −1 when the side is empty. */
  private bestSlot = -1;
  /** Non-empty levels (ladder mode). */
  private count = 0;
  /** The sorted fallback (best last) and its index by price; null while the ladder is in use. */
  private sorted: PriceLevel[] | null = null;
  private byPrice: Map<Units, PriceLevel> | null = null;
  /** `levels` as last built from the ladder; null when a level has appeared or emptied since. */
  private levelsCache: PriceLevel[] | null = null;

  /** The tick the side was given (0 = none). */
  private readonly tickHint: Units;

  constructor(readonly isBid: boolean, tick: Units = 0) {
    this.tickHint = tick > 0 && Number.isSafeInteger(tick) ? tick : 0;
    this.tick = this.tickHint;
    this.stride = isBid ? this.tick : -this.tick;
  }

  /** Number of non-empty price levels. */
  get size(): number {
    return this.sorted === null ? this.count : this.sorted.length;
  }

  /** The non-empty levels sorted so the best is LAST (bids ascending, asks descending). Do not modify. */
  get levels(): readonly PriceLevel[] {
    if (this.sorted !== null) return this.sorted;
    if (this.levelsCache === null) this.levelsCache = this.buildLevels();
    return this.levelsCache;
  }

  best(): PriceLevel | undefined {
    if (this.sorted === null) return this.bestSlot < 0 ? undefined : this.slots[this.bestSlot]!;
    return this.sorted[this.sorted.length - 1];
  }

  /** The non-empty level at `price`, if any. */
  level(price: Units): PriceLevel | undefined {
    if (this.sorted !== null) return this.byPrice!.get(price);
    const d = price - this.base;
    const i = d / this.stride;
    if (i >= 0 && i < this.cap && (i | 0) === i && i * this.stride === d) {
      const lv = this.slots[i];
      if (lv !== null && lv.count > 0) return lv;
    }
    return undefined;
  }

  /** Appends the order at the tail of its price level (lowest time priority). */
  add(order: BookOrder): void {
    const price = order.price;
    let level: PriceLevel;
    const d = price - this.base;
    const i = d / this.stride;
    if (this.sorted === null && i >= 0 && i < this.cap && (i | 0) === i && i * this.stride === d) {
      const lv = this.slots[i];
      if (lv === null) {
        level = new PriceLevel(price);
        level.slot = i;
        this.slots[i] = level;
        this.activate(i);
      } else {
        level = lv;
        if (lv.count === 0) {
          lv.total = 0;
          this.activate(i);
        }
      }
    } else {
      level = this.levelFor(price);
    }
    order.level = level;
    const tail = level.tail;
    order.prev = tail;
    order.next = null;
    if (tail !== null) tail.next = order;
    else level.head = order;
    level.tail = order;
    level.total += order.remaining;
    level.count++;
  }

  /** Unlinks the order; a level that becomes empty leaves the side. */
  remove(order: BookOrder): void {
    const level = order.level;
    if (level === null) return;
    const prev = order.prev;
    const next = order.next;
    if (prev !== null) prev.next = next;
    else level.head = next;
    if (next !== null) next.prev = prev;
    else level.tail = prev;
    level.total -= order.remaining;
    order.prev = order.next = null;
    order.level = null;
    if (--level.count === 0) {
      if (this.sorted === null) this.deactivate(level.slot);
      else this.dropSorted(level);
    }
  }

  /** Reduces a resting order's quantity in place (keeps time priority). */
  reduce(order: BookOrder, by: Units): void {
    order.remaining -= by;
    if (order.level) order.level.total -= by;
  }

  /**
   * The next non-empty level worse than `level` (a level of this side), or undefined: with best(), walks the
   * side from the best price without building `levels`.
   */
  worse(level: PriceLevel): PriceLevel | undefined {
    if (this.sorted !== null) {
      const i = this.searchSorted(level.price); // the level's index, or where it would go
      return i > 0 ? this.sorted[i - 1] : undefined;
    }
    const s = this.slotBelow(level.slot);
    return s < 0 ? undefined : this.slots[s]!;
  }

  /** Levels from best to worse, aggregated into buckets of `grouping` Units (0 = raw levels). */
  depth(maxLevels: number, grouping: Units): Array<{ price: Units; quantity: Units }> {
    const out: Array<{ price: Units; quantity: Units }> = [];
    for (let lv = this.best(); lv !== undefined; lv = this.worse(lv)) {
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
    const levels = this.levels;
    for (let i = levels.length - 1; i >= 0; i--) {
      for (let o = levels[i].head; o !== null; o = o.next) yield o;
    }
  }

  // ------------------------------------------------------------ ladder internals

  /** Slot i now holds a non-empty level. */
  private activate(i: number): void {
    this.bits[i >> 5] |= 1 << (i & 31);
    this.count++;
    if (i > this.bestSlot) this.bestSlot = i;
    this.levelsCache = null;
  }

  /** Slot i's level became empty (the object stays in the slot for reuse). */
  private deactivate(i: number): void {
    const bits = this.bits;
    let w = i >> 5;
    bits[w] &= ~(1 << (i & 31));
    this.levelsCache = null;
    if (--this.count === 0) {
      this.bestSlot = -1;
      return;
    }
    if (i !== this.bestSlot) return;
    // Next best: highest set bit below i (there is one: every other non-empty slot is below the best).
    let word = bits[w] & ((1 << (i & 31)) - 1);
    while (word === 0) word = bits[--w];
    this.bestSlot = (w << 5) + 31 - Math.clz32(word);
  }

  /** Highest non-empty slot below slot i; −1 if none. */
  private slotBelow(i: number): number {
    const bits = this.bits;
    let w = i >> 5;
    let word = bits[w] & ((1 << (i & 31)) - 1);
    while (word === 0) {
      if (--w < 0) return -1;
      word = bits[w];
    }
    return (w << 5) + 31 - Math.clz32(word);
  }

  private buildLevels(): PriceLevel[] {
    const out: PriceLevel[] = [];
    const bits = this.bits;
    const slots = this.slots;
    for (let w = 0; w < bits.length; w++) {
      let word = bits[w];
      while (word !== 0) {
        const low = word & -word;
        out.push(slots[(w << 5) + 31 - Math.clz32(low)]!);
        word ^= low;
      }
    }
    return out;
  }

  /**
   * Slow path of add(): the price is off the ladder's grid or range, or the side is in the sorted fallback.
   * Returns the (non-empty-to-be) level for `price`, re-indexing, growing or falling back as needed.
   */
  private levelFor(price: Units): PriceLevel {
    if (this.sorted !== null) {
      if (this.sorted.length !== 0) return this.sortedLevelFor(price);
      this.sorted = this.byPrice = null; // empty: back to a ladder
    }
    // An empty side starts again from the tick it was given (an odd price may have shrunk the learnt one).
    const from = this.count === 0 ? this.tickHint : this.tick;
    let tick = from === 0 || price % from !== 0 ? gcd(from, price) : from;
    if (tick === 0) tick = 1; // first price 0 with no tick known
    if (this.count === 0) {
      // Empty side: centre a fresh ladder on the price.
      this.tick = tick;
      this.stride = this.isBid ? tick : -tick;
      this.rebuild([], price, price, INITIAL_SLOTS);
    } else {
      const levels = this.levels as PriceLevel[];
      const worst = levels[0].price;
      const bestP = levels[levels.length - 1].price;
      const lo = Math.min(worst, bestP, price);
      const hi = Math.max(worst, bestP, price);
      // The ladder's grid must hold every present price (they are multiples of the old tick).
      const span = (hi - lo) / tick + 1;
      if (span > LADDER_SPAN) {
        this.toSorted(levels);
        return this.sortedLevelFor(price);
      }
      this.tick = tick;
      this.stride = this.isBid ? tick : -tick;
      let cap = INITIAL_SLOTS;
      while (cap < span * 2 && cap < MAX_SLOTS) cap *= 2;
      this.rebuild(levels, this.isBid ? lo : hi, this.isBid ? hi : lo, cap);
    }
    // Now on the grid and in range.
    const i = (price - this.base) / this.stride;
    let level = this.slots[i];
    if (level === null) {
      level = new PriceLevel(price);
      level.slot = i;
      this.slots[i] = level;
    }
    if (level.count === 0) {
      level.total = 0;
      this.activate(i);
    }
    return level;
  }

  /**
   * New ladder of `cap` slots whose grid holds `worst`..`best` (prices), centred; `levels` (non-empty, worst
   * first) are moved into it. Empty levels are not carried over.
   */
  private rebuild(levels: readonly PriceLevel[], worst: Units, best: Units, cap: number): void {
    const span = (best - worst) / this.stride + 1;
    const margin = Math.floor((cap - span) / 2);
    this.base = worst - margin * this.stride;
    if (cap !== this.cap || this.count !== 0 || this.slots.length !== cap) {
      this.cap = cap;
      this.slots = emptySlots(cap);
      this.bits = new Int32Array(cap >> 5);
    } else {
      this.slots.fill(null);
    }
    this.count = 0;
    this.bestSlot = -1;
    this.levelsCache = null;
    for (const lv of levels) {
      const i = (lv.price - this.base) / this.stride;
      lv.slot = i;
      this.slots[i] = lv;
      this.activate(i);
    }
  }

  // ------------------------------------------------------------ sorted fallback

  private toSorted(levels: readonly PriceLevel[]): void {
    this.sorted = levels.slice();
    this.byPrice = new Map();
    for (const lv of this.sorted) {
      lv.slot = -1;
      this.byPrice.set(lv.price, lv);
    }
    this.count = 0;
    this.bestSlot = -1;
    this.levelsCache = null;
    this.cap = INITIAL_SLOTS;
    this.slots = emptySlots(INITIAL_SLOTS);
    this.bits = new Int32Array(INITIAL_SLOTS >> 5);
  }

  private sortedLevelFor(price: Units): PriceLevel {
    let level = this.byPrice!.get(price);
    if (level === undefined) {
      level = new PriceLevel(price);
      this.byPrice!.set(price, level);
      const arr = this.sorted!;
      const lo = this.searchSorted(price);
      if (lo === arr.length) arr.push(level);
      else arr.splice(lo, 0, level);
      if (price % this.tick !== 0) this.tick = gcd(this.tick, price);
    }
    return level;
  }

  /** First index whose level is not worse than `price` (bids ascending, asks descending). */
  private searchSorted(p: Units): number {
    const arr = this.sorted!;
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
    return lo;
  }

  private dropSorted(level: PriceLevel): void {
    this.byPrice!.delete(level.price);
    const arr = this.sorted!;
    if (arr[arr.length - 1] === level) arr.pop();
    else arr.splice(this.searchSorted(level.price), 1);
    if (arr.length === 0) return;
    // Back to a ladder once the prices are close enough together again.
    const span = Math.abs(arr[arr.length - 1].price - arr[0].price) / this.tick + 1;
    if (span <= RETURN_SLOTS) {
      const levels = arr;
      this.sorted = this.byPrice = null;
      this.stride = this.isBid ? this.tick : -this.tick;
      let cap = INITIAL_SLOTS;
      while (cap < span * 2 && cap < MAX_SLOTS) cap *= 2;
      this.cap = -1; // force fresh arrays
      this.rebuild(levels, levels[0].price, levels[levels.length - 1].price, cap);
    }
  }

  /** Test aid: 'ladder' or 'sorted', and the ladder's slot count. */
  get mode(): { kind: 'ladder' | 'sorted'; slots: number; tick: Units } {
    return { kind: this.sorted === null ? 'ladder' : 'sorted', slots: this.cap, tick: this.tick };
  }
}

export class OrderBook {
  readonly bids: BookSide;
  readonly asks: BookSide;

  /** `tick`: the instrument's price increment if known (a hint: other prices still work). */
  constructor(tick: Units = 0) {
    this.bids = new BookSide(true, tick);
    this.asks = new BookSide(false, tick);
  }

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
