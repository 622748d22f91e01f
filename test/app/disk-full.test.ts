/**
 * Disk full, for real (issue 26, point 8). Each store's file lives on its own small tmpfs (tmpfs.ts), filled
 * with a filler file while the exchange runs:
 *   - journal: under a load of signed orders the exchange (the `npm start` entry, as a child process) stops
 *     taking commands with 503 JOURNAL_UNAVAILABLE, acknowledges nothing it did not store, logs why and
 *     exits; after the space is freed it restarts with every acknowledged order, refused ones absent, and
 *     an offline verify-journal finds the state equal to a clean replay;
 *   - read model: trading continues, history answers 503 READ_MODEL_BEHIND; once space is free the
 *     projection catches up by itself and equals a clean rebuild;
 *   - auth database: sign-in and refresh answer 503 STORAGE_UNAVAILABLE, existing sessions keep trading;
 *     with space again sign-in works.
 * A test that cannot mount its tmpfs fails (it never skips).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Wallet } from 'ethers';
import { loadConfig } from '../../src/app/config.js';
import { startExchange, type RunningExchange } from '../../src/app/exchange.js';
import { clientSignIn, randomWallet } from '../auth/helpers.js';
import { Bot, CHAIN_ID, http, ok, type Res } from './client.js';
import { assertSameReadModel, rebuildReadModel } from './read-model-rebuild.js';
import { lastJournalSeq, ServerProcess, submitUntilGone, verifyJournalOffline, type Outcome } from './server-process.js';
import { Tmpfs } from './tmpfs.js';

async function waitFor(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function inProcessConfig(dataDir: string) {
  return loadConfig({
    PORT: '0', DATA_DIR: dataDir, SIGNATURE_THREADS: '0', LOG_LEVEL: 'silent', INDEX_FEED: 'off', FUNDING_INTERVAL_MS: '0',
    MARKET_MAKERS: '0', DEMO_WALLET: 'false',
  });
}

function assertErrorCode(res: Res, status: number, code: string, what: string): void {
  assert.equal(res.status, status, `${what}: ${JSON.stringify(res.body)}`);
  assert.equal((res.body as { error?: { code?: string } }).error?.code, code, `${what}: ${JSON.stringify(res.body)}`);
  assert.equal(typeof (res.body as { error: { message: unknown } }).error.message, 'string');
}

describe('disk full', { timeout: 120_000 }, () => {
  test('journal disk full under load: 503 JOURNAL_UNAVAILABLE, nothing unstored acknowledged, every acknowledged order back after a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'perpx-jfull-'));
    const disk = Tmpfs.mount(32);
    const servers: ServerProcess[] = [];
    let topUp: NodeJS.Timeout | undefined;
    // Snapshots every 50 commands share the journal's disk: their writes fail too (and must clean up).
    const env = { SNAPSHOT_EVERY_COMMANDS: '50' };
    try {
      disk.hold(dataDir, 'journal.db');
      disk.hold(dataDir, 'snapshots', true);
      const first = new ServerProcess(dataDir, env);
      servers.push(first);
      const { url } = await first.ready;
      const wallet: Wallet = randomWallet();
      const bot = await new Bot(url, wallet).signIn();
      await bot.faucet();
      const outcomes: Outcome[] = [];
      const load = submitUntilGone(bot, 4, outcomes);
      await waitFor(() => outcomes.filter((o) => o.kind === 'ack').length >= 60, '60 acknowledged orders');
      await waitFor(() => first.logs.some((l) => l.msg === 'snapshot saved'), 'a snapshot on the journal disk');

      // Fill the disk, and keep it full (a failed snapshot frees its temp file) until the exchange gives up.
      disk.fill();
      topUp = setInterval(() => disk.fill(), 20);
      const exit = await first.exited;
      clearInterval(topUp);
      await load;

      const refused = outcomes.filter((o): o is Extract<Outcome, { kind: 'refused' }> => o.kind === 'refused');
      assert.ok(refused.length >= 1, 'the commands caught by the failure were refused');
      for (const r of refused) assert.deepEqual({ status: r.status, code: r.code }, { status: 503, code: 'JOURNAL_UNAVAILABLE' }, `refusal of ${r.id}`);
      assert.deepEqual(exit, { code: 1, signal: null }, `exits (fail-stop) after the journal write failed:\n${first.text}`);
      const fatal = first.logs.find((l) => l.level === 60 && /journal write failed/.test(String(l.msg)));
      assert.ok(fatal, `a fatal log line says why:\n${first.text}`);
      assert.equal(fatal.code, 'SQLITE_FULL');
      const acked = outcomes.filter((o): o is Extract<Outcome, { kind: 'ack' }> => o.kind === 'ack');
      assert.deepEqual(readdirSync(join(dataDir, 'snapshots')).filter((n) => n.endsWith('.tmp')), [], 'no half-written snapshot left');
      const lastSeq = lastJournalSeq(dataDir);

      // ---- space freed: restart; every acknowledged order is there, no refused one ----
      disk.release();
      const second = new ServerProcess(dataDir, env);
      servers.push(second);
      const restarted = await second.ready;
      assert.equal(restarted.startup.snapshotSeq + restarted.startup.replayed, lastSeq, 'recovered up to the journal\'s end');
      const again = await new Bot(restarted.url, wallet).signIn();
      const history = ok(await again.get('/api/order?limit=500')) as { list: Array<{ id: string; status: string }> };
      const inHistory = new Map(history.list.map((o) => [o.id, o.status]));
      for (const a of acked) {
        assert.equal((await again.order(a.id)).status, a.status, `acknowledged order ${a.id} after the restart`);
        assert.equal(inHistory.get(a.id), a.status, `acknowledged order ${a.id} in the history`);
      }
      for (const r of refused) assert.equal((await again.get(`/api/order/${r.id}`)).status, 404, `refused order ${r.id} was not stored`);
      for (const o of outcomes.filter((x) => x.kind === 'network')) {
        const res = await again.get(`/api/order/${o.id}`);
        assert.ok(res.status === 200 || res.status === 404, `unacknowledged order ${o.id}: ${res.status}`);
      }
      ok(await again.limit({ side: 'BUY', quantity: '0.001', limitPrice: '90000' }), 'takes commands again');
      second.proc.kill('SIGTERM');
      assert.deepEqual(await second.exited, { code: 0, signal: null });

      const verified = await verifyJournalOffline(dataDir);
      assert.equal(verified.code, 0, verified.stdout);
      assert.equal((JSON.parse(verified.stdout) as { ok: boolean }).ok, true, 'the state equals a clean replay of the journal');
    } finally {
      clearInterval(topUp);
      for (const s of servers) if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGKILL');
      await Promise.all(servers.map((s) => s.exited));
      disk.unmount();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('read-model disk full: trading continues, history answers 503 READ_MODEL_BEHIND, then catches up to a clean rebuild', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'perpx-rfull-'));
    const disk = Tmpfs.mount(16);
    let ex: RunningExchange | undefined;
    try {
      disk.hold(dataDir, 'read.db');
      ex = await startExchange(inProcessConfig(dataDir));
      const [a, b] = [await new Bot(ex.url).signIn(), await new Bot(ex.url).signIn()];
      await a.faucet();
      await b.faucet();
      const ids: string[] = [];
      const trade = async (price: string) => {
        ids.push((ok(await b.limit({ side: 'SELL', quantity: '0.01', limitPrice: price }), 'sell') as { id: string }).id);
        const buy = ok(await a.limit({ side: 'BUY', quantity: '0.01', limitPrice: price, timeInForce: 'IOC' }), 'buy') as { id: string; status: string };
        assert.equal(buy.status, 'FILLED', 'trading continues');
        ids.push(buy.id);
      };
      await trade('100000');
      ok(await a.get('/api/order?limit=50'), 'history before the disk fills');

      disk.fill();
      await trade('100010');
      await trade('100020');
      const status = async () => (ok(await http(ex!.url, 'GET', '/api/admin/status', undefined, { 'x-operator-token': ex!.operatorToken })) as {
        readModel: { state: string; error?: string };
      }).readModel;
      // Refused, not answered from the rows the read model had before the disk filled.
      await waitFor(async () => (await a.get('/api/order?limit=50')).status === 503, 'history refuses once the projection fails');
      for (const bot of [a, b]) assertErrorCode(await bot.get('/api/order?limit=50'), 503, 'READ_MODEL_BEHIND', 'history on a full read-model disk');
      assert.equal((await status()).state, 'retrying');
      assert.match((await status()).error ?? '', /full/i);
      assert.equal((await a.positions()).length, 1, 'live positions come from the engine');

      disk.release();
      const complete = async () => {
        const [ra, rb] = [await a.get('/api/order?limit=500'), await b.get('/api/order?limit=500')];
        if (ra.status !== 200 || rb.status !== 200) return false;
        const listed = new Set([...(ra.body as { list: Array<{ id: string }> }).list, ...(rb.body as { list: Array<{ id: string }> }).list].map((o) => o.id));
        return ids.every((id) => listed.has(id));
      };
      await waitFor(complete, 'history complete once space is free');
      assert.equal((await status()).state, 'current');

      const seq = ex.engine.seq;
      await ex.close();
      ex = undefined;
      const rebuilt = join(dataDir, 'rebuilt.db');
      assert.equal(await rebuildReadModel(dataDir, rebuilt), seq);
      assertSameReadModel(join(dataDir, 'read.db'), rebuilt);
    } finally {
      await ex?.close();
      disk.unmount();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('auth-database disk full: sign-in and refresh answer 503 STORAGE_UNAVAILABLE, existing sessions keep trading', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'perpx-afull-'));
    const disk = Tmpfs.mount(8);
    let ex: RunningExchange | undefined;
    try {
      disk.hold(dataDir, 'auth.db');
      ex = await startExchange(inProcessConfig(dataDir));
      const url = ex.url;
      const trader = await new Bot(url).signIn();
      await trader.faucet();
      const signIn = async (wallet: Wallet) => {
        const { nonce } = ok(await http(url, 'GET', '/auth/nonce')) as { nonce: string };
        return http(url, 'POST', '/auth/user/sign-up', await clientSignIn(wallet, nonce, { chainId: Number(CHAIN_ID) }));
      };
      const refresh = (token: string) => http(url, 'POST', '/auth/refresh', undefined, { authorization: `Bearer ${token}` });

      disk.fill();
      const newcomer = randomWallet();
      assertErrorCode(await signIn(newcomer), 503, 'STORAGE_UNAVAILABLE', 'sign-in of a new wallet');
      assertErrorCode(await signIn(trader.wallet), 503, 'STORAGE_UNAVAILABLE', 'sign-in of a known wallet');
      assertErrorCode(await refresh(trader.refreshToken), 503, 'STORAGE_UNAVAILABLE', 'refresh');
      // The session already held keeps trading: access tokens are verified without writing.
      ok(await trader.get('/api/user/me'), 'me');
      const placed = ok(await trader.limit({ side: 'BUY', quantity: '0.001', limitPrice: '90000' }), 'order on a full auth disk') as { id: string };
      assert.equal((await trader.order(placed.id)).status, 'NEW');

      disk.release();
      ok(await signIn(newcomer), 'sign-in once space is free');
      ok(await signIn(trader.wallet), 'sign-in of the known wallet once space is free');
      ok(await refresh(trader.refreshToken), 'refresh with the same token once space is free: the refused refresh did not use it up');
    } finally {
      await ex?.close();
      disk.unmount();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
