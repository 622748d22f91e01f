/**
 * Short-lived JWTs of one kind, told apart by their `typ` claim, signed with the exchange's key: algorithm
 * pinned, issuer checked, `sub`, `iat` and `exp` required. Access tokens and market-data tokens are two kinds;
 * checking `typ` keeps a token of one kind from passing as the other.
 */
import { SignJWT, errors, jwtVerify, type JWTPayload } from 'jose';
import type { SigningKey } from './jwt-signing-key.js';

/** What a verified token carries: its claims, with the required ones typed. */
export type TypedJwtPayload = JWTPayload & { sub: string; exp: number };

/** `expired` only for a token that was ours and of this kind (so the client may be told to renew it). */
export type TypedJwtVerdict = { verdict: 'valid'; payload: TypedJwtPayload } | { verdict: 'expired' } | { verdict: 'invalid' };

export class TypedJwt {
  constructor(
    private readonly key: SigningKey,
    private readonly issuer: string,
    private readonly typ: string,
    private readonly ttlSec: number,
    private readonly now: () => number,
  ) {}

  /** A token for `subject` carrying `claims`, and its expiry (ms). */
  async sign(subject: string, claims: JWTPayload = {}): Promise<{ token: string; expiresAt: number }> {
    const iat = Math.floor(this.now() / 1000);
    const token = await new SignJWT({ ...claims, typ: this.typ })
      .setProtectedHeader({ alg: this.key.alg, kid: this.key.kid, typ: 'JWT' })
      .setSubject(subject)
      .setIssuer(this.issuer)
      .setIssuedAt(iat)
      .setExpirationTime(iat + this.ttlSec)
      .sign(this.key.privateKey);
    return { token, expiresAt: (iat + this.ttlSec) * 1000 };
  }

  async verify(token: string): Promise<TypedJwtVerdict> {
    try {
      const { payload } = await jwtVerify(token, this.key.publicKey, {
        algorithms: [this.key.alg],
        issuer: this.issuer,
        currentDate: new Date(this.now()),
        requiredClaims: ['sub', 'exp', 'iat'],
      });
      if (payload.typ !== this.typ || typeof payload.sub !== 'string') return { verdict: 'invalid' };
      return { verdict: 'valid', payload: payload as TypedJwtPayload };
    } catch (err) {
      if (err instanceof errors.JWTExpired && err.payload.typ === this.typ) return { verdict: 'expired' };
      return { verdict: 'invalid' };
    }
  }
}
