/**
 * SNAPSHOT_WRITER=standby (issue 30): a hot standby writes the cluster's periodic snapshots from the state it
 * follows, the leader leaves them to it, and a new follower restores from the standby's snapshot to the
 * leader's state. A one-engine cluster has no standby: its leader falls back to its own replica thread.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { NatsConnection } from '@nats-io/transport-node';
import { startEngineNode, type RunningEngineNode } from '../../src/app/roles/engine-node.js';
import { openEngineFollower } from '../../src/cluster/follower.js';
import { createEngine, restoreEngine } from '../../src/engine/engine.js';
import { openObjectStoreSnapshots, type ObjectStoreSnapshotStore } from '../../src/journal/object-store-snapshots.js';
import { restoreNewestVerified } from '../../src/sequencer/recovery.js';
import { silentLogger } from '../journal/helpers.js';
import { natsConnection } from '../journal/jetstream-helpers.js';
import { skipUnless } from '../services.js';
import { startTestCluster, type TestCluster } from './test-cluster.js';
import { setupCommands, startLeader, tradingCommands } from './workload.js';
import { StandbySnapshotWriter } from '../../src/cluster/standby-snapshots.js';
import { dropCluster, freshCluster } from '../journal/jetstream-helpers.js';

const skip = (await skipUnless('nats')) || (await skipUnless('postgres'));
const EVERY = 30;
const ENV = { SNAPSHOT_WRITER: 'standby', SNAPSHOT_EVERY_COMMANDS: String(EVERY), SNAPSHOT_EVERY_MS: '0', LEADER_LEASE_TTL_MS: '1500' };

/** Retries `check` until it passes or `ms` ran out (then its last error). */
async function until(check: () => unknown, ms: number): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > end) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Paced rounds of trading through the leader's sequencer (each command applied and durable before the next). */
async function trade(engine: RunningEngineNode, rounds: number, from = 0, pauseMs = 60): Promise<void> {
  for (let r = from; r < from + rounds; r++) {
    for (const c of tradingCommands(r)) await engine.sequencer.submit(c);
    await new Promise((res) => setTimeout(res, pauseMs));
  }
}

describe('standby snapshots: two engines', { skip, timeout: 120_000 }, () => {
  let C: TestCluster;
  let standby: RunningEngineNode;
  let nc: NatsConnection;
  let store: ObjectStoreSnapshotStore;

  before(async () => {
    C = await startTestCluster(ENV, 1);
    standby = await startEngineNode(C.config('engine-2'), { waitForLeadership: false });
    nc = await natsConnection();
    store = await openObjectStoreSnapshots({ nc, cluster: C.cluster });
  });

  after(async () => {
    await standby?.close();
    await C?.stop();
    await store?.close();
  });

  test('the standby writes them, the leader leaves them to it, a new follower restores the leader\'s state', async () => {
    assert.equal(standby.role, 'standby');
    const stats = C.engine.sequencer.stats;
    const savedBefore = stats.snapshotsSaved;
    await trade(C.engine, 40); // 280 commands: about nine due snapshots
    const standbyLabel = `standby ${standby.id}`;
    await until(async () => {
      const list = await store.list();
      assert.ok(list.some((s) => s.writer === standbyLabel), JSON.stringify(list));
    }, 20_000);
    assert.ok(stats.snapshotsLeftToStandby >= 3, `left to the standby: ${stats.snapshotsLeftToStandby}`);
    // The leader saves its own only while no standby snapshot is fresh (the first due ones, or a standby slowed
    // by a loaded machine): most are the standby's.
    const saved = stats.snapshotsSaved - savedBefore;
    assert.ok(saved < stats.snapshotsLeftToStandby, `the leader saved ${saved}, left ${stats.snapshotsLeftToStandby} to the standby`);

    const newest = (await store.list()).at(-1);
    assert.ok(newest && newest.writer === standbyLabel, `newest: ${JSON.stringify(newest)}`);
    // It verifies (checksum, state hash) and is not ahead of the log.
    const restored = await restoreNewestVerified(store, restoreEngine, { journalSeq: C.engine.engine.seq, logger: silentLogger });
    assert.equal(restored.engine?.seq, newest.seq);
    assert.deepEqual(restored.skipped, []);

    const follower = await openEngineFollower({ nc, cluster: C.cluster, snapshots: store, createEngine, restoreEngine, logger: silentLogger });
    try {
      await trade(C.engine, 2, 100);
      const seq = C.engine.engine.seq;
      await follower.waitFor(seq, 10_000);
      assert.equal(follower.engine.stateHash(), C.engine.engine.stateHash(), 'a follower from the standby snapshot reaches the leader\'s state');
    } finally {
      await follower.close();
    }
  });
});

test('two standbys due at the same seqs: mostly one writes a round, the other skips it', { skip, timeout: 60_000 }, async () => {
  const nc = await natsConnection();
  const cluster = freshCluster();
  try {
    const leader = await startLeader(nc, cluster);
    const stores = [await openObjectStoreSnapshots({ nc, cluster, writer: 'standby a' }), await openObjectStoreSnapshots({ nc, cluster, writer: 'standby b' })];
    const writers = stores.map((store) => new StandbySnapshotWriter({ store, everyCommands: 20, everyMs: 0, jitterMs: 200, logger: silentLogger }));
    // Both count from seq 0 (no snapshot yet): due at the same seqs, as standbys restored from one snapshot are.
    const a = await openEngineFollower({ nc, cluster, createEngine, restoreEngine, logger: silentLogger, onApplied: (e, x) => writers[0].onApplied(e, x) });
    for (const c of setupCommands()) await leader.sequencer.submit(c);
    const b = await openEngineFollower({ nc, cluster, snapshots: stores[1], createEngine, restoreEngine, logger: silentLogger, onApplied: (e, x) => writers[1].onApplied(e, x) });
    for (let r = 0; r < 24; r++) {
      for (const c of tradingCommands(200 + r)) await leader.sequencer.submit(c);
      await Promise.all([a.waitFor(leader.sequencer.seq, 10_000), b.waitFor(leader.sequencer.seq, 10_000)]);
      await new Promise((res) => setTimeout(res, 300)); // each round's writes land before the next is due
    }
    for (const w of writers) await w.close();
    const [sa, sb] = writers.map((w) => w.stats);
    assert.ok(sa.saved + sb.saved >= 6, JSON.stringify({ sa, sb }));
    assert.ok(sa.skipped + sb.skipped >= 4, `the later standby skips the rounds covered: ${JSON.stringify({ sa, sb })}`);
    assert.equal(sa.failures + sb.failures, 0);
    const restored = await restoreNewestVerified(stores[0], restoreEngine, { journalSeq: leader.sequencer.seq, logger: silentLogger });
    assert.ok(restored.engine && restored.skipped.length === 0);
    await a.close();
    await b.close();
    for (const st of stores) await st.close();
    await leader.stop();
  } finally {
    await dropCluster(nc, cluster);
  }
});

describe('standby snapshots: one engine', { skip, timeout: 120_000 }, () => {
  let C: TestCluster;
  let nc: NatsConnection;
  let store: ObjectStoreSnapshotStore;

  before(async () => {
    C = await startTestCluster(ENV, 1);
    nc = await natsConnection();
    store = await openObjectStoreSnapshots({ nc, cluster: C.cluster });
  });

  after(async () => {
    await C?.stop();
    await store?.close();
  });

  test('no standby: the leader falls back to its own replica thread', async () => {
    const stats = C.engine.sequencer.stats;
    await trade(C.engine, 20); // about 120 commands: four due (one still waiting is superseded by the next)
    await until(() => assert.ok(stats.snapshotsSaved >= 2, `saved ${stats.snapshotsSaved} taken ${stats.snapshotsTaken} left ${stats.snapshotsLeftToStandby} failed ${stats.snapshotFailures} seq ${C.engine.engine.seq}`), 20_000);
    assert.equal(stats.snapshotsLeftToStandby, 0);
    const list = await store.list();
    assert.ok(list.length > 0 && list.every((s) => s.writer === undefined), JSON.stringify(list));
    const restored = await restoreNewestVerified(store, restoreEngine, { journalSeq: C.engine.engine.seq, logger: silentLogger });
    assert.equal(restored.engine?.seq, list.at(-1)?.seq);
  });
});
