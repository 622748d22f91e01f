/** Test helpers: a service on a fresh in-memory database and a client that signs in like the public one. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Wallet, hexlify, randomBytes } from 'ethers';
import { SiweMessage } from 'siwe';
import { createAuthService, type AuthServiceOptions, type WalletAuthService } from '../../src/auth/auth-service.js';
import { SqliteAuthStore } from '../../src/auth/sqlite-auth-store.js';
import type { SignInBody } from '../../src/auth/types.js';

export const CHAIN_ID = '16182';

export interface Clock {
  now: () => number;
  advance(ms: number): void;
}

export function testClock(start = Date.now()): Clock {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'perpx-auth-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function makeService(
  over: Partial<AuthServiceOptions> & { db?: Database.Database } = {},
): Promise<{ auth: WalletAuthService; clock: Clock; dataDir: string; db: Database.Database; cleanup: () => void }> {
  const clock = testClock();
  const { dir, cleanup } = tempDir();
  const { db = new Database(':memory:'), ...options } = over;
  const auth = await createAuthService({ store: new SqliteAuthStore(db), dataDir: dir, chainId: CHAIN_ID, now: clock.now, ...options });
  return { auth, clock, dataDir: over.dataDir ?? dir, db, cleanup };
}

export function randomWallet(): Wallet {
  return new Wallet(hexlify(randomBytes(32)));
}

export interface SiweFields {
  scheme?: string;
  domain?: string;
  uri?: string;
  chainId?: number;
  address?: string;
  issuedAt?: string;
  expirationTime?: string;
  notBefore?: string;
}

/** Builds and signs the sign-in message exactly as the public client does (siwe + ethers). */
export async function clientSignIn(wallet: Wallet, nonce: string, fields: SiweFields = {}): Promise<SignInBody> {
  const siwe = new SiweMessage({
    scheme: fields.scheme ?? 'https',
    domain: fields.domain ?? 'evedex.com',
    address: fields.address ?? wallet.address,
    statement: 'Sign in to evedex.com',
    uri: fields.uri ?? 'https://evedex.com',
    version: '1',
    chainId: fields.chainId ?? Number(CHAIN_ID),
    nonce,
    issuedAt: fields.issuedAt,
    expirationTime: fields.expirationTime,
    notBefore: fields.notBefore,
  });
  const message = siwe.prepareMessage();
  const signature = await wallet.signMessage(message);
  return { wallet: wallet.address, message, nonce, signature };
}
