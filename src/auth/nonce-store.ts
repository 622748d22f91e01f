/**
 * Sign-in nonces: issued by us, single-use, short-lived. In memory: a nonce only has to survive
 * the few seconds between GET /auth/nonce and the sign-in POST, and a restart merely makes
 * clients fetch a new one. With several gateway processes, route sign-in sticky or share this.
 */
import { LRUCache } from 'lru-cache';
import { randomAlphanumeric } from './secrets.js';

/** 17+ alphanumerics (EIP-4361 asks for at least 8); 20 gives ~119 bits. */
const NONCE_LENGTH = 20;

export interface NonceLimits {
  /** Outstanding nonces kept in all (memory bound); beyond it the least recently used go first. */
  capacity: number;
  /**
   * Outstanding nonces one client (IP) may hold; its own oldest goes first beyond it, so a flood from one
   * client cannot push out everyone else's nonces.
   */
  perClient: number;
}

export const DEFAULT_NONCE_LIMITS: NonceLimits = { capacity: 100_000, perClient: 32 };

/** Callers that do not say who asks (in-process use, tests) share this client. */
const UNNAMED_CLIENT = '';

export class NonceStore {
  /** nonce → the client it was issued to; entries expire after the TTL (on the injected clock). */
  private readonly nonces: LRUCache<string, string>;
  /** client → its outstanding nonces, oldest first (a Set keeps insertion order). */
  private readonly byClient = new Map<string, Set<string>>();

  constructor(
    ttlMs: number,
    now: () => number,
    private readonly limits: NonceLimits = DEFAULT_NONCE_LIMITS,
  ) {
    if (!(limits.capacity >= 1 && limits.perClient >= 1)) throw new Error('NonceStore needs room for at least one nonce');
    this.nonces = new LRUCache<string, string>({
      max: limits.capacity,
      ttl: ttlMs,
      perf: { now },
      ttlResolution: 0, // read the (injectable) clock on every check rather than once per ms
      // Every way out of the cache (used, expired, evicted, pushed out by its own client) ends here.
      dispose: (client, nonce) => this.forget(client, nonce),
    });
  }

  /** A new nonce for `client` (the HTTP route passes the caller's IP). */
  issue(client: string = UNNAMED_CLIENT): string {
    const mine = this.byClient.get(client);
    if (mine) {
      // Expired ones still count until touched: clear them first, then make room by dropping the oldest.
      for (const n of [...mine]) if (!this.nonces.has(n)) this.nonces.delete(n);
      for (const n of mine) {
        if (mine.size < this.limits.perClient) break;
        this.nonces.delete(n);
      }
    }
    const nonce = randomAlphanumeric(NONCE_LENGTH);
    this.nonces.set(nonce, client);
    let set = this.byClient.get(client);
    if (!set) this.byClient.set(client, (set = new Set()));
    set.add(nonce);
    return nonce;
  }

  /** True when we issued it, it is unused and not expired. Does not consume it. */
  isValid(nonce: string): boolean {
    return this.nonces.has(nonce);
  }

  /** Consumes the nonce; false when it was not valid. */
  consume(nonce: string): boolean {
    const ok = this.isValid(nonce);
    this.nonces.delete(nonce);
    return ok;
  }

  /** Outstanding nonces of one client (expired ones included until touched). */
  heldBy(client: string): number {
    return this.byClient.get(client)?.size ?? 0;
  }

  private forget(client: string, nonce: string): void {
    const set = this.byClient.get(client);
    if (!set) return;
    set.delete(nonce);
    if (set.size === 0) this.byClient.delete(client);
  }
}
