/**
 * The engine's idempotency set: keys that a user's successful command has spent, per kind, so that the
 * same key never takes effect twice. Today the keys are signed instructions' EIP-712 digests
 * (spent-signatures.ts); a gateway request id for command retries fits the same set.
 *
 * Each key has a lifetime: kept for good (FOREVER), or until its scope ends (a scope is any string the
 * caller names, e.g. the order a replace changed; endScope drops its keys). It is engine state: journaled
 * commands carry their keys, so a replay rebuilds the set, and snapshots and the state hash include it.
 * Deterministic: no clock, no randomness; listed in a canonical order.
 */

/** Scope of a key that is kept for good. */
export const FOREVER = '';

/** One spent key as snapshots list it. */
export type SpentEntry = [userId: number, kind: string, key: string, scope: string];

const KIND_RE = /^[a-z][a-z0-9-]*$/;

export class SpentKeys {
  /** userId → kind → key → scope (FOREVER = for good). Nested rather than one composite key: no second string per key. */
  private readonly users = new Map<number, Map<string, Map<string, string>>>();
  /** userId → scope → the kinds and keys that end with it, flat (kind, key, kind, key…). */
  private readonly scopes = new Map<number, Map<string, string[]>>();
  private count = 0;
  private scopedCount = 0;

  /** Kinds are engine constants: checked once where they are declared, not per call. */
  static kind<K extends string>(kind: K): K {
    if (!KIND_RE.test(kind)) throw new Error(`spent-key kind ${kind}: lower-case letters, digits and '-' only`);
    return kind;
  }

  /** Keys held. */
  get size(): number {
    return this.count;
  }

  /** Keys that end with a scope; while there are none, ending a scope costs one comparison. */
  get scoped(): number {
    return this.scopedCount;
  }

  has(userId: number, kind: string, key: string): boolean {
    const keys = this.users.get(userId)?.get(kind);
    return keys !== undefined && keys.has(key);
  }

  /** Spends the key (the caller checked `has` first: a key is spent once). */
  add(userId: number, kind: string, key: string, scope: string = FOREVER): void {
    let kinds = this.users.get(userId);
    if (kinds === undefined) this.users.set(userId, (kinds = new Map()));
    let keys = kinds.get(kind);
    if (keys === undefined) kinds.set(kind, (keys = new Map()));
    if (keys.has(key)) throw new Error(`spent key ${kind} ${key} of user ${userId} added twice`);
    keys.set(key, scope);
    this.count++;
    if (scope === FOREVER) return;
    let byScope = this.scopes.get(userId);
    if (byScope === undefined) this.scopes.set(userId, (byScope = new Map()));
    const list = byScope.get(scope);
    if (list === undefined) byScope.set(scope, [kind, key]);
    else list.push(kind, key);
    this.scopedCount++;
  }

  /** The scope ended (e.g. its order left the book): its keys can never apply again, so they are forgotten. */
  endScope(userId: number, scope: string): void {
    if (this.scopedCount === 0) return;
    const byScope = this.scopes.get(userId);
    const list = byScope?.get(scope);
    if (list === undefined) return;
    byScope!.delete(scope);
    if (byScope!.size === 0) this.scopes.delete(userId);
    const kinds = this.users.get(userId)!;
    for (let i = 0; i < list.length; i += 2) {
      const keys = kinds.get(list[i])!;
      keys.delete(list[i + 1]);
      if (keys.size === 0) kinds.delete(list[i]);
    }
    if (kinds.size === 0) this.users.delete(userId);
    this.count -= list.length / 2;
    this.scopedCount -= list.length / 2;
  }

  /** Scopes with keys, per user (the engine checks each is still open). */
  *scopesInUse(): Generator<[userId: number, scope: string]> {
    for (const [userId, byScope] of this.scopes) for (const scope of byScope.keys()) yield [userId, scope];
  }

  /**
   * Every key: users by id, kinds by name, each kind's keys in the order they were spent (deterministic, and
   * kept by restore: snapshots and the state hash).
   */
  entries(): SpentEntry[] {
    const out: SpentEntry[] = [];
    for (const userId of [...this.users.keys()].sort((a, b) => a - b)) {
      const kinds = this.users.get(userId)!;
      for (const kind of [...kinds.keys()].sort()) {
        for (const [key, scope] of kinds.get(kind)!) out.push([userId, kind, key, scope]);
      }
    }
    return out;
  }

  static restore(entries: readonly SpentEntry[] | undefined): SpentKeys {
    const set = new SpentKeys();
    for (const [userId, kind, key, scope] of entries ?? []) set.add(userId, kind, key, scope);
    return set;
  }

  /** A description of the first inconsistency between the two indexes, or null. */
  problem(): string | null {
    let n = 0;
    let scoped = 0;
    for (const [userId, kinds] of this.users) {
      if (kinds.size === 0) return `spent keys: empty entry for user ${userId}`;
      for (const [kind, keys] of kinds) {
        if (keys.size === 0) return `spent keys: empty entry for user ${userId}, kind ${kind}`;
        n += keys.size;
        for (const [key, scope] of keys) {
          if (scope === FOREVER) continue;
          scoped++;
          const list = this.scopes.get(userId)?.get(scope) ?? [];
          let listed = false;
          for (let i = 0; i < list.length && !listed; i += 2) listed = list[i] === kind && list[i + 1] === key;
          if (!listed) return `spent key ${kind} ${key} of user ${userId} missing from scope ${scope}`;
        }
      }
    }
    let listed = 0;
    for (const byScope of this.scopes.values()) for (const list of byScope.values()) listed += list.length / 2;
    if (n !== this.count || scoped !== this.scopedCount || listed !== scoped) {
      return `spent keys: counts ${this.count}/${this.scopedCount} ≠ held ${n}/${scoped} (${listed} listed by scope)`;
    }
    return null;
  }
}
