/**
 * Every client order id of every user, in one table: a live order's id leads to the order; a used id (the
 * order ended) is remembered with its day until it leaves the id window, for the duplicate check. With a
 * million orders a day this is the engine's largest structure.
 *
 * Hand-written open-addressing hash table over one Int32Array instead of Maps keyed by id strings: an id's
 * 26 hex digits are stored as four integers next to the user id, the day and a reference to the live order,
 * so an entry costs no heap object and no key string, and the garbage collector has nothing to trace
 * (what Maps keyed by strings cost: docs/performance.md, Engine).
 * Ids are read in place from the text that ends with their 26 hex digits (a v2 id `DDDDD:…` in either case, or
 * a 26-digit canonical key; see orderIdDigits), so a lookup allocates nothing.
 *
 * Slot layout (SLOT ints): userId (0 = empty slot), four key words (7, 7, 6 and 6 hex digits), day, live
 * reference (0 = used, n = live order number n − 1). Entries are only removed by `prune`, which moves the
 * kept ones to a fresh table, so probing needs no tombstones.
 *
 * Growing and pruning move the entries to a new table INCREMENTALLY (as Redis rehashes its dicts): the old
 * table stays readable while each insert moves a few of its slots over, and an id found in the old table
 * moves at once, so no command waits for more than a few slots at a doubling or at midnight's prune.
 */
const SLOT = 7;
/** Numbers per used id in usedByUser's lists: four key words and the day. */
export const USED_ID_WORDS = 5;
export const KEY_HEX_DIGITS = 26;
const MIN_SLOTS = 1024;
/** Grow past this share of occupied slots (linear probing stays short below it). */
const MAX_LOAD = 0.7;
/** Old-table slots an insert moves while a move is under way (at least; more when the new table is small). */
const MOVE_STEPS = 32;
/** userId of an old-table slot whose entry has moved to the new table (not empty: probe chains run through it). */
const MOVED = -1;

/** Hex digit value of 0-9, a-f or A-F (callers pass validated ids). */
function hexValue(c: number): number {
  return c <= 57 ? c - 48 : (c | 32) - 87;
}

function word(text: string, from: number, to: number): number {
  let w = 0;
  for (let i = from; i < to; i++) w = (w << 4) | hexValue(text.charCodeAt(i));
  return w;
}

/** Copies the slot at offset j of `from` to offset i of `to`; unrolled (SLOT = 7): a copy loop was most of a move's time. */
function copySlot(from: Int32Array, j: number, to: Int32Array, i: number): void {
  to[i] = from[j];
  to[i + 1] = from[j + 1];
  to[i + 2] = from[j + 2];
  to[i + 3] = from[j + 3];
  to[i + 4] = from[j + 4];
  to[i + 5] = from[j + 5];
  to[i + 6] = from[j + 6];
}

/** Slots for `entries` with room for `headroom` times as many before the table grows. */
function slotsFor(entries: number, headroom = 1.5): number {
  let slots = MIN_SLOTS;
  while (slots * MAX_LOAD < entries * headroom) slots *= 2;
  return slots;
}

export class OrderIdIndex<T> {
  private table: Int32Array;
  private mask: number;
  /** Entries in `table` plus those still to move from `old` (pruned ones leave the count when the move reaches them). */
  private count = 0;
  /** The table being moved into `table` (null when no move is under way), its mask, the next slot to move. */
  private old: Int32Array | null = null;
  private oldMask = 0;
  private moveCursor = 0;
  /** Old slots moved per insert during this move. */
  private moveSteps = MOVE_STEPS;
  /** Used entries dated before this day are dropped by this move (a prune); −Infinity when growing. */
  private moveMinDay = -Infinity;
  /** Live orders by reference − 1; freed numbers are reused. */
  private live: Array<T | undefined> = [];
  private freeRefs: number[] = [];
  // The last `find`: its arguments and result (a command looks one id up several times: duplicate check,
  // then listing or retiring it), and its key words (no allocation per call). Reset when slots move.
  private lastUser = 0;
  private lastText = '';
  private lastFound = 0;
  private w0 = 0;
  private w1 = 0;
  private w2 = 0;
  private w3 = 0;

  constructor(capacity = 0) {
    const slots = slotsFor(capacity);
    this.table = new Int32Array(slots * SLOT);
    this.mask = slots - 1;
  }

  /** Ids in the table, live and used (exact: finishes a move under way, which may still hold pruned ids). */
  get size(): number {
    this.finishMove();
    return this.count;
  }

  get liveCount(): number {
    return this.live.length - this.freeRefs.length;
  }

  /** Whether the user has this id, live or used. */
  has(userId: number, text: string): boolean {
    return this.find(userId, text) >= 0;
  }

  /** The live order with this id; null when the id is used (its order ended); undefined when unknown. */
  lookup(userId: number, text: string): T | null | undefined {
    const i = this.find(userId, text);
    if (i < 0) return undefined;
    const ref = this.table[i + 6];
    return ref === 0 ? null : this.live[ref - 1]!;
  }

  /** The id now names this live order. */
  setLive(userId: number, text: string, day: number, order: T): void {
    const i = this.entry(userId, text, day);
    const t = this.table;
    if (t[i + 6] !== 0) {
      this.live[t[i + 6] - 1] = order;
      return;
    }
    let ref = this.freeRefs.pop();
    if (ref === undefined) {
      ref = this.live.length;
      this.live.push(order);
    } else {
      this.live[ref] = order;
    }
    t[i + 6] = ref + 1;
  }

  /** The id's order is no longer live (or never was): the id stays used until it is pruned. */
  retire(userId: number, text: string, day: number): void {
    const i = this.entry(userId, text, day);
    const t = this.table;
    const ref = t[i + 6];
    if (ref === 0) return;
    this.live[ref - 1] = undefined;
    this.freeRefs.push(ref - 1);
    t[i + 6] = 0;
  }

  /**
   * Forgets used ids dated before `minDay` (live ones stay, however old). They are dropped as the move to a
   * new table reaches them; until then lookups already treat them as absent.
   */
  prune(minDay: number): void {
    // Sized for every entry, pruned ones included (counting the kept ones would read the whole table now), with
    // 10% room: enough to finish the move in a few dozen slots per insert, and at midnight (yesterday's and
    // today's ids kept, the day before's dropped) a day's steady size stays as it was.
    this.startMove(slotsFor(this.count, 1.1), minDay);
  }

  /**
   * The used ids of each user, sorted by key (a canonical order for snapshots and the state hash), flat:
   * USED_ID_WORDS numbers per id, the key's four words (7, 7, 6 and 6 hex digits) then the day. Numbers
   * rather than key strings: a snapshot of a million used ids spent seconds building and sorting strings.
   */
  usedByUser(): Map<number, number[]> {
    this.finishMove();
    const t = this.table;
    const slotsOf = new Map<number, number[]>();
    for (let i = 0; i < t.length; i += SLOT) {
      if (t[i] === 0 || t[i + 6] !== 0) continue;
      let list = slotsOf.get(t[i]);
      if (list === undefined) slotsOf.set(t[i], (list = []));
      list.push(i);
    }
    // Fixed-width hex digits sort like the numbers they spell.
    const byKey = (a: number, b: number) => t[a + 1] - t[b + 1] || t[a + 2] - t[b + 2] || t[a + 3] - t[b + 3] || t[a + 4] - t[b + 4];
    const out = new Map<number, number[]>();
    for (const [userId, slots] of slotsOf) {
      slots.sort(byKey);
      const flat = new Array<number>(slots.length * USED_ID_WORDS);
      let k = 0;
      for (const i of slots) for (let j = 1; j <= USED_ID_WORDS; j++) flat[k++] = t[i + j];
      out.set(userId, flat);
    }
    return out;
  }

  /** Restores used ids listed by usedByUser (a snapshot), straight from their words. */
  restoreUsed(userId: number, flat: readonly number[]): void {
    this.lastUser = 0; // the words set below are not the remembered lookup's
    for (let k = 0; k + USED_ID_WORDS <= flat.length; k += USED_ID_WORDS) {
      this.w0 = flat[k];
      this.w1 = flat[k + 1];
      this.w2 = flat[k + 2];
      this.w3 = flat[k + 3];
      const found = this.probeWords(userId);
      if (found < 0) this.insert(-found - 1, userId, flat[k + 4]);
    }
  }

  /** Slot of the id, inserted (as used, with `day`) when absent. */
  private entry(userId: number, text: string, day: number): number {
    const found = this.find(userId, text);
    return found >= 0 ? found : this.insert(-found - 1, userId, day);
  }

  /** Writes the id in w0..w3 as used into the free slot `i`; returns its slot (it moves when the table grows). */
  private insert(i: number, userId: number, day: number): number {
    const t = this.table;
    t[i] = userId;
    t[i + 1] = this.w0;
    t[i + 2] = this.w1;
    t[i + 3] = this.w2;
    t[i + 4] = this.w3;
    t[i + 5] = day;
    t[i + 6] = 0;
    if (++this.count <= (this.mask + 1) * MAX_LOAD) {
      if (this.old !== null) this.moveSome(this.moveSteps); // moves old entries only: slot i stays put
      return i;
    }
    this.startMove((this.mask + 1) * 2, -Infinity);
    return this.probeWords(userId); // found in the old table and moved over
  }

  /** Slot offset of the entry (≥ 0), or −(free slot offset) − 1 where it would go. Leaves the key words in w0..w3. */
  private find(userId: number, text: string): number {
    if (userId === this.lastUser && text === this.lastText) {
      const i = this.lastFound;
      // Still right unless the free slot it named has been filled since.
      if (i >= 0 || this.table[-i - 1] === 0) return i;
    }
    const found = this.probe(userId, text);
    this.lastUser = userId;
    this.lastText = text;
    this.lastFound = found;
    return found;
  }

  private probe(userId: number, text: string): number {
    const at = text.length - KEY_HEX_DIGITS;
    if (at !== 0 && at !== 6) throw new Error(`not an order id: ${text}`);
    this.w0 = word(text, at, at + 7);
    this.w1 = word(text, at + 7, at + 14);
    this.w2 = word(text, at + 14, at + 20);
    this.w3 = word(text, at + 20, at + 26);
    return this.probeWords(userId);
  }

  /**
   * Slot offset of the id in w0..w3 (≥ 0), or −(free slot offset) − 1 where it would go. Always an offset in
   * `table`: an id still in the old table moves over now.
   */
  private probeWords(userId: number): number {
    const found = this.probeIn(this.table, this.mask, userId);
    const old = this.old;
    if (found >= 0 || old === null) return found;
    const j = this.probeIn(old, this.oldMask, userId);
    if (j < 0 || (old[j + 6] === 0 && old[j + 5] < this.moveMinDay)) return found; // absent, or pruned
    const i = -found - 1;
    copySlot(old, j, this.table, i);
    old[j] = MOVED;
    return i;
  }

  private probeIn(t: Int32Array, mask: number, userId: number): number {
    const { w0, w1, w2, w3 } = this;
    let slot = OrderIdIndex.hash(userId, w0, w1, w2, w3) & mask;
    for (;;) {
      const i = slot * SLOT;
      const u = t[i];
      if (u === 0) return -i - 1;
      if (u === userId && t[i + 4] === w3 && t[i + 3] === w2 && t[i + 2] === w1 && t[i + 1] === w0) return i;
      slot = (slot + 1) & mask;
    }
  }

  private static hash(userId: number, w0: number, w1: number, w2: number, w3: number): number {
    let h = Math.imul(userId, 0x9e3779b1) ^ w3;
    h = Math.imul(h ^ (h >>> 15), 0x85ebca6b) ^ w2;
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) ^ w1;
    h = Math.imul(h ^ (h >>> 16), 0x27d4eb2f) ^ w0;
    h = Math.imul(h ^ (h >>> 15), 0x165667b1);
    return (h ^ (h >>> 16)) >>> 0;
  }

  /**
   * Starts moving every entry (but used ones dated before `minDay`) into a new table of `slots` slots; a
   * move still under way finishes first. Offsets handed out so far no longer hold.
   */
  private startMove(slots: number, minDay: number): void {
    this.finishMove();
    this.old = this.table;
    this.oldMask = this.mask;
    this.moveCursor = 0;
    this.moveMinDay = minDay;
    this.table = new Int32Array(slots * SLOT);
    this.mask = slots - 1;
    // Enough old slots per insert to finish before the new table fills to its own growth point.
    const headroom = Math.max(1, Math.floor(slots * MAX_LOAD) - this.count);
    this.moveSteps = Math.max(MOVE_STEPS, 2 * Math.ceil((this.oldMask + 1) / headroom));
    this.lastUser = 0; // offsets refer to the new table from now on
  }

  private finishMove(): void {
    if (this.old !== null) this.moveSome(Infinity);
  }

  /** Moves the next `steps` old slots' entries (dropping pruned ones); ends the move after the last slot. */
  private moveSome(steps: number): void {
    const old = this.old!;
    const t = this.table;
    const mask = this.mask;
    const minDay = this.moveMinDay;
    const slots = this.oldMask + 1;
    const end = Math.min(slots, this.moveCursor + steps);
    for (let c = this.moveCursor; c < end; c++) {
      const j = c * SLOT;
      const u = old[j];
      if (u <= 0) continue; // empty, or moved already
      if (old[j + 6] === 0 && old[j + 5] < minDay) {
        this.count--;
        continue;
      }
      let slot = OrderIdIndex.hash(u, old[j + 1], old[j + 2], old[j + 3], old[j + 4]) & mask;
      while (t[slot * SLOT] !== 0) slot = (slot + 1) & mask;
      copySlot(old, j, t, slot * SLOT);
    }
    this.moveCursor = end;
    if (end === slots) this.old = null;
  }
}
