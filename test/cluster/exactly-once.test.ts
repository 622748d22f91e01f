/**
 * Exactly-once commands across a takeover (issue 30): a command resent with the same gateway request id gets
 * the outcome recorded for it, on the same leader (a duplicate while it is still being made durable, or after)
 * and on the next leader after a takeover, where the id reached the new leader's ledger through the log. A
 * faucet deposit, an order, its cancel and a withdrawal: each is in the log once and takes effect once, and the
 * resend gets the first answer (not "duplicate transfer" or "order not found"). A gateway whose leader stops
 * while it awaits an answer resends to the next leader as soon as the lease names it.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import { startEngineNode, type RunningEngineNode } from '../../src/app/roles/engine-node.js';
import { leaderSubjectOf, NatsCommandSubmitter, REQUEST_ID_HEADER, serveCommands } from '../../src/cluster/command-transport.js';
import { decodeAnswer, encodeCommand, type SubmitAnswer } from '../../src/cluster/command-wire.js';
import { openEngineFollower } from '../../src/cluster/follower.js';
import { LeaderDirectory } from '../../src/cluster/leader-lease.js';
import { RequestLedger } from '../../src/cluster/request-ledger.js';
import { parseMoney } from '../../src/domain/fixed.js';
import type { CommandInput } from '../../src/engine/commands.js';
import { createEngine, restoreEngine } from '../../src/engine/engine.js';
import { readCommandStream } from '../../src/journal/jetstream-journal.js';
import { clusterNames } from '../../src/journal/jetstream-names.js';
import type { JournalEntry } from '../../src/journal/ports.js';
import { deleteClusterStreams } from '../../scripts/cluster/cluster-resources.js';
import { startLocalCluster, type LocalCluster } from '../../scripts/cluster/local-cluster.js';
import { silentLogger } from '../journal/helpers.js';
import { dropCluster, freshCluster, natsConnection } from '../journal/jetstream-helpers.js';
import { eventually } from '../app/client.js';
import { NATS_TEST_URL, PG_ADMIN_URL, skipUnless } from '../services.js';
import { createPostgresTestDatabase } from '../store/dialects.js';
import { startTestCluster, type TestCluster } from './test-cluster.js';
import { deposit, limit, setupCommands, startLeader } from './workload.js';

const skip = await skipUnless('nats');
const skipPg = skip || (await skipUnless('postgres'));

const show = (x: unknown): string => JSON.stringify(x, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));

/** One command request as a gateway sends it, with its request id. */
async function ask(nc: NatsConnection, subject: string, command: CommandInput, requestId: string): Promise<SubmitAnswer> {
  const h = headers();
  h.set(REQUEST_ID_HEADER, requestId);
  return decodeAnswer((await nc.request(subject, encodeCommand(command), { headers: h, timeout: 10_000 })).data);
}

async function logEntries(nc: NatsConnection, cluster: string): Promise<JournalEntry[]> {
  const entries: JournalEntry[] = [];
  for await (const e of readCommandStream(nc, await jetstreamManager(nc), clusterNames(cluster).commandStream, 0)) entries.push(e);
  return entries;
}

const withdrawal = (userId: number, usdt: string, transferId: string): CommandInput => ({
  kind: 'funds.withdraw', userId, amount: parseMoney(usdt).toString(), transferId, recipient: `0x${'ab'.repeat(20)}`, digest: `0x${randomBytes(32).toString('hex')}`,
});

test('one leader: a request id resent, at once or later, gets one outcome and one log entry', { skip, timeout: 60_000 }, async () => {
  const nc = await natsConnection();
  const cluster = freshCluster();
  try {
    const leader = await startLeader(nc, cluster);
    const requests = new RequestLedger();
    const responder = serveCommands({ nc, cluster, sequencer: leader.sequencer, requests, logger: silentLogger });
    const standbyLedger = new RequestLedger();
    const follower = await openEngineFollower({ nc, cluster, createEngine, restoreEngine, onApplied: (_engine, entry, result) => standbyLedger.recordApplied(entry, result), logger: silentLogger });
    const subject = clusterNames(cluster).submitSubject;
    for (const c of setupCommands()) await leader.sequencer.submit(c);

    const faucet = deposit(7, '10000');
    // Three copies, two while the first is still being made durable, one after.
    const [a, b] = await Promise.all([ask(nc, subject, faucet, 'gw-1'), ask(nc, subject, faucet, 'gw-1')]);
    const c = await ask(nc, subject, faucet, 'gw-1');
    assert.ok(a.ok && a.reply.ok, show(a));
    assert.deepEqual(b, a);
    assert.deepEqual(c, a);
    assert.equal(leader.sequencer.seq, a.seq, 'applied once');
    // The same command under a new id is a new request: the engine refuses the spent transfer id itself.
    const other = await ask(nc, subject, faucet, 'gw-2');
    assert.ok(other.ok && !other.reply.ok, 'a second request with the same transfer is refused by the engine');

    // An id that cannot be journaled is refused before the engine sees it.
    const bad = await ask(nc, subject, deposit(7, '1'), 'has space');
    assert.ok(!bad.ok && bad.code === 'BAD_COMMAND', show(bad));

    await follower.waitFor(a.seq, 10_000);
    const recorded = standbyLedger.get('gw-1');
    assert.ok(recorded instanceof Uint8Array);
    assert.deepEqual(decodeAnswer(recorded), a, 'a follower records the same answer from the log');
    const logged = (await logEntries(nc, cluster)).filter((e) => e.requestId !== undefined);
    assert.deepEqual(logged.map((e) => [e.seq, e.requestId]), [[a.seq, 'gw-1']], 'the log holds the command once, with its id');
    await responder.close();
    await follower.close();
    await leader.stop();
  } finally {
    await dropCluster(nc, cluster);
  }
});

describe('takeover: resent commands get the first leader\'s outcomes', { skip: skipPg, timeout: 120_000 }, () => {
  let C: TestCluster;
  let standby: RunningEngineNode;
  let nc: NatsConnection;

  before(async () => {
    C = await startTestCluster({ LEADER_LEASE_TTL_MS: '1500' }, 1);
    standby = await startEngineNode(C.config('engine-2'), { waitForLeadership: false });
    nc = await natsConnection();
  });

  after(async () => {
    await standby?.close();
    await C?.stop();
  });

  test('faucet, order, cancel and withdrawal: each once across the takeover', async () => {
    assert.equal(standby.role, 'standby');
    const first = C.engine;
    const epoch = first.takeovers.at(-1)!.epoch;
    const user = 4242;
    const order = limit(user, 'BUY', '0.01', '50000');
    const orderId = (order as { order: { id: string } }).order.id;
    const commands: Array<[string, CommandInput]> = [
      ['r-faucet', deposit(user, '10000')],
      ['r-order', order],
      ['r-cancel', { kind: 'order.cancel', userId: user, orderId }],
      ['r-withdraw', withdrawal(user, '100', `wd-${randomBytes(4).toString('hex')}`)],
    ];
    const answers: SubmitAnswer[] = [];
    for (const [id, command] of commands) {
      const answer = await ask(nc, leaderSubjectOf(C.cluster, epoch), command, id);
      assert.ok(answer.ok && answer.reply.ok, `${id}: ${show(answer)}`);
      answers.push(answer);
    }
    const lastSeq = Math.max(...answers.map((a) => (a.ok ? a.seq : 0)));
    await eventually(async () => standby.engine.seq, (s) => s >= lastSeq, 'the standby applied them', 10_000);
    const balance = standby.engine.account(user);

    // The leader stops (its lease released); the standby leads under a new epoch.
    await first.close();
    await standby.whenLeader();
    const newEpoch = standby.takeovers.at(-1)!.epoch;
    assert.ok(newEpoch > epoch);
    const seqBefore = standby.engine.seq;
    for (const [i, [id, command]] of commands.entries()) {
      assert.deepEqual(await ask(nc, leaderSubjectOf(C.cluster, newEpoch), command, id), answers[i], `${id}: the recorded outcome`);
    }
    assert.equal(standby.engine.seq, seqBefore, 'nothing ran again');
    assert.deepEqual(standby.engine.account(user), balance, 'the balance moved once');
    const counted = (await logEntries(nc, C.cluster)).filter((e) => e.requestId?.startsWith('r-'));
    assert.deepEqual(counted.map((e) => e.requestId), commands.map(([id]) => id), 'each in the log once');
  });
});

describe('a gateway awaiting a stopped leader resends to the next one', { skip: skipPg, timeout: 180_000 }, () => {
  const cluster = `xo${randomBytes(4).toString('hex')}`;
  const root = mkdtempSync(join(tmpdir(), 'perpx-exactly-once-'));
  const databases: Array<Awaited<ReturnType<typeof createPostgresTestDatabase>>> = [];
  let L: LocalCluster | undefined;
  let nc: NatsConnection;

  before(async () => {
    const [auth, read] = [await createPostgresTestDatabase(), await createPostgresTestDatabase()];
    databases.push(auth, read);
    L = await startLocalCluster({
      cluster, natsUrl: NATS_TEST_URL, pgAdminUrl: PG_ADMIN_URL, dataDir: root, gateways: 0, gatewayPort: 0, standbys: 1,
      authDatabase: new URL(auth.connectionString).pathname.slice(1), readDatabase: new URL(read.connectionString).pathname.slice(1),
      env: { LOG_LEVEL: 'warn', SHUTDOWN_GRACE_MS: '2000', LEADER_LEASE_TTL_MS: '2000' },
      engineEnv: { LOG_LEVEL: 'info', SEED_DEMO: 'true', MARKET_MAKERS: '0', DEMO_WALLET: 'false', INDEX_FEED: 'off', FUNDING_INTERVAL_MS: '0' },
    });
    nc = await natsConnection();
  });

  after(async () => {
    for (const p of [L?.engine, ...(L?.standbys ?? [])]) if (p && p.proc.signalCode === null) p.proc.kill('SIGCONT');
    await L?.stop();
    await deleteClusterStreams(NATS_TEST_URL, cluster).catch(() => undefined);
    for (const db of databases) await db.drop();
    rmSync(root, { recursive: true, force: true });
  });

  test('SIGSTOP with requests in flight: each answered by the next leader, each applied once', async () => {
    const directory = await LeaderDirectory.open(nc, cluster);
    try {
      const gateway = new NatsCommandSubmitter({ nc, cluster, leader: directory, timeoutMs: 30_000 });
      const warm = await gateway.submit(deposit(1, '1'));
      assert.ok(warm.result.reply.ok);
      const leader = L!.engine;
      leader.proc.kill('SIGSTOP');
      const stoppedAt = Date.now();
      const faucets = Array.from({ length: 5 }, (_, i) => deposit(100 + i, '500'));
      const answers = await Promise.all(faucets.map((f) => gateway.submit(f)));
      const waited = Date.now() - stoppedAt;
      leader.proc.kill('SIGCONT');
      for (const a of answers) assert.ok(a.result.reply.ok, show(a.result.reply));
      // Well under the 30 s request timeout: resent when the lease named the next leader.
      assert.ok(waited < 15_000, `answered after ${waited} ms`);
      await eventually(async () => L!.engine.output.includes('engine steps down'), (x) => x, 'the stopped engine steps down', 20_000);
      const log = await logEntries(nc, cluster);
      for (const f of faucets) {
        const transferId = (f as { transferId: string }).transferId;
        assert.equal(log.filter((e) => (e.command as { transferId?: string }).transferId === transferId).length, 1, `${transferId} in the log once`);
      }
    } finally {
      directory.close();
    }
  });
});
