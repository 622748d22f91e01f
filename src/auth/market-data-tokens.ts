/**
 * Market-data tokens (GET /api/dx-feed/auth): short-lived JWTs, typed `typ: 'market-data'`, that the websocket
 * accepts as a connect token. They grant only what needs no token (public channels): access-token checks
 * (access-tokens.ts) require `typ: 'access'`, so one never authorizes a private channel or a REST route.
 */
import type { SigningKey } from './jwt-signing-key.js';
import { TypedJwt } from './typed-jwt.js';

export const MARKET_DATA_TOKEN_TYPE = 'market-data';

/** A connect token's verdict: expired ones may be renewed by the client (Centrifugo error 109). */
export type MarketDataTokenCheck = 'valid' | 'expired' | 'invalid';

export class MarketDataTokens {
  private readonly jwt: TypedJwt;

  constructor(key: SigningKey, issuer: string, ttlSec: number, now: () => number = Date.now) {
    this.jwt = new TypedJwt(key, issuer, MARKET_DATA_TOKEN_TYPE, ttlSec, now);
  }

  /** A token for `userId` and its expiry (ms). */
  issue(userId: string): Promise<{ token: string; expiresAt: number }> {
    return this.jwt.sign(userId);
  }

  async check(token: string): Promise<MarketDataTokenCheck> {
    return (await this.jwt.verify(token)).verdict;
  }
}
