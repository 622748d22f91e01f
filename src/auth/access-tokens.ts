/** Access JWTs: short-lived, algorithm pinned, typed (`typ: 'access'`) so no other JWT we might mint passes. */
import { SignJWT, jwtVerify } from 'jose';
import type { SigningKey } from './jwt-signing-key.js';

export interface AccessClaims {
  userId: string;
  exchangeId: number;
  /** ms */
  expiresAt: number;
}

export class AccessTokens {
  constructor(
    private readonly key: SigningKey,
    private readonly issuer: string,
    private readonly ttlSec: number,
    private readonly now: () => number,
  ) {}

  async sign(userId: string, exchangeId: number): Promise<string> {
    const iat = Math.floor(this.now() / 1000);
    return new SignJWT({ exid: exchangeId, typ: 'access' })
      .setProtectedHeader({ alg: this.key.alg, kid: this.key.kid, typ: 'JWT' })
      .setSubject(userId)
      .setIssuer(this.issuer)
      .setIssuedAt(iat)
      .setExpirationTime(iat + this.ttlSec)
      .sign(this.key.privateKey);
  }

  /** null for anything but a valid, unexpired access token signed by our key. */
  async verify(token: string): Promise<AccessClaims | null> {
    try {
      const { payload } = await jwtVerify(token, this.key.publicKey, {
        algorithms: [this.key.alg],
        issuer: this.issuer,
        currentDate: new Date(this.now()),
        requiredClaims: ['sub', 'exp', 'iat'],
      });
      if (payload.typ !== 'access' || typeof payload.sub !== 'string') return null;
      if (typeof payload.exid !== 'number' || !Number.isSafeInteger(payload.exid)) return null;
      return { userId: payload.sub, exchangeId: payload.exid, expiresAt: (payload.exp as number) * 1000 };
    } catch {
      return null;
    }
  }
}
