// History and recovery: a client that was away receives exactly what it missed, in order;
// a lost position (other epoch, trimmed history) is reported as recovered: false.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Centrifuge, PublicationContext, SubscribedContext, Subscription } from 'centrifuge';
import { client, connected, startServer, subscribed, waitFor } from './helpers.js';
import { InMemoryBroker, type RealtimeServer } from '../../src/realtime/index.js';

const CH = 'test:private-u1';
const TOKEN = { accessToken: 'token-of-u1' };

describe('recovery', () => {
  let rt: RealtimeServer;
  let url: string;
  before(async () => {
    ({ rt, url } = await startServer({
      historyFor: (ch) => (ch.startsWith('test:private-') || ch === 'test:funding-rate' ? { size: 20, ttlMs: 60_000 } : null),
    }));
  });
  after(() => rt.close());

  function recoverable(c: Centrifuge, channel = CH, extra: Record<string, unknown> = {}) {
    const sub = c.newSubscription(channel, { data: TOKEN, recoverable: true, positioned: true, ...extra });
    const got: { data: unknown; offset?: number }[] = [];
    const subscribedEvents: SubscribedContext[] = [];
    sub.on('publication', (ctx: PublicationContext) => got.push({ data: ctx.data, offset: ctx.offset }));
    sub.on('subscribed', (ctx) => subscribedEvents.push(ctx));
    return { sub, got, subscribedEvents };
  }

  test('reconnecting client receives exactly the 5 missed publications, in order', async () => {
    const c = client(url);
    const { sub, got, subscribedEvents } = recoverable(c);
    c.connect();
    sub.subscribe();
    await subscribed(sub);
    assert.equal(subscribedEvents[0].recoverable, true);
    for (let i = 0; i < 3; i++) await rt.publish(CH, { seq: i });
    await waitFor(() => got.length === 3);

    c.disconnect();
    await waitFor(() => rt.stats.connections === 0);
    for (let i = 3; i < 8; i++) await rt.publish(CH, { seq: i });

    c.connect();
    await waitFor(() => subscribedEvents.length === 2 && got.length === 8);
    const again = subscribedEvents[1];
    assert.equal(again.wasRecovering, true);
    assert.equal(again.recovered, true);
    assert.deepEqual(got.map((g) => (g.data as { seq: number }).seq), [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.deepEqual(got.map((g) => g.offset), [1, 2, 3, 4, 5, 6, 7, 8]);

    // Live publications continue without duplicates: the next two arrive, and nothing else before the last.
    await rt.publish(CH, { seq: 8 });
    await rt.publish(CH, { seq: 9 });
    await waitFor(() => got.some((g) => (g.data as { seq: number }).seq === 9));
    assert.deepEqual(got.map((g) => (g.data as { seq: number }).seq), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    c.disconnect();
  });

  test('a dropped socket (no clean disconnect) recovers too', async () => {
    const ch = 'test:funding-rate';
    const c = client(url);
    const { sub, got, subscribedEvents } = recoverable(c, ch);
    c.connect();
    sub.subscribe();
    await subscribed(sub);
    await rt.publish(ch, { r: 0 });
    await waitFor(() => got.length === 1);
    // Kill the transport under the client, as a network drop would.
    (c as unknown as { _transport: { _transport: { terminate(): void } } })._transport._transport.terminate();
    await waitFor(() => c.state === 'connecting');
    for (let i = 1; i <= 5; i++) await rt.publish(ch, { r: i });
    await waitFor(() => subscribedEvents.length === 2 && got.length === 6, 5000);
    assert.equal(subscribedEvents[1].recovered, true);
    assert.deepEqual(got.map((g) => (g.data as { r: number }).r), [0, 1, 2, 3, 4, 5]);
    c.disconnect();
  });

  test('epoch mismatch → recovered: false, no stale publications', async () => {
    const ch = 'test:private-u2';
    await rt.publish(ch, { x: 1 });
    const c = client(url);
    const { sub, got, subscribedEvents } = recoverable(c, ch, {
      data: { accessToken: 'token-of-u2' },
      since: { offset: 0, epoch: 'not-the-epoch' },
    });
    c.connect();
    sub.subscribe();
    await subscribed(sub);
    assert.equal(subscribedEvents[0].wasRecovering, true);
    assert.equal(subscribedEvents[0].recovered, false);
    assert.equal(got.length, 0);
    assert.equal(subscribedEvents[0].streamPosition?.offset, 1);
    c.disconnect();
  });

  test('position trimmed out of history → recovered: false', async () => {
    const ch = 'test:private-u3';
    const c = client(url);
    const { sub, got, subscribedEvents } = recoverable(c, ch, { data: { accessToken: 'token-of-u3' } });
    c.connect();
    sub.subscribe();
    await subscribed(sub);
    c.disconnect();
    await waitFor(() => rt.stats.connections === 0);
    for (let i = 0; i < 25; i++) await rt.publish(ch, { i }); // history keeps 20
    c.connect();
    await waitFor(() => subscribedEvents.length === 2);
    assert.equal(subscribedEvents[1].recovered, false);
    assert.equal(got.length, 0);
    // The client adopted the new position: the next publication is live.
    await rt.publish(ch, { i: 25 });
    await waitFor(() => got.length === 1);
    c.disconnect();
  });

  test('history command: limit, since, and reverse = the newest first (centrifuge HistoryOptions)', async () => {
    const ch = 'test:private-u4';
    for (let i = 1; i <= 6; i++) await rt.publish(ch, { i });
    const c = client(url);
    const { sub } = recoverable(c, ch, { data: { accessToken: 'token-of-u4' } });
    c.connect();
    sub.subscribe();
    await subscribed(sub);
    const seqs = (h: { publications: PublicationContext[] }) => h.publications.map((p) => [p.offset, (p.data as { i: number }).i]);
    // Forward: the oldest kept first.
    let h = await sub.history({ limit: 2 });
    assert.deepEqual(seqs(h), [[1, 1], [2, 2]]);
    assert.equal(h.offset, 6);
    h = await sub.history({ limit: 2, since: { offset: 3, epoch: h.epoch } });
    assert.deepEqual(seqs(h), [[4, 4], [5, 5]]);
    // Reverse: the newest first, so limit 2 gives the last two publications.
    h = await sub.history({ limit: 2, reverse: true });
    assert.deepEqual(seqs(h), [[6, 6], [5, 5]]);
    h = await sub.history({ limit: 10, reverse: true });
    assert.deepEqual(seqs(h).map(([o]) => o), [6, 5, 4, 3, 2, 1]);
    // Reverse from a position: what came before it, newest first.
    h = await sub.history({ limit: 2, reverse: true, since: { offset: 4, epoch: h.epoch } });
    assert.deepEqual(seqs(h), [[3, 3], [2, 2]]);
    h = await sub.history({ limit: 0, reverse: true });
    assert.deepEqual(h.publications, []);
    assert.equal(h.offset, 6);
    c.disconnect();
  });

  test('non-recoverable channel: recover request is not honoured, no offsets', async () => {
    const c = client(url);
    c.connect();
    await connected(c);
    const sub: Subscription = c.newSubscription('test:public-x', { recoverable: true });
    const got: PublicationContext[] = [];
    sub.on('publication', (ctx) => got.push(ctx));
    sub.subscribe();
    const ctx = await subscribed(sub);
    assert.equal(ctx.recoverable, false);
    await rt.publish('test:public-x', 1);
    await waitFor(() => got.length === 1);
    assert.equal(got[0].offset, undefined);
    c.disconnect();
  });
});

describe('InMemoryBroker', () => {
  test('bounded history, TTL trimming, epoch per stream start', async () => {
    let now = 1_000;
    const b = new InMemoryBroker({ now: () => now, streamMetaTtlMs: 10_000 });
    const policy = { history: { size: 3, ttlMs: 100 } };
    for (let i = 1; i <= 5; i++) await b.publish('c', i, policy);
    let h = await b.history('c', { limit: 10 });
    assert.deepEqual(h.publications.map((p) => p.data), [3, 4, 5]);
    assert.equal(h.offset, 5);
    const epoch = h.epoch;
    h = await b.history('c', { since: { offset: 4, epoch }, limit: 10 });
    assert.deepEqual(h.publications.map((p) => p.offset), [5]);
    now += 101;
    h = await b.history('c', { limit: 10 });
    assert.equal(h.publications.length, 0);
    assert.equal(h.offset, 5, 'offsets survive TTL trimming');
    assert.equal(h.epoch, epoch);
    now += 20_000; // idle past meta TTL: a new stream
    await b.publish('c', 6, policy);
    h = await b.history('c', { limit: 10 });
    assert.notEqual(h.epoch, epoch);
    assert.equal(h.offset, 1);
    const pos = await b.publish('plain', 1);
    assert.deepEqual(pos, { offset: 0, epoch: '' });
    await b.close();
  });
});
