/**
 * The single process on the cluster's shared state, end to end: AUTH_STORE=postgres (a fresh database, dropped
 * after) and REALTIME_BROKER=nats (a fresh cluster name on the machine's NATS). A wallet signs in, trades and
 * listens on its order channel through a real centrifuge client; the user is a row in PostgreSQL, and another
 * broker on the same NATS (a second gateway) reads the same publications with the same offsets and epoch.
 * A logout ends the live subscription (revocation through the NATS session events).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Centrifuge } from 'centrifuge';
import pg from 'pg';
import WebSocket from 'ws';
import { NatsBroker } from '../../src/realtime/nats-broker.js';
import { NATS_TEST_URL, skipUnless } from '../services.js';
import { createPostgresTestDatabase } from '../store/dialects.js';
import { Bot, eventually, http, ok, singleProcessOnly, startTestExchange, type TestExchange } from './client.js';

const skip = singleProcessOnly || (await skipUnless('nats')) || (await skipUnless('postgres'));

describe('e2e: AUTH_STORE=postgres and REALTIME_BROKER=nats', { skip }, () => {
  const cluster = `test_${randomBytes(6).toString('hex')}`;
  let X: TestExchange;
  let database: Awaited<ReturnType<typeof createPostgresTestDatabase>>;
  let nc: NatsConnection;

  before(async () => {
    database = await createPostgresTestDatabase();
    nc = await connect({ servers: NATS_TEST_URL, name: 'second gateway' });
    X = await startTestExchange({
      AUTH_STORE: 'postgres', AUTH_DATABASE_URL: database.connectionString, REALTIME_BROKER: 'nats', NATS_URL: NATS_TEST_URL, CLUSTER_NAME: cluster,
    });
  });
  after(async () => {
    await X?.stop();
    if (nc) {
      await (await jetstreamManager(nc)).streams.delete(`PERPX_${cluster}_REALTIME`).catch(() => undefined);
      await nc.close();
    }
    await database?.drop();
  });

  test('sign in, trade and listen; the user is in PostgreSQL and the history on NATS is the same on another gateway', async () => {
    const bot = await new Bot(X.url).signIn();
    await bot.faucet();
    const rows = await new pg.Pool({ connectionString: database.connectionString, max: 1 });
    try {
      const users = await rows.query('SELECT exchange_id FROM auth_users WHERE wallet_lower = $1', [bot.wallet.address.toLowerCase()]);
      assert.deepEqual(users.rows.map((r) => Number(r.exchange_id)), [bot.exchangeId]);
    } finally {
      await rows.end();
    }

    const channel = `${X.ex.channelPrefix}order-${bot.exchangeId}`;
    const client = new Centrifuge(X.ex.wsUrl, { websocket: WebSocket });
    const sub = client.newSubscription(channel, { data: { accessToken: bot.accessToken }, recoverable: true, positioned: true });
    const seen: Array<{ offset: number; id: string; status: string }> = [];
    const ended: number[] = [];
    sub.on('publication', (ctx) => {
      const d = ctx.data as { id: string; status: string };
      seen.push({ offset: Number(ctx.offset), id: d.id, status: d.status });
    });
    sub.on('unsubscribed', (ctx) => ended.push(ctx.code));
    const subscribed = new Promise<void>((resolve, reject) => {
      sub.once('subscribed', () => resolve());
      sub.once('error', (ctx) => reject(new Error(JSON.stringify(ctx.error))));
    });
    sub.subscribe();
    client.connect();
    try {
      await subscribed;
      const order = ok(await bot.limit({ side: 'BUY', quantity: '0.001', limitPrice: 50000 }), 'limit order') as { id: string };
      await eventually(async () => seen.filter((p) => p.id === order.id).length, (n) => n > 0, 'the order on the websocket');

      // Gateway 2: its own broker on its own connection reads the channel's history from the stream.
      const gateway2 = await NatsBroker.open({ nc, stream: `PERPX_${cluster}_REALTIME`, subjectPrefix: `perpx.${cluster}.rt`, maxHistorySize: 1000 });
      try {
        const h = await gateway2.history(channel, { limit: 100 });
        const kept = h.publications.map((p) => ({ offset: p.offset, id: (p.data as { id: string }).id, status: (p.data as { status: string }).status }));
        for (const s of seen) assert.ok(kept.some((k) => k.offset === s.offset && k.id === s.id && k.status === s.status), `publication ${s.offset} kept on NATS`);
        assert.equal(h.offset, Math.max(...seen.map((s) => s.offset)));
      } finally {
        await gateway2.close();
      }

      // Logout: the session's live subscription ends (the revocation went through the NATS session events).
      ok(await http(X.url, 'POST', '/auth/logout', undefined, { authorization: `Bearer ${bot.accessToken}` }), 'logout');
      await eventually(async () => ended.length, (n) => n > 0, 'the logged-out session\'s subscription to end');
    } finally {
      client.disconnect();
    }
  });
});
