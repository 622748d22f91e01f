// Connect, public/private subscriptions, ordering, batching, errors — with the real
// centrifuge client (plus a raw ws client where the wire format itself is under test).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { PublicationContext } from 'centrifuge';
import { PUBLIC, RawClient, client, connected, startServer, subscribed, waitFor } from './helpers.js';
import type { RealtimeServer } from '../../src/realtime/index.js';

describe('realtime channels', () => {
  let rt: RealtimeServer;
  let url: string;
  before(async () => ({ rt, url } = await startServer()));
  after(() => rt.close());

  test('connects and gets a client id', async () => {
    const c = client(url);
    const ctx = new Promise<{ client: string }>((r) => c.once('connected', (x) => r(x)));
    c.connect();
    const { client: id } = await ctx;
    assert.match(id, /^[0-9a-f-]{36}$/);
    await waitFor(() => rt.stats.connections === 1);
    c.disconnect();
    await waitFor(() => rt.stats.connections === 0);
  });

  test('public channel: publications arrive in order; unsubscribe stops them', async () => {
    const c = client(url);
    c.connect();
    const sub = c.newSubscription(PUBLIC);
    const got: unknown[] = [];
    sub.on('publication', (ctx: PublicationContext) => got.push(ctx.data));
    sub.subscribe();
    await subscribed(sub);
    assert.equal(rt.stats.subscriptions, 1);
    for (let i = 0; i < 100; i++) await rt.publish(PUBLIC, { n: i });
    await waitFor(() => got.length === 100);
    assert.deepEqual(got, Array.from({ length: 100 }, (_, i) => ({ n: i })));

    sub.unsubscribe();
    await waitFor(() => rt.stats.subscriptions === 0);
    // A witness channel on the same connection: the server writes in order, so once the marker published after
    // 'late' has arrived, 'late' would have arrived before it.
    const witness = c.newSubscription(`${PUBLIC}-witness`);
    const marks: unknown[] = [];
    witness.on('publication', (ctx: PublicationContext) => marks.push(ctx.data));
    witness.subscribe();
    await subscribed(witness);
    await rt.publish(PUBLIC, { n: 'late' });
    await rt.publish(`${PUBLIC}-witness`, { mark: 1 });
    await waitFor(() => marks.length === 1);
    assert.equal(got.length, 100);
    c.disconnect();
  });

  test('publications made in one tick leave in one frame', async () => {
    const raw = new RawClient(url);
    await waitFor(() => raw.reply(1) !== undefined);
    raw.send({ id: 2, subscribe: { channel: PUBLIC } });
    await waitFor(() => raw.reply(2) !== undefined);
    const before = raw.frames.length;
    for (let i = 0; i < 10; i++) void rt.publish(PUBLIC, { i });
    await waitFor(() => raw.messages.filter((m) => m.push).length === 10);
    assert.equal(raw.frames.length, before + 1, 'one frame for the 10 pushes');
    assert.equal(raw.frames.at(-1)!.split('\n').length, 10);
    raw.ws.close();
  });

  test('replies carry the command id; unknown method → 104; publish → 103', async () => {
    const raw = new RawClient(url);
    await waitFor(() => raw.reply(1) !== undefined);
    const connect = raw.reply(1)!.connect as Record<string, unknown>;
    assert.equal(connect.pong, true);
    assert.equal(typeof connect.ping, 'number');
    raw.ws.send(JSON.stringify({ id: 2, rpc: { method: 'x' } }) + '\n' + JSON.stringify({ id: 3, publish: { channel: PUBLIC, data: {} } }));
    await waitFor(() => raw.reply(3) !== undefined);
    assert.equal((raw.reply(2)!.error as { code: number }).code, 104);
    assert.equal((raw.reply(3)!.error as { code: number }).code, 103);
    raw.ws.close();
  });

  test('a command before connect → disconnected with 3501 bad request', async () => {
    const raw = new RawClient(url, { connect: false });
    await raw.opened;
    raw.send({ id: 1, subscribe: { channel: PUBLIC } });
    await raw.closed;
    assert.equal(raw.closeCode, 3501);
  });

  test('unknown channel → subscription error 102, client stops trying', async () => {
    const c = client(url);
    c.connect();
    const sub = c.newSubscription('test:nope');
    sub.subscribe();
    await assert.rejects(subscribed(sub), (e: { code: number }) => e.code === 102);
    assert.equal(sub.state, 'unsubscribed');
    c.disconnect();
  });

  test('already subscribed → 105', async () => {
    const raw = new RawClient(url);
    await waitFor(() => raw.reply(1) !== undefined);
    raw.send({ id: 2, subscribe: { channel: PUBLIC } });
    raw.send({ id: 3, subscribe: { channel: PUBLIC } });
    await waitFor(() => raw.reply(3) !== undefined && raw.reply(2) !== undefined);
    assert.equal((raw.reply(3)!.error as { code: number }).code, 105);
    assert.ok(raw.reply(2)!.subscribe);
    raw.ws.close();
  });

  test('private channel: foreign user denied (103), owner allowed', async () => {
    const c = client(url);
    c.connect();
    await connected(c);
    const foreign = c.newSubscription('test:private-alice', { data: { accessToken: 'token-of-bob' } });
    foreign.subscribe();
    await assert.rejects(subscribed(foreign), (e: { code: number }) => e.code === 103);

    const own = c.newSubscription('test:private-bob', { data: { accessToken: 'token-of-bob' } });
    const got: unknown[] = [];
    own.on('publication', (ctx) => got.push(ctx.data));
    own.subscribe();
    await subscribed(own);
    await rt.publish('test:private-bob', { secret: 1 });
    await rt.publish('test:private-alice', { secret: 2 });
    await waitFor(() => got.length === 1);
    assert.deepEqual(got, [{ secret: 1 }]);
    c.disconnect();
  });

  test('authorize throwing → internal error (temporary): the client retries', async () => {
    let calls = 0;
    const s = await startServer({
      authorize: async () => {
        if (++calls === 1) throw new Error('db down');
        return { allowed: true };
      },
    });
    const c = client(s.url);
    c.connect();
    const sub = c.newSubscription('anything', { minResubscribeDelay: 20, maxResubscribeDelay: 50 });
    const errors: number[] = [];
    sub.on('error', (e) => errors.push(e.error.code));
    sub.subscribe();
    await subscribed(sub);
    assert.deepEqual(errors, [100]);
    c.disconnect();
    await s.rt.close();
  });

  test('close() sends a reconnect code: the client goes back to connecting', async () => {
    const s = await startServer();
    const c = client(s.url, { minReconnectDelay: 5000 });
    c.connect();
    await connected(c);
    const ev = new Promise<{ code: number }>((r) => c.once('connecting', (x) => r(x)));
    await s.rt.close('going down');
    const { code } = await ev;
    assert.equal(code, 3001);
    assert.equal(c.state, 'connecting');
    c.disconnect();
  });
});
