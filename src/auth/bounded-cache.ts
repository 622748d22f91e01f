/**
 * A small LRU map with a per-entry deadline, for values that are expensive to derive and safe to reuse
 * until they expire (verified access tokens, user records). Bounded so a flood of distinct keys costs
 * memory proportional to `maxEntries`, not to the flood.
 */
export class BoundedCache<K, V> {
  // Map iteration order is insertion order: re-inserting on a hit keeps the least recently used first.
  private readonly entries = new Map<K, { value: V; expiresAt: number }>();

  constructor(private readonly maxEntries: number) {
    if (!(maxEntries >= 1)) throw new Error('BoundedCache needs room for at least one entry');
  }

  get size(): number {
    return this.entries.size;
  }

  /** The value, or undefined when absent or expired at `now` (ms). */
  get(key: K, now: number): V | undefined {
    const e = this.entries.get(key);
    if (!e || e.expiresAt <= now) return undefined;
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.value;
  }

  /** The value even when expired (kept until evicted), for a caller whose source cannot be read right now. */
  stale(key: K): V | undefined {
    return this.entries.get(key)?.value;
  }

  /** Stores `value` until `expiresAt` (ms), evicting the least recently used entry when full. */
  set(key: K, value: V, expiresAt: number): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expiresAt });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
