// End to end: every file and directory under DATA_DIR is its owner's only (mode & 0o077 === 0): the
// databases with their -wal/-shm files, the JWT signing key, the operator token, the demo wallet and the
// snapshots; whatever umask the exchange was started with, and files an older version left open are tightened.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { SIGNING_KEY_FILE } from '../../src/auth/jwt-signing-key.js';
import { DEMO_WALLET_FILE } from '../../src/simulation/system-accounts.js';
import { Bot, http, ok, singleProcessOnly, startTestExchange } from './client.js';

/** Every path under `dir` (itself included) with its permission bits; symbolic links are not followed. */
function walk(dir: string): Array<{ path: string; mode: number; link: boolean }> {
  const out: Array<{ path: string; mode: number; link: boolean }> = [];
  const visit = (p: string) => {
    const st = lstatSync(p);
    out.push({ path: p, mode: st.mode & 0o7777, link: st.isSymbolicLink() });
    if (st.isDirectory()) for (const name of readdirSync(p)) visit(join(p, name));
  };
  visit(dir);
  return out;
}

function assertOwnerOnly(dir: string, when: string): string[] {
  const entries = walk(dir).filter((e) => !e.link);
  const open = entries.filter((e) => (e.mode & 0o077) !== 0).map((e) => `${relative(dir, e.path) || '.'} ${e.mode.toString(8)}`);
  assert.deepEqual(open, [], `${when}: files readable or writable by others`);
  return entries.map((e) => relative(dir, e.path));
}

test('every file under DATA_DIR is owner-only: created while trading and snapshotting, and left over from an older version', { skip: singleProcessOnly }, async () => {
  // The usual permissive umask: the exchange must not rely on its caller's.
  const previousUmask = process.umask(0o022);
  const outside = mkdtempSync(join(tmpdir(), 'perpx-outside-'));
  const dir = mkdtempSync(join(tmpdir(), 'perpx-modes-'));
  try {
    // What an older version may have left: an open directory, snapshot directory and file.
    chmodSync(dir, 0o755);
    mkdirSync(join(dir, 'snapshots'), { mode: 0o755 });
    chmodSync(join(dir, 'snapshots'), 0o755);
    writeFileSync(join(dir, 'old-notes.txt'), 'from an older version\n', { mode: 0o644 });
    chmodSync(join(dir, 'old-notes.txt'), 0o644);
    // A link pointing out of the data directory: its target is not the exchange's to change.
    const target = join(outside, 'elsewhere.txt');
    writeFileSync(target, 'not ours\n', { mode: 0o644 });
    chmodSync(target, 0o644);
    symlinkSync(target, join(dir, 'link-out'));

    const X = await startTestExchange({ DATA_DIR: dir, DEMO_WALLET: 'true' });
    let stopped = false;
    try {
      const [A, B] = await Promise.all([new Bot(X.url).signIn(), new Bot(X.url).signIn()]);
      await Promise.all([A.faucet(), B.faucet()]);
      assert.equal(ok(await B.limit({ side: 'SELL', quantity: '0.01', limitPrice: 100000 })).status, 'NEW');
      assert.equal(ok(await A.limit({ side: 'BUY', quantity: '0.01', limitPrice: 100000 })).status, 'FILLED');
      ok(await A.post('/api/user/api-key', { name: 'bot' }), 'api key');
      ok(await http(X.url, 'POST', '/auth/logout', undefined, { authorization: `Bearer ${B.refreshToken}` }), 'logout');
      const snap = ok(await http(X.url, 'POST', '/api/admin/snapshot', undefined, { 'x-operator-token': X.ex.operatorToken }), 'snapshot');
      assert.ok(snap.seq > 0);

      const running = assertOwnerOnly(dir, 'running');
      for (const expected of ['journal.db', 'journal.db-wal', 'auth.db', 'auth.db-wal', 'auth.db-shm', 'read.db', 'operator-token', DEMO_WALLET_FILE, SIGNING_KEY_FILE, 'snapshots']) {
        assert.ok(running.includes(expected), `${expected} exists (${running.join(', ')})`);
      }
      assert.ok(running.some((p) => p.startsWith('snapshots/') && p !== 'snapshots/'), `a snapshot file exists (${running.join(', ')})`);
      await X.ex.close();
      stopped = true;
      assertOwnerOnly(dir, 'stopped');
      assert.equal(lstatSync(target).mode & 0o777, 0o644, 'the link target outside DATA_DIR is untouched');
    } finally {
      if (!stopped) await X.ex.close();
      await X.stop();
    }
  } finally {
    process.umask(previousUmask);
    rmSync(dir, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  }
});
