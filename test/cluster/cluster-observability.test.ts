/**
 * Issue 30, observability: two engine processes (a leader and a hot standby) and a gateway in this process, on
 * the machine's NATS. The gateway's GET /api/admin/cluster and /metrics show each engine's role, applied seq and
 * lag, and the lease holder and epoch; once the leader stops, both show the standby leading under a newer epoch,
 * the stopped engine as `stopped` until its entry ages out, and the takeover is logged with how long it took.
 * `perpx cluster status` prints the same view; a single process has no cluster.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import type { ClusterView } from '../../src/cluster/engine-status.js';
import { startEngineNode, type RunningEngineNode } from '../../src/app/roles/engine-node.js';
import { clusterStatusText } from '../../src/cli/commands/cluster.js';
import { deleteClusterStreams } from '../../scripts/cluster/cluster-resources.js';
import { assertError, Bot, eventually, http, ok, singleProcessOnly, startTestExchange } from '../app/client.js';
import { NATS_TEST_URL, skipUnless } from '../services.js';
import { startTestCluster, type TestCluster } from './test-cluster.js';

const skip = (await skipUnless('nats')) || (await skipUnless('postgres'));

/** The value of one sample line of a Prometheus text exposition (undefined: no such sample). */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('cluster observability: engines, lease and lag on the gateway', { skip, timeout: 120_000 }, () => {
  let C: TestCluster;
  let standby: RunningEngineNode | undefined;
  /** The standby's log lines (pino JSON). */
  const standbyLog: Array<Record<string, unknown>> = [];
  before(async () => {
    C = await startTestCluster({}, 1);
    const logger = pino({ level: 'info' }, { write: (line: string) => standbyLog.push(JSON.parse(line) as Record<string, unknown>) });
    standby = await startEngineNode(C.config('engine-2'), { waitForLeadership: false, logger });
  });
  after(async () => {
    await standby?.close().catch(() => undefined);
    await C?.stop();
    await deleteClusterStreams(NATS_TEST_URL, C?.cluster ?? '-').catch(() => undefined);
  });

  const gateway = () => C.gateways[0];
  const clusterView = async () => ok(await http(gateway().url, 'GET', '/api/admin/cluster', undefined, { 'x-operator-token': gateway().operatorToken }), 'cluster') as ClusterView;
  const metrics = async () => (await fetch(`${gateway().url}/metrics`)).text();

  test('the leader and the standby, their applied seq and lag, and the lease', async () => {
    const leader = C.engine;
    assert.equal(leader.role, 'leader');
    assert.equal(standby!.role, 'standby');
    const bot = await new Bot(gateway().url).signIn();
    await bot.faucet();
    const seq = leader.engine.seq;
    assert.ok(seq > 0);
    const epoch = leader.takeovers[0].epoch;

    // Each engine reports once a second: wait until both reported the faucet deposit.
    const v = await eventually(clusterView, (x) => x.engines.length === 2 && x.engines.every((e) => e.appliedSeq >= seq), 'both engines at the deposit', 10_000);
    assert.deepEqual(v.engines.map((e) => [e.id, e.role]), [[leader.id, 'leader'], [standby!.id, 'standby']]);
    assert.deepEqual(v.lease && [v.lease.holder, v.lease.epoch], [leader.id, epoch]);
    assert.equal(v.logSeq, leader.engine.seq, 'the log ends at the leader\'s last command');
    for (const e of v.engines) {
      assert.equal(e.appliedSeq, v.logSeq, `${e.role} applied the whole log`);
      assert.equal(e.lag, 0, `${e.role} lag`);
      assert.equal(e.leaseHolder, leader.id);
      assert.ok(e.ageMs < 5000, `${e.role} reported recently (${e.ageMs} ms)`);
    }
    assert.deepEqual([v.engines[0].epoch, v.engines[0].takeovers, v.engines[1].epoch, v.engines[1].takeovers], [epoch, 1, 0, 0]);
    assert.equal(v.engines[0].lastTakeoverMs, leader.takeovers[0].ms);
    await eventually(async () => gateway().follower.seq, (s) => s >= v.logSeq, 'gateway follower');
    const text = await metrics();
    assert.equal(sample(text, 'perpx_cluster_engine_leader', `{engine="${leader.id}"}`), 1);
    assert.equal(sample(text, 'perpx_cluster_engine_leader', `{engine="${standby!.id}"}`), 0);
    assert.equal(sample(text, 'perpx_cluster_engine_lag_commands', `{engine="${standby!.id}"}`), 0);
    assert.equal(sample(text, 'perpx_cluster_engine_applied_seq', `{engine="${standby!.id}"}`), v.logSeq);
    assert.equal(sample(text, 'perpx_cluster_engines'), 2);
    assert.equal(sample(text, 'perpx_cluster_leader_epoch'), epoch);
    assert.equal(sample(text, 'perpx_cluster_lease_holder', `{holder="${leader.id}"}`), 1);
    assert.equal(sample(text, 'perpx_cluster_gateway_lag_commands'), 0);
    assert.ok((sample(text, 'perpx_cluster_engine_status_age_seconds', `{engine="${leader.id}"}`) ?? -1) >= 0);

    const printed = clusterStatusText(v);
    assert.match(printed, new RegExp(`lease holder ${leader.id}  epoch ${epoch}`));
    assert.match(printed, new RegExp(`${standby!.id}\\s+standby\\s+${v.logSeq}\\s+0\\s`));
  });

  test('the leader stops: the standby leads, under a newer epoch, on both views', async (t) => {
    const first = C.engine;
    const firstEpoch = first.takeovers[0].epoch;
    await first.close();
    await standby!.whenLeader();
    assert.equal(standby!.role, 'leader');
    const epoch = standby!.takeovers[0].epoch;
    assert.ok(epoch > firstEpoch);

    // Logged just after it leads, once it read its predecessor's last status.
    const leads = await eventually(async () => standbyLog.filter((l) => l.msg === 'engine leads'), (l) => l.length > 0, 'the takeover logged');
    assert.equal(leads.length, 1);
    assert.equal(leads[0].takeoverMs, standby!.takeovers[0].ms, 'from the lease taken to taking commands');
    assert.equal(leads[0].previousLeader, first.id);
    assert.ok(typeof leads[0].sincePreviousLeaderStatusMs === 'number', 'since the previous leader last reported');
    t.diagnostic(`takeover: ${JSON.stringify({ takeoverMs: leads[0].takeoverMs, previousLeaderWas: leads[0].previousLeaderWas, sincePreviousLeaderStatusMs: leads[0].sincePreviousLeaderStatusMs })}`);

    const v = await eventually(clusterView, (x) => x.engines[0]?.id === standby!.id && x.engines[0].role === 'leader', 'the standby leading', 10_000);
    assert.deepEqual(v.engines.map((e) => [e.id, e.role]), [[standby!.id, 'leader'], [first.id, 'stopped']], 'the stopped engine says so');
    assert.deepEqual(v.lease && [v.lease.holder, v.lease.epoch], [standby!.id, epoch]);
    assert.deepEqual([v.engines[0].epoch, v.engines[0].takeovers, v.engines[0].lastTakeoverMs], [epoch, 1, standby!.takeovers[0].ms]);

    // The new leader takes commands; the gateway sees them.
    const bot = await new Bot(gateway().url).signIn();
    await bot.faucet();
    const after = await eventually(clusterView, (x) => x.engines[0]?.appliedSeq === standby!.engine.seq, 'the new leader\'s report', 10_000);
    assert.equal(after.logSeq, standby!.engine.seq);
    const text = await metrics();
    assert.equal(sample(text, 'perpx_cluster_engine_leader', `{engine="${standby!.id}"}`), 1);
    assert.equal(sample(text, 'perpx_cluster_leader_epoch'), epoch);
    assert.equal(sample(text, 'perpx_cluster_lease_holder', `{holder="${standby!.id}"}`), 1);
    assert.equal(sample(text, 'perpx_cluster_engine_takeovers', `{engine="${standby!.id}"}`), 1);
    assert.equal(sample(text, 'perpx_cluster_engine_leader', `{engine="${first.id}"}`), 0, 'stopped');

    // The stopped engine's entry ages out of the bucket (max age a few heartbeats past the lease TTL).
    await eventually(clusterView, (x) => x.engines.length === 1, 'the stopped engine gone', 20_000);
    assert.equal(sample(await metrics(), 'perpx_cluster_engine_leader', `{engine="${first.id}"}`), undefined);
  });
});

describe('a single-process exchange has no cluster', { skip: singleProcessOnly }, () => {
  test('GET /api/admin/cluster answers 404 NOT_A_CLUSTER', async () => {
    const X = await startTestExchange();
    try {
      assertError(await http(X.url, 'GET', '/api/admin/cluster', undefined, { 'x-operator-token': X.ex.operatorToken }), 404, 'NOT_A_CLUSTER');
      assertError(await http(X.url, 'GET', '/api/admin/cluster'), 401);
    } finally {
      await X.stop();
    }
  });
});
