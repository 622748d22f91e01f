/**
 * The operator credential used by the CLI: a random bearer secret generated on first start and kept in the
 * data directory with mode 0600, so only the account running the exchange (and its CLI) can read it.
 * Sent as the `x-operator-token` header. Admin users (role `admin`) can use their JWT instead.
 */
import { timingSafeEqual } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { opaqueToken } from './secrets.js';

export const OPERATOR_TOKEN_FILE = 'operator-token';
export const OPERATOR_TOKEN_HEADER = 'x-operator-token';

export function operatorTokenPath(dataDir: string): string {
  return join(dataDir, OPERATOR_TOKEN_FILE);
}

async function readToken(path: string): Promise<string | null> {
  try {
    const token = (await readFile(path, 'utf8')).trim();
    return token.length > 0 ? token : null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Reads the token, creating it on first use. Tightens the mode of an existing file to 0600. */
export async function loadOrCreateOperatorToken(dataDir: string): Promise<string> {
  const path = operatorTokenPath(dataDir);
  const existing = await readToken(path);
  if (existing) {
    await chmod(path, 0o600);
    return existing;
  }
  await mkdir(dataDir, { recursive: true });
  const token = opaqueToken();
  try {
    await writeFile(path, token + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const theirs = await readToken(path);
    if (theirs) return theirs;
    throw err;
  }
  return token;
}

/**
 * Keeps a copy of a token held elsewhere (PostgreSQL in a cluster) in the data directory, mode 0600, so the CLI
 * on this machine finds it where it always looks.
 */
export async function writeOperatorTokenCopy(dataDir: string, token: string): Promise<void> {
  const path = operatorTokenPath(dataDir);
  if ((await readToken(path)) === token) return chmod(path, 0o600);
  await mkdir(dataDir, { recursive: true });
  await writeFile(path, token + '\n', { mode: 0o600 });
  await chmod(path, 0o600);
}

/** Reads the token of a data directory without creating one (the CLI). */
export async function readOperatorToken(dataDir: string): Promise<string | null> {
  return readToken(operatorTokenPath(dataDir));
}

/** Constant-time comparison of a presented token with the real one. */
export function operatorTokenMatches(presented: string, actual: string): boolean {
  const a = Buffer.from(presented, 'utf8');
  const b = Buffer.from(actual, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
