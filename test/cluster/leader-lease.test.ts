/** The engine leader lease in JetStream KV (machine's NATS, a fresh bucket per test). */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { LeaderLease } from '../../src/cluster/leader-lease.js';
import { NATS_TEST_URL, skipUnless } from '../services.js';

const skip = await skipUnless('nats');

describe('leader lease (JetStream KV)', { skip }, () => {
  let nc: NatsConnection;
  const clusters: string[] = [];
  const fresh = () => {
    const c = `lease${randomBytes(4).toString('hex')}`;
    clusters.push(c);
    return c;
  };
  before(async () => {
    nc = await connect({ servers: NATS_TEST_URL });
  });
  after(async () => {
    const jsm = await jetstreamManager(nc);
    for (const c of clusters) await jsm.streams.delete(`KV_perpx-${c}-leader`).catch(() => undefined);
    await nc.close();
  });

  test('one holder at a time; renewals keep it; a lapsed lease is taken with a higher epoch and the old holder cannot renew', async () => {
    const cluster = fresh();
    const ttlMs = 1500;
    const a = await LeaderLease.open(nc, cluster, { holderId: 'a', ttlMs });
    const b = await LeaderLease.open(nc, cluster, { holderId: 'b', ttlMs });
    assert.equal(await a.tryAcquire(), true);
    assert.equal(await b.tryAcquire(), false, 'held: nobody else takes it');
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, ttlMs / 3));
      assert.equal(await a.renew(), true, 'renewed within the TTL');
      assert.equal(await b.tryAcquire(), false);
    }
    assert.equal((await b.current())?.holder, 'a');
    const epochA = a.epoch;
    // a stops renewing: b gets it once the last write ages out.
    const t0 = Date.now();
    while (!(await b.tryAcquire())) {
      assert.ok(Date.now() - t0 < ttlMs * 4, 'the lapsed lease became free');
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(Date.now() - t0 >= ttlMs * 0.8, `not taken before it lapsed (${Date.now() - t0} ms)`);
    assert.ok(b.epoch > epochA, 'a takeover raises the epoch');
    assert.equal(await a.renew(), false, 'the deposed holder cannot renew');
    assert.equal((await a.current())?.holder, 'b');
  });

  test('a released lease is free at once', async () => {
    const cluster = fresh();
    const a = await LeaderLease.open(nc, cluster, { holderId: 'a', ttlMs: 60_000 });
    const b = await LeaderLease.open(nc, cluster, { holderId: 'b', ttlMs: 60_000 });
    assert.equal(await a.tryAcquire(), true);
    await a.release();
    assert.equal(await b.tryAcquire(), true);
  });
});
