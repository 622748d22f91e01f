/**
 * Access JWTs: short-lived, algorithm pinned, typed (`typ: 'access'`) so no other JWT we might mint passes.
 * `sid` names the session (refresh-token family), so a revoked session's tokens can be refused before expiry;
 * `sexp` is when that session ends unless refreshed (its live refresh token's expiry), which bounds how long a
 * real-time subscription authorized with the token may live; `jti` makes every token distinct.
 */
import { randomUUID } from 'node:crypto';
import type { SigningKey } from './jwt-signing-key.js';
import { TypedJwt } from './typed-jwt.js';

/** JWT `iss` of the tokens this exchange signs, unless configured otherwise. */
export const DEFAULT_TOKEN_ISSUER = 'perpx';
const ACCESS_TOKEN_TYPE = 'access';

export interface AccessClaims {
  userId: string;
  exchangeId: number;
  /** the session: the refresh-token family the token was issued with */
  sessionId: string;
  /** ms */
  expiresAt: number;
  /** ms: when the session ends unless refreshed; the token's own expiry for tokens minted without it */
  sessionExpiresAt: number;
}

export class AccessTokens {
  private readonly jwt: TypedJwt;

  constructor(key: SigningKey, issuer: string, private readonly ttlSec: number, now: () => number) {
    this.jwt = new TypedJwt(key, issuer, ACCESS_TOKEN_TYPE, ttlSec, now);
  }

  get ttlMs(): number {
    return this.ttlSec * 1000;
  }

  /** `sessionExpiresAt`: ms, the expiry of the session's live refresh token. */
  async sign(userId: string, exchangeId: number, sessionId: string, sessionExpiresAt: number): Promise<string> {
    const claims = { exid: exchangeId, sid: sessionId, sexp: Math.floor(sessionExpiresAt / 1000), jti: randomUUID() };
    return (await this.jwt.sign(userId, claims)).token;
  }

  /** null for anything but a valid, unexpired access token signed by our key. */
  async verify(token: string): Promise<AccessClaims | null> {
    const checked = await this.jwt.verify(token);
    if (checked.verdict !== 'valid') return null;
    const { payload } = checked;
    if (typeof payload.exid !== 'number' || !Number.isSafeInteger(payload.exid)) return null;
    // A token without a session (minted before sessions were named) could never be revoked: refused.
    if (typeof payload.sid !== 'string' || payload.sid.length === 0) return null;
    const expiresAt = payload.exp * 1000;
    const sessionExpiresAt = typeof payload.sexp === 'number' && Number.isFinite(payload.sexp) ? Math.max(expiresAt, payload.sexp * 1000) : expiresAt;
    return { userId: payload.sub, exchangeId: payload.exid, sessionId: payload.sid, expiresAt, sessionExpiresAt };
  }
}
