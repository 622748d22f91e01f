// Session revocation, real-time side: endSession(id) ends at once every subscription authorized with that login
// session (unsubscribe push 2000: the centrifuge client goes to "unsubscribed" and does not resubscribe), refuses
// a subscribe in progress with it (103), and keeps refusing the session's tokens afterwards. Other sessions,
// other users and public channels are untouched. The fake authorizer names the session in the token.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { PublicationContext } from 'centrifuge';
import { InMemoryBroker, type Authorize } from '../../src/realtime/index.js';
import { PUBLIC, RawClient, client, connected, startServer, subscribed, waitFor } from './helpers.js';

type Msg = Record<string, any>;

/** `test:private-<user>` needs data.accessToken = `<user>@<session>`; the session id goes back to the server. */
function sessionAuthorizer(calls: string[] = [], hold?: { held: Array<() => void> }): Authorize {
  return async (channel, data) => {
    const token = (data as { accessToken?: string } | undefined)?.accessToken ?? '';
    calls.push(`${channel} ${token}`);
    if (hold) await new Promise<void>((r) => hold.held.push(r));
    if (channel.startsWith(PUBLIC)) return { allowed: true };
    const m = /^test:private-(\w+)$/.exec(channel);
    const [user, sessionId] = token.split('@');
    if (!m || user !== m[1] || !sessionId) return { allowed: false, code: 103, message: 'permission denied' };
    return { allowed: true, sessionId };
  };
}

const history = () => ({ size: 100, ttlMs: 60_000 });

describe('endSession', () => {
  test('ends the session\'s subscriptions with 2000 (no resubscribe); other sessions and public channels go on', async () => {
    const calls: string[] = [];
    const { rt, url } = await startServer({ authorize: sessionAuthorizer(calls), historyFor: history });
    const c = client(url);
    try {
      c.connect();
      await connected(c);
      const ended = c.newSubscription('test:private-alice', { data: { accessToken: 'alice@s1' }, recoverable: true });
      const other = c.newSubscription('test:private-bob', { data: { accessToken: 'bob@s2' }, recoverable: true });
      const pub = c.newSubscription(PUBLIC);
      const got: Record<string, unknown[]> = { alice: [], bob: [], pub: [] };
      ended.on('publication', (p: PublicationContext) => got.alice.push(p.data));
      other.on('publication', (p: PublicationContext) => got.bob.push(p.data));
      pub.on('publication', (p: PublicationContext) => got.pub.push(p.data));
      const unsubscribed = new Promise<{ code: number; reason: string }>((r) => ended.once('unsubscribed', (ctx) => r(ctx)));
      for (const s of [ended, other, pub]) s.subscribe();
      await Promise.all([subscribed(ended), subscribed(other), subscribed(pub)]);
      await rt.publish('test:private-alice', { n: 1 });
      await waitFor(() => got.alice.length === 1, 3000, 'first publication');

      assert.equal(rt.endSession('s1'), 1);
      assert.deepEqual(await unsubscribed, { channel: 'test:private-alice', code: 2000, reason: 'session ended' });
      const subscribesBefore = calls.length;
      await rt.publish('test:private-alice', { n: 2 });
      await rt.publish('test:private-bob', { n: 1 });
      await rt.publish(PUBLIC, { n: 1 });
      // Publications after alice's on the same connection arrived: alice's would have arrived before them.
      await waitFor(() => got.bob.length === 1 && got.pub.length === 1, 3000, 'later publications');
      assert.deepEqual(got.alice, [{ n: 1 }]);
      assert.equal(ended.state, 'unsubscribed');
      assert.equal(other.state, 'subscribed');
      assert.equal(calls.length, subscribesBefore, 'the client did not resubscribe on its own');
      assert.equal(rt.stats.subscriptions, 2);
      assert.equal(rt.endSession('s1'), 0, 'nothing left to end');
    } finally {
      c.disconnect();
      await rt.close();
    }
  });

  test('every connection of the session is ended; its tokens stay refused (103 "session ended")', async () => {
    const { rt, url } = await startServer({ authorize: sessionAuthorizer(), historyFor: history });
    const a = new RawClient(url);
    const b = new RawClient(url);
    try {
      await waitFor(() => a.reply(1) !== undefined && b.reply(1) !== undefined);
      a.send({ id: 2, subscribe: { channel: 'test:private-alice', data: { accessToken: 'alice@s1' } } });
      b.send({ id: 2, subscribe: { channel: 'test:private-alice', data: { accessToken: 'alice@s1' } } });
      b.send({ id: 3, subscribe: { channel: 'test:private-carol', data: { accessToken: 'carol@s1' } } });
      await waitFor(() => a.reply(2) !== undefined && b.reply(2) !== undefined && b.reply(3) !== undefined);
      assert.equal(rt.endSession('s1'), 3);
      const pushes = (raw: RawClient) => raw.messages.filter((m) => (m as Msg).push?.unsubscribe).map((m) => (m as Msg).push);
      await waitFor(() => pushes(a).length === 1 && pushes(b).length === 2, 3000, 'unsubscribe pushes');
      assert.deepEqual(pushes(a), [{ channel: 'test:private-alice', unsubscribe: { code: 2000, reason: 'session ended' } }]);

      // The same token again (a blind resubscribe, a replayed token): refused.
      a.send({ id: 4, subscribe: { channel: 'test:private-alice', data: { accessToken: 'alice@s1' } } });
      await waitFor(() => a.reply(4) !== undefined);
      assert.deepEqual((a.reply(4) as Msg).error, { code: 103, message: 'session ended' });
      // No history either, and a new session of the same user is fine.
      a.send({ id: 5, history: { channel: 'test:private-alice', limit: 10 } });
      a.send({ id: 6, subscribe: { channel: 'test:private-alice', data: { accessToken: 'alice@s9' } } });
      await waitFor(() => a.reply(5) !== undefined && a.reply(6) !== undefined);
      assert.equal((a.reply(5) as Msg).error?.code, 103);
      assert.equal((a.reply(6) as Msg).error, undefined);
    } finally {
      a.ws.close();
      b.ws.close();
      await rt.close();
    }
  });

  test('a session ended while a subscribe is being authorized: that subscribe is refused', async () => {
    const hold = { held: [] as Array<() => void> };
    const { rt, url } = await startServer({ authorize: sessionAuthorizer([], hold), historyFor: history });
    const raw = new RawClient(url);
    try {
      await waitFor(() => raw.reply(1) !== undefined);
      raw.send({ id: 2, subscribe: { channel: 'test:private-alice', data: { accessToken: 'alice@s1' } } });
      await waitFor(() => hold.held.length === 1, 3000, 'authorization pending');
      assert.equal(rt.endSession('s1'), 0, 'not known to be of s1 yet');
      hold.held.shift()!();
      await waitFor(() => raw.reply(2) !== undefined);
      assert.deepEqual((raw.reply(2) as Msg).error, { code: 103, message: 'session ended' });
      await rt.publish('test:private-alice', { n: 1 });
      raw.send({ id: 3, history: { channel: 'test:private-alice', limit: 10 } });
      await waitFor(() => raw.reply(3) !== undefined);
      assert.equal((raw.reply(3) as Msg).error?.code, 103);
      assert.equal(raw.messages.filter((m) => (m as Msg).push?.pub).length, 0);
    } finally {
      raw.ws.close();
      await rt.close();
    }
  });

  test('a session ended after authorization, while the stream position is read: refused, nothing delivered', async () => {
    const broker = new InMemoryBroker();
    const read = broker.history.bind(broker);
    let gate: Promise<void> | null = null;
    let open = () => {};
    let reads = 0;
    broker.history = async (channel, opts) => {
      reads++;
      if (gate) await gate;
      return read(channel, opts);
    };
    const { rt, url } = await startServer({ authorize: sessionAuthorizer(), historyFor: history, broker });
    const raw = new RawClient(url);
    try {
      await waitFor(() => raw.reply(1) !== undefined);
      gate = new Promise<void>((r) => (open = r));
      raw.send({ id: 2, subscribe: { channel: 'test:private-alice', data: { accessToken: 'alice@s1' }, recoverable: true } });
      await waitFor(() => reads === 1, 3000, 'stream position read pending');
      await rt.publish('test:private-alice', { n: 1 });
      assert.equal(rt.endSession('s1'), 1);
      open();
      await waitFor(() => raw.reply(2) !== undefined);
      assert.deepEqual((raw.reply(2) as Msg).error, { code: 103, message: 'session ended' });
      assert.equal(raw.messages.filter((m) => (m as Msg).push?.pub).length, 0);
      await waitFor(() => rt.stats.subscriptions === 0, 3000, 'left the fan-out');
    } finally {
      gate = null;
      open();
      raw.ws.close();
      await rt.close();
      await broker.close();
    }
  });
});
