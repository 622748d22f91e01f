/**
 * A gateway dies under signed load behind haproxy (real processes: `perpx engine`, `projector`, two `gateway`s,
 * Debian's haproxy in front, as `npm run cluster` runs them). Bots place signed orders through haproxy's one
 * URL and listen on their private order channel through it. Gateway 1 gets SIGKILL; then:
 *   - websocket clients that were on it reconnect through haproxy to gateway 2 and recover from their last
 *     offset: per bot, contiguous offsets and every order's publication;
 *   - a request in flight on it fails in transit and is resent with the same signed body (same order id): it
 *     is then acknowledged, or refused as a duplicate because the first attempt reached the engine; never two
 *     orders;
 *   - every order that was acknowledged (or applied on an earlier attempt) is in live state and in history,
 *     and nothing else is; the leader's state hash equals an independent replay of the log, which holds them;
 *   - gateway 1, restarted, is healthy again in haproxy and serves orders and reads.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import pino from 'pino';
import { buildFollower, type Following } from '../../src/app/builders/follower.js';
import type { Built } from '../../src/app/shutdown-registry.js';
import { deleteClusterStreams } from '../../scripts/cluster/cluster-resources.js';
import { findHaproxy, HaproxyProcess } from '../../scripts/cluster/haproxy.js';
import { startLocalCluster, type LocalCluster } from '../../scripts/cluster/local-cluster.js';
import { Bot, eventually, ok, RAISED_RATE_LIMITS } from '../app/client.js';
import { NATS_TEST_URL, PG_ADMIN_URL, skipUnless, skipUnlessInstalled } from '../services.js';
import { createPostgresTestDatabase } from '../store/dialects.js';
import { orderLoad, OrderChannelListener, sendUntilAnswered, type SentOrder } from './failover-clients.js';
import { NO_NATS_AUTH } from '../../src/journal/nats-connection.js';

const skip = (await skipUnless('nats')) || (await skipUnless('postgres'))
  || skipUnlessInstalled('haproxy', findHaproxy(), 'apt-get install -y haproxy');

const BOTS = 4;
const WORKERS_PER_BOT = 2;

/** A port nobody listens on now (the kernel's pick), for a process that needs to know its port in advance. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Two free ports in a row (a gateway restarted after a kill must come back on the port haproxy knows). */
async function freePortPair(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port >= 65535) continue;
    const next = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port + 1, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (next) return port;
  }
}

describe('haproxy in front of two gateways: SIGKILL of one under signed load', { skip, timeout: 180_000 }, () => {
  const cluster = `hk${randomBytes(4).toString('hex')}`;
  const root = mkdtempSync(join(tmpdir(), 'perpx-haproxy-'));
  const databases: Array<Awaited<ReturnType<typeof createPostgresTestDatabase>>> = [];
  let C: LocalCluster | undefined;
  let haproxy: HaproxyProcess | undefined;
  let channelPrefix = '';

  before(async () => {
    const [auth, read] = [await createPostgresTestDatabase(), await createPostgresTestDatabase()];
    databases.push(auth, read);
    const gatewayPort = await freePortPair();
    C = await startLocalCluster({
      cluster, natsUrl: NATS_TEST_URL, pgAdminUrl: PG_ADMIN_URL, dataDir: root, gateways: 2, gatewayPort,
      authDatabase: new URL(auth.connectionString).pathname.slice(1), readDatabase: new URL(read.connectionString).pathname.slice(1),
      env: { ...RAISED_RATE_LIMITS, LOG_LEVEL: 'warn', SIGNATURE_THREADS: '0', HEARTBEAT_MS: '1000', TRUST_PROXY: 'loopback', SHUTDOWN_GRACE_MS: '2000' },
      engineEnv: { SEED_DEMO: 'true', MARKET_MAKERS: '0', DEMO_WALLET: 'false', INDEX_FEED: 'off', FUNDING_INTERVAL_MS: '0' },
    });
    channelPrefix = /channels "([^"]*)</.exec((await C.gateways[0].ready).banner)![1];
    haproxy = new HaproxyProcess({
      host: '127.0.0.1', port: await freePort(), dir: root,
      gateways: C.gatewayUrls.map((url, i) => ({ name: `gateway-${i + 1}`, address: new URL(url).host })),
    });
    await haproxy.ready();
    await eventually(() => haproxy!.serverStates(), (s) => s['gateway-1'] === 'UP' && s['gateway-2'] === 'UP', 'both gateways UP in haproxy', 10_000);
  });

  after(async () => {
    await haproxy?.stop();
    await C?.stop();
    await deleteClusterStreams(NATS_TEST_URL, cluster).catch(() => undefined);
    for (const db of databases) await db.drop();
    rmSync(root, { recursive: true, force: true });
  });

  test('clients reconnect through haproxy and recover; no acknowledged order is lost or doubled; the gateway comes back', async (t) => {
    const url = haproxy!.url;
    const wsUrl = `${url.replace(/^http/, 'ws')}/connection/websocket`;
    const bots = await Promise.all(Array.from({ length: BOTS }, async () => {
      const bot = await new Bot(url).signIn();
      await bot.faucet();
      return bot;
    }));
    // One at a time, so haproxy's leastconn puts half of them on each gateway.
    const listeners: OrderChannelListener[] = [];
    for (const bot of bots) {
      const l = new OrderChannelListener(wsUrl, `${channelPrefix}order-${bot.exchangeId}`, bot.accessToken);
      listeners.push(l);
      await l.ready();
    }

    try {
      await underLoad(t, bots, listeners);
    } finally {
      for (const l of listeners) l.close();
    }
  });

  async function underLoad(t: TestContext, bots: Bot[], listeners: OrderChannelListener[]): Promise<void> {
    const url = haproxy!.url;
    let running = true;
    const sent = bots.map((): SentOrder[] => []);
    const loadStarted = Date.now();
    const load = Promise.all(bots.map((bot, i) => orderLoad(bot, WORKERS_PER_BOT, sent[i], () => running)));
    const acked = (i: number) => sent[i].filter((o) => o.outcome === 'acked').length;
    const [gateway1] = C!.gateways;
    try {
      await eventually(async () => bots.map((_, i) => acked(i)), (n) => n.every((x) => x >= 3), 'orders acknowledged before the kill', 30_000);

      await gateway1.kill('SIGKILL');
      const ackedAtKill = bots.map((_, i) => acked(i));
      await eventually(() => haproxy!.serverStates(), (s) => s['gateway-1'] !== 'UP', 'haproxy marks gateway 1 down', 10_000);
      // The load goes on through gateway 2 alone, and the listeners that were on gateway 1 are back.
      await eventually(async () => bots.map((_, i) => acked(i) - ackedAtKill[i]), (n) => n.every((x) => x >= 3), 'orders acknowledged after the kill', 30_000);
      await eventually(async () => listeners.map((l) => l.resubscribed.length), (n) => n.some((x) => x > 0), 'a listener reconnected', 15_000);
    } finally {
      running = false;
      await load;
    }
    t.diagnostic(`load and kill: ${Date.now() - loadStarted} ms`);

    // Gateway 1 again, under its old name and port: haproxy sends it traffic once its health check passes.
    const restartStarted = Date.now();
    const restarted = await C!.restart(gateway1);
    await eventually(() => haproxy!.serverStates(), (s) => s['gateway-1'] === 'UP', 'haproxy marks gateway 1 up again', 10_000);
    // Served again: an order straight through the restarted gateway, read back at once from it.
    const direct = Object.assign(new Bot(C!.gatewayUrls[0], bots[0].wallet), { accessToken: bots[0].accessToken, exchangeId: bots[0].exchangeId });
    const again = await sendUntilAnswered(direct, '90500.0');
    assert.deepEqual([again.outcome, again.status], ['acked', 'NEW'], `order through the restarted gateway: ${again.detail ?? ''}`);
    sent[0].push(again);
    const openOnRestarted = await direct.openOrders();
    assert.ok(openOnRestarted.some((o) => o.id === again.id), `the restarted gateway reads its own write ${JSON.stringify(again)}: ${JSON.stringify(openOnRestarted.slice(-3))}, ${openOnRestarted.length} open`);
    assert.notEqual(restarted.pid, gateway1.pid);
    t.diagnostic(`restart until served: ${Date.now() - restartStarted} ms`);

    const all = sent.flat();
    const inTransit = all.filter((o) => o.transitFailures > 0);
    t.diagnostic(`${all.length} orders, ${all.filter((o) => o.outcome === 'acked').length} acked, ${all.filter((o) => o.outcome === 'applied-earlier').length} applied on an earlier attempt, ${inTransit.length} resent after a failure in transit; reconnects per listener ${listeners.map((l) => l.resubscribed.length).join(', ')}`);
    const unanswered = all.filter((o) => o.outcome === 'refused' || o.outcome === 'gave-up');
    assert.deepEqual(unanswered, [], 'every order was answered: acknowledged, or already applied');
    assert.deepEqual(all.filter((o) => o.outcome === 'acked' && o.status !== 'NEW'), [], 'every acknowledged order rests');

    const operatorToken = readFileSync(join(root, 'gateway-2', 'operator-token'), 'utf8').trim();
    const checkpoint = ok(await (await fetch(`${url}/api/admin/checkpoint`, { method: 'POST', headers: { 'x-operator-token': operatorToken } }).then(async (r) => ({ status: r.status, body: await r.json() }))), 'checkpoint') as { seq: number; stateHash: string };
    const replay: Built<Following> = await buildFollower({ nats: { url: NATS_TEST_URL, cluster, streamReplicas: 1, auth: NO_NATS_AUTH } }, 'haproxy test replay', { log: pino({ level: 'silent' }) });
    try {
      await replay.service.follower.waitFor(checkpoint.seq, 30_000);
      assert.equal(replay.service.follower.engine.stateHash(), checkpoint.stateHash, 'the leader\'s state equals a replay of the log');

      for (const [i, bot] of bots.entries()) {
        const expected = sent[i].map((o) => o.id).sort();
        // Live state (a gateway's follower), history (PostgreSQL) and the replay hold exactly these orders, once each.
        const open = (await bot.openOrders()).map((o) => o.id as string).sort();
        assert.deepEqual(open, expected, `bot ${i}: open orders`);
        const history = ok(await bot.get('/api/order?limit=500'), 'history') as { list: Array<{ id: string }> };
        assert.deepEqual(history.list.map((o) => o.id).sort(), expected, `bot ${i}: order history`);
        assert.deepEqual(replay.service.follower.engine.openOrders(bot.exchangeId).map((o) => o.id).sort(), expected, `bot ${i}: the leader's orders`);

        // Its channel: every order's publication, offsets contiguous across the reconnects, each reconnect recovered.
        const l = listeners[i];
        await eventually(async () => new Set(l.publications.map((p) => p.id)), (ids) => expected.every((id) => ids.has(id)), `bot ${i}: every order on the channel`, 10_000);
        const offsets = l.publications.map((p) => p.offset);
        assert.deepEqual(offsets, offsets.map((_, k) => offsets[0] + k), `bot ${i}: contiguous offsets, nothing missing or twice`);
        assert.deepEqual(l.resubscribed.filter((s) => !s.recovered), [], `bot ${i}: every reconnect recovered its position`);
        assert.deepEqual(l.errors, [], `bot ${i}: subscription errors`);
      }
    } finally {
      await replay.stop();
    }
  }
});
