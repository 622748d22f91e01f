/**
 * Every client order id a user has used and that is no longer live, for the duplicate check, until it
 * leaves the id window (two days). With a million orders a day this is the engine's largest structure.
 *
 * Hand-written open-addressing hash table over one Int32Array instead of a Map<string, number> per account:
 * a canonical key (26 lower-case hex digits) is stored as four integers next to its user id and day, so an
 * entry costs no heap objects at all (a Map entry plus its key string was ~120 bytes of traced heap, and
 * lookups and inserts in that Map were ~13% of the engine's time, its garbage collection more).
 *
 * Slot layout (SLOT ints): userId (0 = empty), four key words (7, 7, 6 and 6 hex digits), day.
 * Entries are only removed by `prune`, which rebuilds the table, so probing needs no tombstones.
 */
const SLOT = 6;
const KEY_HEX_DIGITS = 26;
const MIN_CAPACITY = 1024;

/** Hex digit value of a lower-case key character (keys are canonical: 0-9, a-f). */
function hexValue(c: number): number {
  return c <= 57 ? c - 48 : c - 87;
}

function word(key: string, from: number, to: number): number {
  let w = 0;
  for (let i = from; i < to; i++) w = (w << 4) | hexValue(key.charCodeAt(i));
  return w;
}

function hexWord(w: number, digits: number): string {
  return w.toString(16).padStart(digits, '0');
}

export class UsedOrderIds {
  private table: Int32Array;
  private mask: number;
  private count = 0;
  // Scratch for the key being looked up (avoids allocating per call).
  private w0 = 0;
  private w1 = 0;
  private w2 = 0;
  private w3 = 0;

  constructor(capacity = MIN_CAPACITY) {
    let slots = MIN_CAPACITY;
    while (slots < capacity * 2) slots *= 2;
    this.table = new Int32Array(slots * SLOT);
    this.mask = slots - 1;
  }

  get size(): number {
    return this.count;
  }

  /** Whether `userId` has used the order id whose canonical key is `key`. */
  has(userId: number, key: string): boolean {
    return this.find(userId, key) >= 0;
  }

  /** Records the id (a key already present keeps its first day). */
  add(userId: number, key: string, day: number): void {
    const at = this.find(userId, key);
    if (at >= 0) return;
    const t = this.table;
    const i = -at - 1;
    t[i] = userId;
    t[i + 1] = this.w0;
    t[i + 2] = this.w1;
    t[i + 3] = this.w2;
    t[i + 4] = this.w3;
    t[i + 5] = day;
    if (++this.count * 2 > this.mask + 1) this.rebuild((this.mask + 1) * 2, -Infinity);
  }

  /** Forgets every id dated before `minDay`. */
  prune(minDay: number): void {
    let slots = MIN_CAPACITY;
    let kept = 0;
    const t = this.table;
    for (let i = 0; i < t.length; i += SLOT) if (t[i] !== 0 && t[i + 5] >= minDay) kept++;
    while (slots < kept * 2) slots *= 2;
    this.rebuild(slots, minDay);
  }

  /** The entries of each user as [canonical key, day], sorted by key: a canonical order for snapshots and the state hash. */
  byUser(): Map<number, Array<[string, number]>> {
    const out = new Map<number, Array<[string, number]>>();
    const t = this.table;
    for (let i = 0; i < t.length; i += SLOT) {
      if (t[i] === 0) continue;
      const key = hexWord(t[i + 1], 7) + hexWord(t[i + 2], 7) + hexWord(t[i + 3], 6) + hexWord(t[i + 4], 6);
      let list = out.get(t[i]);
      if (list === undefined) out.set(t[i], (list = []));
      list.push([key, t[i + 5]]);
    }
    for (const list of out.values()) list.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return out;
  }

  /** Slot index of the entry (≥ 0), or −(free slot index) − 1 where it would go. Leaves the key's words in w0..w3. */
  private find(userId: number, key: string): number {
    if (key.length !== KEY_HEX_DIGITS) throw new Error(`not a canonical order key: ${key}`);
    const w0 = (this.w0 = word(key, 0, 7));
    const w1 = (this.w1 = word(key, 7, 14));
    const w2 = (this.w2 = word(key, 14, 20));
    const w3 = (this.w3 = word(key, 20, 26));
    const t = this.table;
    const mask = this.mask;
    let slot = UsedOrderIds.hash(userId, w0, w1, w2, w3) & mask;
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

  /** Re-inserts the entries dated on or after `minDay` into a table of `slots` slots. */
  private rebuild(slots: number, minDay: number): void {
    const old = this.table;
    const t = new Int32Array(slots * SLOT);
    const mask = slots - 1;
    let count = 0;
    for (let j = 0; j < old.length; j += SLOT) {
      const u = old[j];
      if (u === 0 || old[j + 5] < minDay) continue;
      let slot = UsedOrderIds.hash(u, old[j + 1], old[j + 2], old[j + 3], old[j + 4]) & mask;
      while (t[slot * SLOT] !== 0) slot = (slot + 1) & mask;
      const i = slot * SLOT;
      for (let k = 0; k < SLOT; k++) t[i + k] = old[j + k];
      count++;
    }
    this.table = t;
    this.mask = mask;
    this.count = count;
  }
}
