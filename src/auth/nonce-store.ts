/**
 * Sign-in nonces: issued by us, single-use, short-lived. In memory: a nonce only has to survive
 * the few seconds between GET /auth/nonce and the sign-in POST, and a restart merely makes
 * clients fetch a new one. With several gateway processes, route sign-in sticky or share this.
 */
import { randomAlphanumeric } from './secrets.js';

/** 17+ alphanumerics (EIP-4361 asks for at least 8); 20 gives ~119 bits. */
const NONCE_LENGTH = 20;
/** Bounds memory if someone floods GET /auth/nonce; the oldest outstanding nonces go first. */
const MAX_OUTSTANDING = 100_000;

export class NonceStore {
  /** nonce → expiry (ms). Map keeps insertion order, which is expiry order (constant TTL). */
  private readonly nonces = new Map<string, number>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  issue(): string {
    const now = this.now();
    this.sweep(now);
    if (this.nonces.size >= MAX_OUTSTANDING) {
      const oldest = this.nonces.keys().next().value;
      if (oldest !== undefined) this.nonces.delete(oldest);
    }
    const nonce = randomAlphanumeric(NONCE_LENGTH);
    this.nonces.set(nonce, now + this.ttlMs);
    return nonce;
  }

  /** True when we issued it, it is unused and not expired. Does not consume it. */
  isValid(nonce: string): boolean {
    const exp = this.nonces.get(nonce);
    return exp !== undefined && exp > this.now();
  }

  /** Consumes the nonce; false when it was not valid. */
  consume(nonce: string): boolean {
    const ok = this.isValid(nonce);
    this.nonces.delete(nonce);
    return ok;
  }

  private sweep(now: number): void {
    for (const [nonce, exp] of this.nonces) {
      if (exp > now) break; // insertion order = expiry order
      this.nonces.delete(nonce);
    }
  }
}
