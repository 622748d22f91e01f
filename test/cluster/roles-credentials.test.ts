/**
 * The cluster roles as `perpx <role>` runs them, each logged in as its own NATS user (NATS_USER + NATS_PASSWORD)
 * on a nats-server of the test's own that enforces the generated permissions (scripts/cluster/nats-permissions.ts):
 * the engine creates its streams and appends, the gateways follow and send commands, the projector projects, and
 * an order placed through one gateway is read back on both, in live state and history; an operator snapshot asked
 * of a gateway is taken by the engine's replica thread (its own connection, same credentials) and stored.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authorizationBlock, roleUserName, type NatsRole } from '../../src/cluster/nats-permissions.js';
import { connectNats } from '../../src/journal/nats-connection.js';
import { openObjectStoreSnapshots } from '../../src/journal/object-store-snapshots.js';
import { Bot, eventually, http, ok } from '../app/client.js';
import { freePort, PrivateNats, skipUnlessNatsServerBinary } from '../journal/private-nats.js';
import { skipUnless } from '../services.js';
import { startTestCluster, type TestCluster } from './test-cluster.js';

const skip = skipUnlessNatsServerBinary() || (await skipUnless('postgres'));
const cluster = 'creds';
const password = (role: NatsRole) => `${role}-password-${process.pid}`;

describe('cluster roles with per-role NATS credentials', { skip }, () => {
  let dir: string;
  let nats: PrivateNats;
  let C: TestCluster | undefined;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'perpx-cluster-creds-'));
    const conf = join(dir, 'auth.conf');
    const user = (role: NatsRole) => ({ user: roleUserName(cluster, role), password: password(role) });
    writeFileSync(conf, authorizationBlock(cluster, { engine: user('engine'), gateway: user('gateway'), projector: user('projector') }));
    nats = new PrivateNats(await freePort(), join(dir, 'store'), conf);
    await nats.start();
    C = await startTestCluster({}, 2, {
      natsUrl: nats.url, cluster,
      roleEnv: (role) => ({ NATS_USER: roleUserName(cluster, role), NATS_PASSWORD: password(role) }),
    });
  });
  after(async () => {
    await C?.stop();
    await nats?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('an order through gateway 1 is in live state on both gateways and in history', async () => {
    const [g1, g2] = C!.gateways;
    const bot = await new Bot(g1.url).signIn();
    await bot.faucet();
    const order = ok(await bot.limit({ side: 'BUY', quantity: '0.001', limitPrice: 95000 }), 'limit order') as { id: string };
    assert.ok((await bot.openOrders()).some((o) => o.id === order.id), 'gateway 1 shows the order right after the reply');
    const hist = ok(await bot.get(`/api/order?id=${encodeURIComponent(order.id)}`), 'order history') as { list: Array<{ id: string }> };
    assert.deepEqual(hist.list.map((o) => o.id), [order.id]);
    // Gateway 2's follower applies the log as it is appended: the same open order there (same access token).
    const openOnG2 = () => http(g2.url, 'GET', '/api/order/opened', undefined, { authorization: `Bearer ${bot.accessToken}` });
    await eventually(openOnG2, (r) => r.status === 200 && (r.body as Array<{ id: string }>).some((o) => o.id === order.id), 'the order on gateway 2', 10_000);
  });

  test('an operator snapshot through a gateway: admin request to the engine, taken by its replica thread, stored', async () => {
    const [g1] = C!.gateways;
    const snap = ok(await http(g1.url, 'POST', '/api/admin/snapshot', undefined, { 'x-operator-token': g1.operatorToken }), 'snapshot') as { seq: number };
    assert.equal(snap.seq, C!.engine.engine.seq, 'a snapshot at the leader\'s seq');
    // The replica thread's own connection (engine credentials) read the log and wrote the object store.
    const nc = await connectNats(nats.url, 'check', { kind: 'password', user: roleUserName(cluster, 'projector'), password: password('projector') });
    try {
      const stored = await (await openObjectStoreSnapshots({ nc, cluster })).list();
      assert.ok(stored.some((s) => s.seq === snap.seq), `snapshot ${snap.seq} stored: ${JSON.stringify(stored)}`);
    } finally {
      await nc.close();
    }
  });
});
