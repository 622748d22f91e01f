/**
 * Graceful stop, end to end: the real `npm start` entry (src/app/main.ts) as a child process on a temp
 * DATA_DIR gets SIGTERM (then, on a fresh directory, SIGINT) while a wallet client keeps submitting orders
 * and websocket clients are connected. Then:
 *   - the process exits 0; websocket clients were disconnected with the shutdown code (a reconnect code);
 *   - no HTTP answer was a 5xx; every acknowledged order is there after a restart, with the same status;
 *   - the newest snapshot is at the journal's last seq, and the next start replays no journal command and
 *     projects nothing into the read model (its "started" log line says so).
 * And a crash: SIGKILL under the same load. The restart replays the journal tail after the last periodic
 * snapshot; every acknowledged order is there (engine and read-model history alike), the account's locks
 * match its open orders, and an offline `verify-journal` finds the recovered state equal to a clean replay.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Centrifuge } from 'centrifuge';
import WebSocket from 'ws';
import type { Wallet } from 'ethers';
import { clientReconnects, DisconnectCode } from '../../src/realtime/index.js';
import { randomWallet } from '../auth/helpers.js';
import { RawClient, waitFor } from '../realtime/helpers.js';
import { Bot, ok } from './client.js';
import { lastJournalSeq, ServerProcess, startUnderLoad, submitUntilGone, verifyJournalOffline, type Outcome } from './server-process.js';

function snapshotSeqs(dataDir: string): number[] {
  return readdirSync(join(dataDir, 'snapshots'))
    .map((n) => /^snapshot-(\d{16})\.json$/.exec(n))
    .filter((m) => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}

async function stopUnderLoad(signal: NodeJS.Signals, env: Record<string, string>): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'perpx-stop-'));
  const servers: ServerProcess[] = [];
  try {
    // ---- first run: load, then the signal ----
    const first = new ServerProcess(dataDir, env);
    servers.push(first);
    const { url, wsUrl, prefix } = await first.ready;
    const wallet: Wallet = randomWallet();
    const bot = await new Bot(url, wallet).signIn();
    await bot.faucet();

    // A raw protocol client (close code and disconnect push) and the real centrifuge client.
    const raw = new RawClient(wsUrl);
    await raw.opened;
    await waitFor(() => raw.reply(1) !== undefined, 3000, 'raw connect reply');
    const centrifugeCodes: number[] = [];
    const cf = new Centrifuge(wsUrl, { websocket: WebSocket, minReconnectDelay: 50, maxReconnectDelay: 200 });
    cf.on('connecting', (ctx) => centrifugeCodes.push(ctx.code));
    const cfConnected = new Promise<void>((r) => cf.once('connected', () => r()));
    cf.connect();
    await cfConnected;
    const book = cf.newSubscription(`${prefix}orderBook-BTCUSDT-0.1`);
    book.subscribe();

    const outcomes: Outcome[] = [];
    const load = submitUntilGone(bot, 4, outcomes);
    await waitFor(() => outcomes.filter((o) => o.kind === 'ack').length >= 30, 20_000, '30 acknowledged orders');
    first.proc.kill(signal);
    const exit = await first.exited;
    await load;
    await raw.closed;
    await waitFor(() => centrifugeCodes.length >= 2, 3000, 'centrifuge client disconnected');
    cf.disconnect();

    assert.deepEqual(exit, { code: 0, signal: null }, `exit after ${signal}:\n${first.text}`);
    assert.ok(first.logs.some((l) => l.msg === 'signal received' && l.signal === signal), 'signal logged');
    assert.ok(first.logs.some((l) => l.msg === 'stopped'), 'stop completed');

    // Websocket clients: disconnected with the shutdown code, which tells them to reconnect.
    assert.equal(raw.closeCode, DisconnectCode.shutdown, `raw close code ${raw.closeCode} ${raw.closeReason}`);
    assert.ok(clientReconnects(raw.closeCode));
    const push = raw.messages.find((m) => (m.push as { disconnect?: unknown } | undefined)?.disconnect !== undefined);
    assert.equal((push?.push as { disconnect: { code: number } } | undefined)?.disconnect.code, DisconnectCode.shutdown, 'disconnect push');
    assert.equal(centrifugeCodes[centrifugeCodes.length - 1], DisconnectCode.shutdown, `centrifuge codes ${centrifugeCodes.join(',')}`);

    // HTTP: no 5xx, nothing refused at all (in-flight requests complete; later ones cannot connect).
    const acked = outcomes.filter((o): o is Extract<Outcome, { kind: 'ack' }> => o.kind === 'ack');
    const refused = outcomes.filter((o) => o.kind === 'refused');
    assert.deepEqual(refused, [], 'no refused requests');
    assert.ok(acked.length >= 30);

    // Durable: the newest snapshot is at the journal's last seq.
    const lastSeq = lastJournalSeq(dataDir);
    assert.equal(snapshotSeqs(dataDir).at(-1), lastSeq, 'snapshot at the last seq');

    // ---- restart: no replay, nothing to project; every acknowledged order is there ----
    const second = new ServerProcess(dataDir, env);
    servers.push(second);
    const restarted = await second.ready;
    assert.equal(restarted.startup.snapshotSeq, lastSeq);
    assert.equal(restarted.startup.replayed, 0, 'no journal replay after a clean stop');
    assert.equal(restarted.startup.readModel.fromSeq, lastSeq);
    assert.equal(restarted.startup.readModel.projected, 0, 'read model already current');
    assert.ok(!second.logs.some((l) => l.msg === 'replaying journal'), 'no replay progress logged');

    const again = await new Bot(restarted.url, wallet).signIn();
    const open = new Set(((await again.openOrders()) as Array<{ id: string }>).map((o) => o.id));
    for (const a of acked) {
      const order = await again.order(a.id);
      assert.equal(order.status, a.status, `order ${a.id} after restart`);
      if (a.status === 'NEW') assert.ok(open.has(a.id), `order ${a.id} is open after restart`);
    }
    // Orders whose request died with the connection were never acknowledged: whether they exist is up to the
    // server, but if they do they must be complete orders (never half-applied).
    for (const o of outcomes.filter((x) => x.kind === 'network')) {
      const res = await again.get(`/api/order/${o.id}`);
      assert.ok(res.status === 200 || res.status === 404, `unacknowledged order ${o.id}: ${res.status}`);
    }
    ok(await again.get('/api/user/me'), 'me');

    second.proc.kill('SIGTERM');
    assert.deepEqual(await second.exited, { code: 0, signal: null });
    assert.equal(snapshotSeqs(dataDir).at(-1), lastJournalSeq(dataDir), 'second stop: snapshot at the last seq again');
  } finally {
    for (const s of servers) if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** An order the server acknowledged must survive a SIGKILL; one whose request died may or may not exist. */
async function killUnderLoad(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'perpx-kill-'));
  const servers: ServerProcess[] = [];
  // Periodic snapshots every 40 commands, so the restart loads one and replays only the tail after it.
  const env = { SNAPSHOT_EVERY_COMMANDS: '40' };
  try {
    const { server: first, wallet, outcomes, load, acked: ackedSoFar } = await startUnderLoad(dataDir, env, servers);
    await waitFor(() => ackedSoFar().length >= 120, 30_000, '120 acknowledged orders');
    // The replica writes snapshots on its own thread, a little after they fall due: kill after one is on disk.
    await waitFor(() => first.logs.some((l) => l.msg === 'snapshot saved'), 10_000, 'a periodic snapshot');
    first.proc.kill('SIGKILL');
    assert.deepEqual(await first.exited, { code: null, signal: 'SIGKILL' });
    await load;
    const acked = ackedSoFar();
    assert.deepEqual(outcomes.filter((o) => o.kind === 'refused'), [], 'nothing refused before the kill');

    // ---- restart: snapshot + journal tail; every acknowledged order is there ----
    const lastSeq = lastJournalSeq(dataDir);
    const second = new ServerProcess(dataDir, env);
    servers.push(second);
    const restarted = await second.ready;
    assert.ok(restarted.startup.snapshotSeq > 0, 'a periodic snapshot was loaded');
    assert.equal(restarted.startup.snapshotSeq + restarted.startup.replayed, lastSeq, 'replayed the journal tail up to its last seq');
    const again = await new Bot(restarted.url, wallet).signIn();
    const open = (await again.openOrders()) as Array<{ id: string; unFilledQuantity: number; limitPrice: number }>;
    const openIds = new Set(open.map((o) => o.id));
    const history = ok(await again.get('/api/order?limit=500')) as { list: Array<{ id: string; status: string }>; count: number };
    const inHistory = new Map(history.list.map((o) => [o.id, o.status]));
    for (const a of acked) {
      assert.equal(a.status, 'NEW');
      assert.equal((await again.order(a.id)).status, 'NEW', `acknowledged order ${a.id} after the crash`);
      assert.ok(openIds.has(a.id), `acknowledged order ${a.id} is open after the crash`);
      assert.equal(inHistory.get(a.id), 'NEW', `acknowledged order ${a.id} is in the read model's history`);
    }
    // Unacknowledged ones: all or nothing, and the engine and the read model agree on which.
    for (const o of outcomes.filter((x) => x.kind === 'network')) {
      const res = await again.get(`/api/order/${o.id}`);
      assert.ok(res.status === 200 || res.status === 404, `unacknowledged order ${o.id}: ${res.status}`);
      assert.equal(res.status === 200, inHistory.has(o.id), `engine and history agree on ${o.id}`);
    }
    assert.equal(history.count, open.length, 'history holds exactly the open orders (all rest, none filled)');
    // Margin: the open-order lock is exactly what the open orders need (0.001 BTC each at its price).
    const balance = await again.balance() as unknown as { openOrder: Array<{ unFilledVolume: number }> };
    const volume = open.reduce((sum, o) => sum + Math.round(o.unFilledQuantity * o.limitPrice * 1e8), 0);
    assert.equal(Math.round(balance.openOrder.reduce((sum, x) => sum + x.unFilledVolume, 0) * 1e8), volume, 'locked volume = open orders');

    second.proc.kill('SIGTERM');
    assert.deepEqual(await second.exited, { code: 0, signal: null });
    const verified = await verifyJournalOffline(dataDir);
    assert.equal(verified.code, 0, verified.stdout);
    assert.equal((JSON.parse(verified.stdout) as { ok: boolean }).ok, true);
  } finally {
    for (const s of servers) if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('graceful stop of the npm start entry', { timeout: 120_000 }, () => {
  test('SIGTERM under load: acknowledged orders survive, clients told to reconnect, next start replays nothing', () =>
    stopUnderLoad('SIGTERM', {}));
  test('SIGINT with market-making bots running: same guarantees', () =>
    stopUnderLoad('SIGINT', { MARKET_MAKERS: '2', MM_INTERVAL_MS: '50' }));
  test('SIGKILL under load: every acknowledged order survives, in the engine and in the history; the journal verifies', () =>
    killUnderLoad());
});
