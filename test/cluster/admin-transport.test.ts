/**
 * Admin calls over NATS (issue 30): a leader with a lease epoch answers only on its epoch's subjects, so an
 * old leader that is still subscribed (SIGSTOPped, then resumed) never takes a call meant for the current one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { natsEngineAdmin, serveAdmin, type EngineAdmin } from '../../src/cluster/admin-transport.js';
import { LeaderUnavailableError } from '../../src/cluster/errors.js';
import { newSequencerStats } from '../../src/sequencer/stats.js';
import { dropCluster, freshCluster, natsConnection } from '../journal/jetstream-helpers.js';
import { silentLogger } from '../journal/helpers.js';
import { skipUnless } from '../services.js';

const skip = await skipUnless('nats');

/** An engine admin that answers with its own name in the checkpoint and counts its calls. */
function fakeLeader(name: string, seq: number): EngineAdmin & { calls: number } {
  const admin = {
    calls: 0,
    snapshotNow: async () => { admin.calls++; return seq; },
    checkpoint: async () => { admin.calls++; return { seq, stateHash: name }; },
  };
  return admin;
}

test('admin calls reach the leader of the current epoch only', { skip, timeout: 30_000 }, async () => {
  const nc = await natsConnection();
  const cluster = freshCluster();
  try {
    const old = fakeLeader('old', 10);
    const current = fakeLeader('current', 20);
    const servers = [
      serveAdmin({ nc, cluster, epoch: 5, admin: old, stats: () => ({ seq: 10, stats: newSequencerStats() }), logger: silentLogger }),
      serveAdmin({ nc, cluster, epoch: 9, admin: current, stats: () => ({ seq: 20, stats: newSequencerStats() }), logger: silentLogger }),
    ];
    await nc.flush();
    const directory = { epoch: 9 as number | undefined };
    const gateway = natsEngineAdmin(nc, cluster, directory, 2_000);
    for (let i = 0; i < 20; i++) assert.equal((await gateway.checkpoint()).stateHash, 'current');
    assert.equal(await gateway.snapshotNow(), 20);
    assert.equal((await gateway.stats()).seq, 20, 'stats come from the current leader');
    assert.equal(old.calls, 0, 'the deposed leader took no admin call');
    assert.equal(current.calls, 21);

    // A newer epoch nobody serves yet: the call fails as unavailable instead of reaching an older leader.
    directory.epoch = 10;
    await assert.rejects(natsEngineAdmin(nc, cluster, directory, 500).checkpoint(), LeaderUnavailableError);
    assert.equal(old.calls + current.calls, 21);

    // No leader at all (the lease is free): refused at once as not applied, nothing sent.
    directory.epoch = undefined;
    await assert.rejects(gateway.snapshotNow(), (err) => err instanceof LeaderUnavailableError && err.outcome === 'not-applied');
    assert.equal(old.calls + current.calls, 21);
    servers.forEach((s) => s.close());
  } finally {
    await dropCluster(nc, cluster).catch(() => {});
  }
});
