/**
 * Emptying the engine's per-command scratch collections, the cheap way in V8 (both are on every command's
 * path).
 */

/**
 * Empties a per-command scratch set or map. Skips an empty one: V8's clear() allocates a fresh hash table
 * even then, and most commands leave most of these empty (costs: docs/performance.md, Engine).
 */
export function clearSet(set: { size: number; clear(): void }): void {
  if (set.size !== 0) set.clear();
}

/**
 * Empties a per-command scratch array by popping: `length = 0` is a runtime call in V8, pop() is inlined,
 * and these arrays hold a few entries.
 */
export function empty(list: unknown[]): void {
  while (list.length !== 0) list.pop();
}
