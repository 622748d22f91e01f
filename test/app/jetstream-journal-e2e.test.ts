/**
 * The single process on the JetStream journal (JOURNAL=jetstream), end to end: the real `npm start` entry as
 * a child process, its journal a fresh stream on the machine's NATS and its snapshots in the object store.
 * Signed orders under load, a periodic snapshot in the bucket, then SIGKILL. The restart loads that snapshot
 * and replays the stream's tail; every acknowledged order is there with its status, and the state the
 * server reports at its checkpoint equals a clean replay of the stream from zero (done here, in the test).
 * After a graceful stop, the operator's `verify-journal` on the same configuration agrees. Also: a second
 * exchange on the same stream is fenced off, and a start without NATS fails naming the URL.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildJournal } from '../../src/app/builders/journal.js';
import { loadConfig } from '../../src/app/config.js';
import { createEngine } from '../../src/engine/engine.js';
import { openDurableReader } from '../../src/journal/durable-location.js';
import { NO_NATS_AUTH } from '../../src/journal/nats-connection.js';
import { verifyJournal } from '../../src/sequencer/recovery.js';
import { dropCluster, freshCluster, natsConnection } from '../journal/jetstream-helpers.js';
import { freePort } from '../journal/private-nats.js';
import { waitFor } from '../realtime/helpers.js';
import { NATS_TEST_URL, skipUnless } from '../services.js';
import { Bot, http, ok } from './client.js';
import { ServerProcess, startUnderLoad, verifyJournalOffline, type Outcome } from './server-process.js';

const skip = await skipUnless('nats');

test('JOURNAL=jetstream: SIGKILL under load, restart; every acknowledged order is there and the state equals a clean replay', { skip, timeout: 180_000 }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'perpx-jetstream-'));
  const cluster = freshCluster();
  const location = { kind: 'jetstream' as const, natsUrl: NATS_TEST_URL, cluster, replicas: 1, auth: NO_NATS_AUTH };
  const env = { JOURNAL: 'jetstream', NATS_URL: NATS_TEST_URL, CLUSTER_NAME: cluster, SNAPSHOT_EVERY_COMMANDS: '40' };
  const servers: ServerProcess[] = [];
  try {
    const { server: first, wallet, outcomes, load, acked: ackedSoFar } = await startUnderLoad(dataDir, env, servers);
    await waitFor(() => ackedSoFar().length >= 120, 60_000, '120 acknowledged orders');
    await waitFor(() => first.logs.some((l) => l.msg === 'snapshot saved'), 20_000, 'a periodic snapshot in the object store');
    first.proc.kill('SIGKILL');
    assert.deepEqual(await first.exited, { code: null, signal: 'SIGKILL' });
    await load;
    const acked = ackedSoFar();
    assert.deepEqual(outcomes.filter((o) => o.kind === 'refused'), [], 'nothing refused before the kill');

    // Nothing of it is in DATA_DIR: the journal and the snapshots are on NATS.
    const reader = await openDurableReader(location, 3, 'perpx test');
    let streamEnd = 0;
    for await (const e of reader.read(0)) streamEnd = e.seq;
    const stored = await reader.snapshots.list();
    assert.ok(stored.length > 0, 'snapshots in the bucket');

    // ---- restart: snapshot from the bucket + the stream's tail ----
    const second = new ServerProcess(dataDir, env);
    servers.push(second);
    const restarted = await second.ready;
    assert.ok(restarted.startup.snapshotSeq > 0, 'a snapshot from the object store was loaded');
    assert.equal(restarted.startup.snapshotSeq + restarted.startup.replayed, streamEnd, 'replayed the stream up to its end');
    const again = await new Bot(restarted.url, wallet).signIn();
    const openIds = new Set(((await again.openOrders()) as Array<{ id: string }>).map((o) => o.id));
    for (const a of acked) {
      assert.equal((await again.order(a.id)).status, a.status, `acknowledged order ${a.id} after the crash`);
      if (a.status === 'NEW') assert.ok(openIds.has(a.id), `acknowledged order ${a.id} is open`);
    }
    for (const o of outcomes.filter((x) => x.kind === 'network')) {
      const res = await again.get(`/api/order/${o.id}`);
      assert.ok(res.status === 200 || res.status === 404, `unacknowledged order ${o.id}: ${res.status}`);
    }

    // The live state, at a durable seq, against a replay of the stream from zero in a fresh engine.
    const token = readFileSync(join(dataDir, 'operator-token'), 'utf8').trim();
    const checkpoint = ok(await http(restarted.url, 'POST', '/api/admin/checkpoint', undefined, { 'x-operator-token': token }), 'checkpoint') as { seq: number; stateHash: string };
    assert.ok(checkpoint.seq >= streamEnd);
    const verified = await verifyJournal({ journal: { read: reader.read }, createEngine, expected: checkpoint });
    assert.equal(verified.seq, checkpoint.seq);
    assert.equal(verified.replayedHash, checkpoint.stateHash, 'state hash of a clean replay of the stream');
    assert.ok(verified.ok, verified.invariantError);
    await reader.close();

    second.proc.kill('SIGTERM');
    assert.deepEqual(await second.exited, { code: 0, signal: null }, second.text);
    // The operator's check, offline, on the same configuration: snapshot + tail against a replay from zero.
    const cli = await verifyJournalOffline(dataDir, env);
    assert.equal(cli.code, 0, cli.stdout);
    const report = JSON.parse(cli.stdout) as { ok: boolean; seq: number; expectedFrom: string };
    assert.ok(report.ok && report.seq >= checkpoint.seq, cli.stdout);
    assert.match(report.expectedFrom, /^snapshot \d+/, 'the snapshot in the object store is the expected state');
  } finally {
    for (const s of servers) if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    await dropCluster(await natsConnection(), cluster);
  }
});

test('JOURNAL=jetstream: a second exchange on the same stream is fenced off at its first append; the first goes on', { skip, timeout: 120_000 }, async () => {
  const dirs = [mkdtempSync(join(tmpdir(), 'perpx-jetstream-a-')), mkdtempSync(join(tmpdir(), 'perpx-jetstream-b-'))];
  const cluster = freshCluster();
  const env = { JOURNAL: 'jetstream', NATS_URL: NATS_TEST_URL, CLUSTER_NAME: cluster };
  const servers: ServerProcess[] = [];
  try {
    const first = new ServerProcess(dirs[0], env);
    servers.push(first);
    const a = await new Bot((await first.ready).url).signIn();
    await a.faucet();
    ok(await a.limit({ side: 'BUY', quantity: '0.001', limitPrice: '90000', leverage: 10 }), 'order on the first');

    // The second recovers the same log, then the first appends again: the second's tail is stale.
    const second = new ServerProcess(dirs[1], env);
    servers.push(second);
    const { url } = await second.ready;
    ok(await a.limit({ side: 'BUY', quantity: '0.001', limitPrice: '90001', leverage: 10 }), 'the first appends after the second started');
    const b = await new Bot(url).signIn();
    const res = await b.post('/api/user/faucet');
    assert.deepEqual([res.status, (res.body as { error?: { code?: string } }).error?.code], [503, 'JOURNAL_UNAVAILABLE'], `the second's command is refused: ${JSON.stringify(res.body)}`);
    assert.deepEqual(await second.exited, { code: 1, signal: null }, 'the fenced exchange stops (fail-stop)');
    const fatal = second.logs.find((l) => l.level === 60 && /journal write failed/.test(String(l.msg)));
    assert.equal(fatal?.code, 'JETSTREAM_WRONG_LAST_SEQUENCE', second.text);

    ok(await a.limit({ side: 'BUY', quantity: '0.001', limitPrice: '90002', leverage: 10 }), 'the first goes on');
    first.proc.kill('SIGTERM');
    assert.deepEqual(await first.exited, { code: 0, signal: null }, first.text);
  } finally {
    for (const s of servers) if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGKILL');
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await dropCluster(await natsConnection(), cluster);
  }
});

test('JOURNAL=jetstream with NATS not answering: the start fails, naming the URL', async () => {
  const url = `nats://127.0.0.1:${await freePort()}`;
  await assert.rejects(buildJournal(loadConfig({ JOURNAL: 'jetstream', NATS_URL: url }), tmpdir()), (err: Error) => {
    assert.match(err.message, new RegExp(`JOURNAL=jetstream: NATS at ${url} does not answer \\(connection refused\\)`));
    return true;
  });
});
