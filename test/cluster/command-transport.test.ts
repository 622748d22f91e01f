/**
 * The command path gateway → leader over NATS request/reply, with a real leader (Sequencer + JetStream
 * journal) and a gateway-side engine follower: every answer equals what a local sequencer fed the same
 * commands replies (the oracle: an independent engine on an in-memory journal), refusals included; the
 * follower reaches each answer's seq and then shows the caller's own write; a leader that is stopping says
 * so, as does one fenced off by another writer; with no leader listening the call fails at once as "not applied".
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { installErrorHandling } from '../../src/api/errors.js';
import { NatsCommandSubmitter, serveCommands } from '../../src/cluster/command-transport.js';
import { LeaderRefusedError, LeaderUnavailableError } from '../../src/cluster/errors.js';
import { openEngineFollower } from '../../src/cluster/follower.js';
import { createEngine, restoreEngine } from '../../src/engine/engine.js';
import { MemoryJournal } from '../../src/journal/memory-journal.js';
import { dropCluster, freshCluster, natsConnection, publishGroup } from '../journal/jetstream-helpers.js';
import { silentLogger } from '../journal/helpers.js';
import { skipUnless } from '../services.js';
import { sequencerOn, setupCommands, startLeader, tradingCommands } from './workload.js';

const skip = await skipUnless('nats');

test('commands through the leader: local replies, seqs a follower reaches, read-your-writes', { skip, timeout: 60_000 }, async () => {
  const nc = await natsConnection();
  const cluster = freshCluster();
  try {
    const leader = await startLeader(nc, cluster);
    const responder = serveCommands({ nc, cluster, sequencer: leader.sequencer, logger: silentLogger });
    const gateway = new NatsCommandSubmitter({ nc, cluster, waitForLeaderMs: 300 });
    const follower = await openEngineFollower({ nc, cluster, createEngine, restoreEngine, logger: silentLogger });
    const local = sequencerOn(new MemoryJournal());

    let refusals = 0;
    let orders = 0;
    for (const command of [...setupCommands(), ...tradingCommands(0), ...tradingCommands(1)]) {
      const { result, seq } = await gateway.submit(command);
      const expected = await local.submit(command);
      assert.deepEqual(result.reply, expected.reply, `${command.kind}: the leader's answer is the local reply`);
      assert.equal(result.retracted, expected.retracted, `${command.kind}: retracted`);
      assert.equal(seq, local.seq, `${command.kind}: seq`);
      await follower.waitFor(seq, 10_000);
      if (!result.reply.ok) refusals++;
      if (command.kind === 'order.place' && result.reply.ok) {
        // Read-your-writes: right after waitFor the follower shows the order as the reply does.
        orders++;
        assert.deepEqual(follower.engine.getOrder(command.userId, command.order.id), result.reply.order);
      }
    }
    assert.ok(refusals >= 2 && orders >= 4, `${refusals} refusals, ${orders} orders`);
    assert.equal(follower.engine.stateHash(), local.engine.stateHash(), 'the follower holds the local state');

    // Concurrent submits from the gateway are all answered, each with its own seq.
    const burst = await Promise.all(tradingCommands(2).map((c) => gateway.submit(c)));
    const seqs = burst.map((r) => r.seq);
    assert.equal(new Set(seqs.filter((s, i) => burst[i].result.reply.ok)).size, burst.filter((r) => r.result.reply.ok).length);
    await follower.waitFor(Math.max(...seqs), 10_000);
    assert.equal(follower.engine.stateHash(), (await leader.sequencer.checkpoint()).stateHash);

    // A leader that is stopping refuses with its reason.
    await leader.stop();
    await assert.rejects(gateway.submit(tradingCommands(3)[0]), (err: Error) => {
      assert.ok(err instanceof LeaderRefusedError);
      assert.equal(err.code, 'SHUTTING_DOWN');
      return true;
    });
    await responder.close();
    await follower.close();
  } finally {
    await dropCluster(nc, cluster);
  }
});

test('a leader fenced off by another writer answers JOURNAL_UNAVAILABLE, not a reply', { skip, timeout: 30_000 }, async () => {
  const nc = await natsConnection();
  const cluster = freshCluster();
  try {
    const leader = await startLeader(nc, cluster);
    const responder = serveCommands({ nc, cluster, sequencer: leader.sequencer, logger: silentLogger });
    const gateway = new NatsCommandSubmitter({ nc, cluster, waitForLeaderMs: 300 });
    const first = await gateway.submit(setupCommands()[0]);
    assert.equal(first.seq, 1);
    await publishGroup(nc, cluster, 2, 2); // another writer appends behind the leader's back
    await assert.rejects(gateway.submit(setupCommands()[1]), (err: Error) => {
      assert.ok(err instanceof LeaderRefusedError, String(err));
      assert.equal(err.code, 'JOURNAL_UNAVAILABLE');
      assert.match(err.message, /JETSTREAM_WRONG_LAST_SEQUENCE/);
      return true;
    });
    await responder.close();
    await leader.stop().catch(() => undefined);
  } finally {
    await dropCluster(nc, cluster);
  }
});

test('with no leader listening, a submit waits its grace for one, then fails: not applied', { skip }, async () => {
  const nc = await natsConnection();
  // A long timeout: only the server's "no responders" can end the call before it.
  const gateway = new NatsCommandSubmitter({ nc, cluster: freshCluster(), timeoutMs: 600_000, waitForLeaderMs: 300 });
  const t0 = Date.now();
  await assert.rejects(gateway.submit(tradingCommands(0)[0]), (err: Error) => {
    assert.ok(err instanceof LeaderUnavailableError);
    assert.equal(err.outcome, 'not-applied');
    assert.match(err.message, /no engine leader is listening on perpx\.test_\w+\.commands\.submit/);
    return true;
  });
  assert.ok(Date.now() - t0 >= 300, 'retried for its grace period');
});

test('a gateway route answers 503 LEADER_UNAVAILABLE (retry-after) when no leader takes the command', { skip }, async () => {
  const nc = await natsConnection();
  const gateway = new NatsCommandSubmitter({ nc, cluster: freshCluster() });
  const app = Fastify();
  installErrorHandling(app, 1 << 20);
  app.post('/order', async () => (await gateway.submit(tradingCommands(0)[0])).result.reply);
  try {
    const res = await app.inject({ method: 'POST', url: '/order' });
    assert.equal(res.statusCode, 503);
    assert.equal(res.headers['retry-after'], '1');
    const body = res.json<{ error: { code: string; message: string } }>();
    assert.equal(body.error.code, 'LEADER_UNAVAILABLE');
    assert.match(body.error.message, /was not applied/);
  } finally {
    await app.close();
  }
});
