/** Random secrets and their stored form. */
import { createHash, randomBytes, randomInt } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `length` characters from [A-Za-z0-9], uniform (randomInt avoids modulo bias). */
export function randomAlphanumeric(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return out;
}

/** An opaque bearer secret: 32 random bytes, base64url. */
export function opaqueToken(): string {
  return randomBytes(32).toString('base64url');
}

/** What the database keeps instead of a bearer secret. The secrets are 256-bit random, so no salt/KDF is needed. */
export function sha256Hex(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}
