// Authorization expiry: the server ends the subscription with a resubscribe code; the
// centrifuge client subscribes again, calling getData for a fresh access token, and
// recovers what was published in between.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PublicationContext } from 'centrifuge';
import { client, startServer, subscribed, waitFor } from './helpers.js';
import type { Authorize } from '../../src/realtime/index.js';

test('expired authorization → unsubscribe push 2501 → client resubscribes with fresh data', async () => {
  const used = new Set<string>();
  const seen: string[] = [];
  // Each token is single-use and grants 150 ms: only a client that fetches fresh data survives.
  const authorize: Authorize = async (channel, data) => {
    const token = (data as { accessToken?: string } | undefined)?.accessToken ?? '';
    if (channel !== 'test:private-u1' || !token.startsWith('token-of-u1#') || used.has(token)) {
      return { allowed: false, code: 103, message: 'permission denied' };
    }
    used.add(token);
    seen.push(token);
    return { allowed: true, expiresAt: Date.now() + 150 };
  };
  const { rt, url } = await startServer({ authorize, historyFor: () => ({ size: 100, ttlMs: 60_000 }) });
  const c = client(url);
  let n = 0;
  const sub = c.newSubscription('test:private-u1', {
    recoverable: true,
    // The client calls getData on every (re)subscribe: this is where the app puts a fresh token.
    getData: async () => ({ accessToken: `token-of-u1#${++n}` }),
  });
  const got: number[] = [];
  const subscribing: number[] = [];
  sub.on('publication', (ctx: PublicationContext) => got.push((ctx.data as { i: number }).i));
  sub.on('subscribing', (ctx) => subscribing.push(ctx.code));
  c.connect();
  sub.subscribe();
  await subscribed(sub);

  // Publish across two expiries; every publication must arrive exactly once, in order.
  for (let i = 0; i < 40; i++) {
    await rt.publish('test:private-u1', { i });
    await new Promise((r) => setTimeout(r, 10));
  }
  await waitFor(() => seen.length >= 3 && got.length === 40, 3000, 'resubscribes');
  assert.ok(subscribing.includes(2501), `resubscribe code seen: ${subscribing}`);
  assert.deepEqual(got, Array.from({ length: 40 }, (_, i) => i));
  assert.equal(new Set(seen).size, seen.length, 'fresh token each time');
  assert.equal(sub.state, 'subscribed');
  c.disconnect();
  await rt.close();
});

test('an authorization that ends beyond setTimeout\'s range (a 30-day session) does not end the subscription early', async () => {
  const authorize: Authorize = async () => ({ allowed: true, expiresAt: Date.now() + 30 * 86_400_000 });
  const { rt, url } = await startServer({ authorize, historyFor: () => ({ size: 100, ttlMs: 60_000 }) });
  const c = client(url);
  const sub = c.newSubscription('test:private-u1', { recoverable: true });
  const got: number[] = [];
  const subscribing: number[] = [];
  sub.on('publication', (ctx: PublicationContext) => got.push((ctx.data as { i: number }).i));
  sub.on('subscribing', (ctx) => subscribing.push(ctx.code));
  try {
    c.connect();
    sub.subscribe();
    await subscribed(sub);
    // An overflowing timer would fire within a millisecond; these round trips outlast that.
    for (let i = 0; i < 5; i++) {
      await rt.publish('test:private-u1', { i });
      await waitFor(() => got.length >= i + 1, 3000, `publication ${i}`);
    }
    assert.deepEqual(subscribing, [0], 'subscribed once, never told to resubscribe');
    assert.equal(sub.state, 'subscribed');
  } finally {
    c.disconnect();
    await rt.close();
  }
});
