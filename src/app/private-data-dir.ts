/**
 * The data directory holds secrets (JWT signing key, operator token, demo wallet) and every user's data
 * (databases, their -wal/-shm files, snapshots): nobody but the exchange's own OS user may read it. The
 * process umask makes every file created from now on 0600 and every directory 0700, whichever module
 * (or worker thread, or library such as SQLite) creates it; files left too open by an older version are
 * tightened at start.
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const PRIVATE_UMASK = 0o077;

/**
 * Sets the umask, creates `dataDir` and takes group/other permissions off everything already in it.
 * Returns what it tightened and what it could not (not ours to change): the caller reports both.
 */
export function preparePrivateDataDir(dataDir: string): { tightened: string[]; failed: Array<{ path: string; err: unknown }> } {
  process.umask(PRIVATE_UMASK);
  mkdirSync(dataDir, { recursive: true });
  const out = { tightened: [] as string[], failed: [] as Array<{ path: string; err: unknown }> };
  tighten(dataDir, out);
  return out;
}

function tighten(path: string, out: ReturnType<typeof preparePrivateDataDir>): void {
  try {
    // lstat: a symbolic link is neither followed nor changed (its target may lie outside the data directory).
    const st = lstatSync(path);
    if (st.isSymbolicLink()) return;
    if ((st.mode & PRIVATE_UMASK) !== 0) {
      chmodSync(path, st.mode & 0o7777 & ~PRIVATE_UMASK);
      out.tightened.push(path);
    }
    if (st.isDirectory()) for (const name of readdirSync(path)) tighten(join(path, name), out);
  } catch (err) {
    out.failed.push({ path, err });
  }
}
