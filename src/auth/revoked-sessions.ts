/**
 * Sessions revoked recently enough that access tokens of theirs may still be unexpired: checked on every
 * authenticated request, so a membership test in memory. An entry lives as long as any access token of the
 * session can (the token lifetime, plus slack for clocks of other nodes), then drops out: past that, the
 * tokens' own expiry refuses them. Filled at start from the store, then from revocation events.
 */
export class RevokedSessions {
  // Insertion order is (nearly) expiry order: every entry lives the same `lifetimeMs` from its revocation.
  private readonly until = new Map<string, number>();

  constructor(private readonly lifetimeMs: number) {}

  get size(): number {
    return this.until.size;
  }

  /** Records the revocation of `sessionId` at `revokedAt` (ms); `now` prunes the entries past their time. */
  add(sessionId: string, revokedAt: number, now: number): void {
    this.prune(now);
    const until = revokedAt + this.lifetimeMs;
    if (until <= now) return;
    const known = this.until.get(sessionId);
    if (known !== undefined && known >= until) return;
    this.until.delete(sessionId);
    this.until.set(sessionId, until);
  }

  has(sessionId: string): boolean {
    // No clock check here: an entry past its time only refuses tokens that have expired anyway.
    return this.until.has(sessionId);
  }

  private prune(now: number): void {
    for (const [id, until] of this.until) {
      if (until > now) break;
      this.until.delete(id);
    }
  }
}
