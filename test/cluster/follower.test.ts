/**
 * The engine follower against a real leader (Sequencer + JetStream journal on the machine's NATS): one
 * follower started before the commands and one started after a snapshot reach the leader's state hash and
 * emit exactly the event batches the leader published; waitFor resolves when its seq is applied and times
 * out cleanly; a damaged message in the log stops the follower instead of being applied.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FollowerTimeoutError } from '../../src/cluster/errors.js';
import { openEngineFollower, type JetStreamEngineFollower } from '../../src/cluster/follower.js';
import type { EventBatch } from '../../src/engine/commands.js';
import { createEngine, restoreEngine } from '../../src/engine/engine.js';
import { openJetStreamJournal } from '../../src/journal/jetstream-journal.js';
import { openObjectStoreSnapshots } from '../../src/journal/object-store-snapshots.js';
import { JournalIntegrityError } from '../../src/journal/ports.js';
import { InProcessEventBroker } from '../../src/sequencer/event-bus.js';
import { dropCluster, freshCluster, natsConnection, publishGroup } from '../journal/jetstream-helpers.js';
import { silentLogger } from '../journal/helpers.js';
import { skipUnless } from '../services.js';
import { setupCommands, startLeader, tradingCommands } from './workload.js';

const skip = await skipUnless('nats');

/** A bus that records every batch it carries. */
function recordingBus(): { bus: InProcessEventBroker; batches: EventBatch[] } {
  const bus = new InProcessEventBroker({ logger: silentLogger });
  const batches: EventBatch[] = [];
  bus.subscribe('record', (b) => void batches.push(b));
  return { bus, batches };
}

/** Settles to 'pending' if the promise has not settled by the next macrotask. */
async function settled(p: Promise<unknown>): Promise<'resolved' | 'rejected' | 'pending'> {
  const tick = new Promise<'pending'>((r) => setImmediate(() => r('pending')));
  return Promise.race([p.then(() => 'resolved' as const, () => 'rejected' as const), tick]);
}

test('followers started before and after a snapshot reach the leader\'s state and emit its event batches', { skip, timeout: 60_000 }, async () => {
  const nc = await natsConnection();
  const cluster = freshCluster();
  const followers: JetStreamEngineFollower[] = [];
  const snapshots = await openObjectStoreSnapshots({ nc, cluster, keep: 2 });
  try {
    const leaderBus = recordingBus();
    const leader = await startLeader(nc, cluster, { snapshots, bus: leaderBus.bus });
    const early = recordingBus();
    const before = await openEngineFollower({ nc, cluster, createEngine, restoreEngine, bus: early.bus, logger: silentLogger });
    followers.push(before);
    assert.equal(before.seq, 0);

    for (const c of [...setupCommands(), ...tradingCommands(0)]) await leader.sequencer.submit(c);
    const snapshotSeq = await leader.sequencer.snapshotNow();
    // Commands submitted concurrently: several per group commit, so per JetStream message.
    await Promise.all([...tradingCommands(1), ...tradingCommands(2)].map((c) => leader.sequencer.submit(c)));

    const late = recordingBus();
    const after = await openEngineFollower({ nc, cluster, snapshots, createEngine, restoreEngine, bus: late.bus, logger: silentLogger });
    followers.push(after);
    const checkpoint = await leader.sequencer.checkpoint();
    await Promise.all([before.waitFor(checkpoint.seq, 20_000), after.waitFor(checkpoint.seq, 20_000)]);
    assert.equal(before.engine.stateHash(), checkpoint.stateHash, 'follower started before the commands');
    assert.equal(after.engine.stateHash(), checkpoint.stateHash, 'follower started from the snapshot');
    assert.equal(late.batches[0]?.seq, snapshotSeq + 1, 'the late follower started from the snapshot, not from zero');

    await leaderBus.bus.drain();
    await early.bus.drain();
    await late.bus.drain();
    assert.ok(leaderBus.batches.some((b) => b.events.some((e) => e.type === 'fill')), 'the workload traded');
    assert.deepEqual(early.batches, leaderBus.batches, 'the follower emits the leader\'s event batches');
    assert.deepEqual(late.batches, leaderBus.batches.filter((b) => b.seq > snapshotSeq));

    // waitFor: pending until its seq is applied, then resolved; a seq never reached times out cleanly.
    const next = before.waitFor(checkpoint.seq + 1, 20_000);
    assert.equal(await settled(next), 'pending');
    await assert.rejects(before.waitFor(checkpoint.seq + 100, 50), (err: Error) => {
      assert.ok(err instanceof FollowerTimeoutError);
      assert.match(err.message, new RegExp(`at seq ${checkpoint.seq} did not reach seq ${checkpoint.seq + 100} within 50 ms`));
      return true;
    });
    await leader.sequencer.submit(tradingCommands(3)[0]);
    await next;
    assert.ok(before.seq >= checkpoint.seq + 1);
    assert.equal(before.state, 'following', 'a timed-out wait leaves the follower following');

    // Closing rejects what still waits.
    const orphan = before.waitFor(checkpoint.seq + 1000, 20_000);
    await before.close();
    await assert.rejects(orphan, /closed/);
    await leader.stop();
  } finally {
    for (const f of followers) await f.close();
    await snapshots.close();
    await dropCluster(nc, cluster);
  }
});

test('a damaged message in the log stops the follower at the seq before it; waits reject with the fault', { skip, timeout: 30_000 }, async () => {
  const nc = await natsConnection();
  const cluster = freshCluster();
  try {
    await (await openJetStreamJournal({ nc, cluster })).close(); // creates the stream
    await publishGroup(nc, cluster, 1, 3);
    const follower = await openEngineFollower({ nc, cluster, createEngine, restoreEngine, logger: silentLogger });
    await follower.waitFor(3, 10_000);
    const waiting = follower.waitFor(5, 10_000);
    await publishGroup(nc, cluster, 4, 5, true);
    await assert.rejects(waiting, (err: Error) => {
      assert.ok(err instanceof JournalIntegrityError);
      assert.match(err.message, /JetStream message 2 of stream \S+ fails its checksum/);
      return true;
    });
    assert.deepEqual([follower.state, follower.seq], ['failed', 3]);
    await assert.rejects(follower.waitFor(4, 1000), JournalIntegrityError);
    await follower.close();
  } finally {
    await dropCluster(nc, cluster);
  }
});
