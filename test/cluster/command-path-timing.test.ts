/**
 * The cluster's command path is observable: a gateway's /metrics times each command's leader round trip and
 * follower wait, and the engine leader answers a stats request over NATS (apply, JetStream append, submit to
 * durable), which bench:cluster reads for its per-hop breakdown.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connect } from '@nats-io/transport-node';
import pino from 'pino';
import { natsEngineAdmin } from '../../src/cluster/admin-transport.js';
import { LeaderStatsMirror } from '../../src/cluster/leader-stats-mirror.js';
import { Bot, ok } from '../app/client.js';
import { NATS_TEST_URL, skipUnless } from '../services.js';
import { startTestCluster, type TestCluster } from './test-cluster.js';

const skip = (await skipUnless('nats')) || (await skipUnless('postgres'));

/** `<name>_count` of a histogram in Prometheus text. */
function histogramCount(text: string, name: string): number {
  const m = new RegExp(`^${name}_count (\\S+)$`, 'm').exec(text);
  assert.ok(m, `${name} is in /metrics`);
  return Number(m[1]);
}

/** Admin calls go to the subject of the leader's lease epoch. */
const leaderOf = (C: TestCluster) => ({ epoch: C.engine.takeovers.at(-1)?.epoch });

describe('cluster command path timing', { skip }, () => {
  let C: TestCluster;
  before(async () => {
    C = await startTestCluster({}, 1);
  });
  after(async () => {
    await C?.stop();
  });

  test("a gateway's /metrics counts one leader round trip and one follower wait per command it sent", async () => {
    const [g] = C.gateways;
    const bot = await new Bot(g.url).signIn();
    const metrics = async () => (await fetch(`${g.url}/metrics`)).text();
    const before = await metrics();
    await bot.faucet();
    ok(await bot.limit({ side: 'BUY', quantity: '0.001', limitPrice: 95000 }), 'limit order');
    const after = await metrics();
    for (const name of ['perpx_gateway_leader_roundtrip_seconds', 'perpx_gateway_follower_wait_seconds']) {
      assert.equal(histogramCount(after, name) - histogramCount(before, name), 2, `${name}: the deposit and the order`);
    }
  });

  test("the engine leader's stats over NATS match its sequencer", async () => {
    const nc = await connect({ servers: NATS_TEST_URL });
    try {
      const stats = await natsEngineAdmin(nc, C.cluster, leaderOf(C), 10_000).stats();
      const own = C.engine.sequencer.stats;
      assert.equal(stats.seq, C.engine.engine.seq);
      assert.ok(stats.seq > 0, 'the demo seed and the test above applied commands');
      assert.equal(stats.applyLatency.count, own.applyLatency.count);
      assert.equal(stats.ackLatency.count, own.ackLatency.count);
      assert.equal(stats.flushes, own.flushes);
      assert.equal(stats.flushLatency.counts.reduce((a, b) => a + b, 0), stats.flushes, 'one append timed per group commit');
    } finally {
      await nc.close();
    }
  });

  test("a gateway's copy of the leader's stats: refreshed from the leader, kept when no leader answers", async () => {
    const nc = await connect({ servers: NATS_TEST_URL });
    try {
      let cluster = C.cluster;
      const mirror = new LeaderStatsMirror(() => natsEngineAdmin(nc, cluster, leaderOf(C), 2_000).stats(), pino({ level: 'silent' }));
      await mirror.refresh();
      const own = C.engine.sequencer.stats;
      assert.deepEqual(mirror.stats.commandsByKind, own.commandsByKind);
      assert.deepEqual(mirror.stats.ackLatency.counts, own.ackLatency.counts);
      assert.equal(mirror.stats.flushedCommands, own.flushedCommands);
      cluster = `${C.cluster}-nobody`; // no leader answers on this name
      await mirror.refresh();
      assert.deepEqual(mirror.stats.commandsByKind, own.commandsByKind, 'the last copy stays');
      // The gateway's /metrics shows the leader's counts.
      const text = await (await fetch(`${C.gateways[0].url}/metrics`)).text();
      const placed = /^perpx_commands_total\{kind="order.place",outcome="ok"\} (\S+)$/m.exec(text);
      assert.equal(Number(placed?.[1]), C.engine.sequencer.stats.commandsByKind['order.place']);
    } finally {
      await nc.close();
    }
  });
});
