/**
 * Market-data tokens (GET /api/dx-feed/auth): short-lived JWTs, typed `typ: 'market-data'`, that the websocket
 * accepts as a connect token. They grant only what needs no token (public channels): access-token checks
 * (access-tokens.ts) require `typ: 'access'`, so one never authorizes a private channel or a REST route.
 */
import { SignJWT, errors, jwtVerify } from 'jose';
import type { SigningKey } from './jwt-signing-key.js';

export const MARKET_DATA_TOKEN_TYPE = 'market-data';

/** A connect token's verdict: expired ones may be renewed by the client (Centrifugo error 109). */
export type MarketDataTokenCheck = 'valid' | 'expired' | 'invalid';

export class MarketDataTokens {
  constructor(
    private readonly key: SigningKey,
    private readonly issuer: string,
    private readonly ttlSec: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** A token for `userId` and its expiry (ms). */
  async issue(userId: string): Promise<{ token: string; expiresAt: number }> {
    const iat = Math.floor(this.now() / 1000);
    const token = await new SignJWT({ typ: MARKET_DATA_TOKEN_TYPE })
      .setProtectedHeader({ alg: this.key.alg, kid: this.key.kid, typ: 'JWT' })
      .setSubject(userId)
      .setIssuer(this.issuer)
      .setIssuedAt(iat)
      .setExpirationTime(iat + this.ttlSec)
      .sign(this.key.privateKey);
    return { token, expiresAt: (iat + this.ttlSec) * 1000 };
  }

  async check(token: string): Promise<MarketDataTokenCheck> {
    try {
      const { payload } = await jwtVerify(token, this.key.publicKey, {
        algorithms: [this.key.alg],
        issuer: this.issuer,
        currentDate: new Date(this.now()),
        requiredClaims: ['sub', 'exp', 'iat'],
      });
      return payload.typ === MARKET_DATA_TOKEN_TYPE ? 'valid' : 'invalid';
    } catch (err) {
      // Only a token that was ours and of this type may be told "expired" (so the client renews it).
      if (err instanceof errors.JWTExpired && err.payload.typ === MARKET_DATA_TOKEN_TYPE) return 'expired';
      return 'invalid';
    }
  }
}
