/**
 * Sign-in nonces in memory (one process, AUTH_STORE=sqlite): a nonce only has to survive the few seconds
 * between GET /auth/nonce and the sign-in POST, and a restart merely makes clients fetch a new one. A cluster's
 * gateways share theirs in PostgreSQL instead (pg-nonce-store.ts).
 */
import { LRUCache } from 'lru-cache';
import type { NonceLimits, NonceStore } from './ports.js';
import { randomAlphanumeric } from './secrets.js';

/** 17+ alphanumerics (EIP-4361 asks for at least 8); 20 gives ~119 bits. */
const NONCE_LENGTH = 20;

export const DEFAULT_NONCE_LIMITS: NonceLimits = { capacity: 100_000, perClient: 32 };

/** How long an issued nonce may be used (docs/api.md promises 5 minutes). */
export const DEFAULT_NONCE_TTL_MS = 300_000;

/** Callers that do not say who asks (in-process use, tests) share this client. */
export const UNNAMED_CLIENT = '';

export function newNonce(): string {
  return randomAlphanumeric(NONCE_LENGTH);
}

export function checkNonceLimits(limits: NonceLimits): void {
  if (!(limits.capacity >= 1 && limits.perClient >= 1)) throw new Error('a nonce store needs room for at least one nonce');
}

export class MemoryNonceStore implements NonceStore {
  /** nonce → the client it was issued to; entries expire after the TTL (on the injected clock). */
  private readonly nonces: LRUCache<string, string>;
  /** client → its outstanding nonces, oldest first (a Set keeps insertion order). */
  private readonly byClient = new Map<string, Set<string>>();

  constructor(
    ttlMs: number,
    now: () => number,
    private readonly limits: NonceLimits = DEFAULT_NONCE_LIMITS,
  ) {
    checkNonceLimits(limits);
    this.nonces = new LRUCache<string, string>({
      max: limits.capacity,
      ttl: ttlMs,
      perf: { now },
      ttlResolution: 0, // read the (injectable) clock on every check rather than once per ms
      // Every way out of the cache (used, expired, evicted, pushed out by its own client) ends here.
      dispose: (client, nonce) => this.forget(client, nonce),
    });
  }

  async migrate(): Promise<void> {}

  async issue(client: string = UNNAMED_CLIENT): Promise<string> {
    const mine = this.byClient.get(client);
    if (mine) {
      // Expired ones still count until touched: clear them first, then make room by dropping the oldest.
      for (const n of [...mine]) if (!this.nonces.has(n)) this.nonces.delete(n);
      for (const n of mine) {
        if (mine.size < this.limits.perClient) break;
        this.nonces.delete(n);
      }
    }
    const nonce = newNonce();
    this.nonces.set(nonce, client);
    let set = this.byClient.get(client);
    if (!set) this.byClient.set(client, (set = new Set()));
    set.add(nonce);
    return nonce;
  }

  async isValid(nonce: string): Promise<boolean> {
    return this.nonces.has(nonce);
  }

  /** Synchronous from the check to the delete, so concurrent callers cannot both get true. */
  async consume(nonce: string): Promise<boolean> {
    const ok = this.nonces.has(nonce);
    this.nonces.delete(nonce);
    return ok;
  }

  async heldBy(client: string): Promise<number> {
    return this.byClient.get(client)?.size ?? 0;
  }

  async sweep(): Promise<void> {
    this.nonces.purgeStale();
  }

  async close(): Promise<void> {}

  private forget(client: string, nonce: string): void {
    const set = this.byClient.get(client);
    if (!set) return;
    set.delete(nonce);
    if (set.size === 0) this.byClient.delete(client);
  }
}
