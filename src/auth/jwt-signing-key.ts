/**
 * The access-token signing key: an ES256 (P-256) pair generated on first start and persisted as
 * a private JWK (mode 0600) in the data directory, so tokens survive restarts and every process
 * sharing the data dir signs/verifies with the same key. ES256 rather than EdDSA because more
 * third-party JWT verifiers accept it; jose signs and verifies both at the same speed.
 */
import { hkdfSync } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';

export const ACCESS_TOKEN_ALG = 'ES256';
export const SIGNING_KEY_FILE = 'auth-jwt-signing-key.jwk.json';

export interface SigningKey {
  alg: typeof ACCESS_TOKEN_ALG;
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  /**
   * A secret derived from the private key (HKDF): keys the HMAC that names a refresh token's successor
   * (refresh-rotation.ts), so no second secret file is needed and every process sharing the key agrees.
   */
  successorSecret: Buffer;
}

/** The key of a stored private JWK (file or PostgreSQL). */
export async function signingKeyFromJwk(jwk: JWK): Promise<SigningKey> {
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || !jwk.d) throw new Error('signing key file: expected a private P-256 JWK');
  const { d: _d, ...publicJwk } = jwk;
  const kid = jwk.kid ?? (await calculateJwkThumbprint(publicJwk));
  return {
    alg: ACCESS_TOKEN_ALG,
    kid,
    privateKey: (await importJWK(jwk, ACCESS_TOKEN_ALG)) as CryptoKey,
    publicKey: (await importJWK(publicJwk, ACCESS_TOKEN_ALG)) as CryptoKey,
    successorSecret: Buffer.from(hkdfSync('sha256', Buffer.from(jwk.d, 'base64url'), kid, 'perpx refresh-token successor', 32)),
  };
}

async function readKeyFile(path: string): Promise<JWK | null> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as JWK;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** A fresh private JWK with its thumbprint as `kid`. */
export async function newSigningJwk(): Promise<JWK> {
  const { privateKey, publicKey } = await generateKeyPair(ACCESS_TOKEN_ALG, { extractable: true });
  const jwk = await exportJWK(privateKey);
  jwk.kid = await calculateJwkThumbprint(await exportJWK(publicKey));
  jwk.alg = ACCESS_TOKEN_ALG;
  return jwk;
}

export async function loadOrCreateSigningKey(dataDir: string): Promise<SigningKey> {
  const path = join(dataDir, SIGNING_KEY_FILE);
  const existing = await readKeyFile(path);
  if (existing) return signingKeyFromJwk(existing);

  await mkdir(dataDir, { recursive: true });
  const jwk = await newSigningJwk();
  try {
    // 'wx': if another process created the file meanwhile, keep theirs (below) so all agree on one key.
    await writeFile(path, JSON.stringify(jwk, null, 2) + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const theirs = await readKeyFile(path);
    if (theirs) return signingKeyFromJwk(theirs);
    throw err;
  }
  return signingKeyFromJwk(jwk);
}
