// End to end against a started exchange: POST /auth/logout ends one session (REST at once, real-time
// subscriptions too) and no other; API keys carry scopes chosen at creation. HTTP + a real centrifuge client.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Centrifuge, type Subscription } from 'centrifuge';
import WebSocket from 'ws';
import { Bot, assertError, eventually, http, ok, startTestExchange, type TestExchange } from './client.js';

const logout = (X: TestExchange, token?: string) => http(X.url, 'POST', '/auth/logout', undefined, token === undefined ? {} : { authorization: `Bearer ${token}` });
const refresh = (X: TestExchange, token: string) => http(X.url, 'POST', '/auth/refresh', undefined, { authorization: `Bearer ${token}` });

/** A centrifuge client subscribed to the bot's order channel with `token`; publications and unsubscribes recorded. */
async function subscribeOrders(X: TestExchange, bot: Bot, token: string) {
  const client = new Centrifuge(X.ex.wsUrl, { websocket: WebSocket });
  const sub = client.newSubscription(`${X.ex.channelPrefix}order-${bot.exchangeId}`, { data: { accessToken: token } });
  const seen = { publications: [] as unknown[], unsubscribed: [] as Array<{ code: number; reason: string }>, errors: [] as unknown[] };
  sub.on('publication', (ctx) => seen.publications.push(ctx.data));
  sub.on('unsubscribed', (ctx) => seen.unsubscribed.push({ code: ctx.code, reason: ctx.reason }));
  sub.on('error', (ctx) => seen.errors.push(ctx.error));
  const subscribed = new Promise<void>((resolve, reject) => {
    sub.once('subscribed', () => resolve());
    sub.once('unsubscribed', (ctx) => reject(new Error(`unsubscribed: ${ctx.code} ${ctx.reason}`)));
    sub.once('error', (ctx) => reject(new Error(JSON.stringify(ctx.error))));
  });
  sub.subscribe();
  client.connect();
  return { client, sub: sub as Subscription, seen, subscribed };
}

describe('e2e: sessions (logout, revocation) and API-key scopes', () => {
  let X: TestExchange;

  before(async () => {
    // No refresh grace: a refresh token presented twice is reuse at once (concurrent-refresh.test.ts: with one).
    X = await startTestExchange({ REFRESH_GRACE_SEC: '0' });
  });
  after(async () => {
    await X?.stop();
  });

  test('POST /auth/logout with the access token: that token gets 401 at once, its refresh token too; the same wallet\'s other session is unaffected', async () => {
    const one = await new Bot(X.url).signIn();
    const two = await new Bot(X.url, one.wallet).signIn();
    assert.equal(two.exchangeId, one.exchangeId);
    ok(await one.get('/api/user/me'), 'before logout');

    assert.deepEqual(ok(await logout(X, one.accessToken), 'logout'), {});
    assertError(await one.get('/api/user/me'), 401, 'UNAUTHORIZED');
    assertError(await refresh(X, one.refreshToken), 401, 'invalid_refresh_token');

    ok(await two.get('/api/user/me'), 'other session');
    const rotated = ok(await refresh(X, two.refreshToken), 'other session refresh') as { token: { accessToken: string } };
    ok(await two.req('GET', '/api/user/me', undefined, rotated.token.accessToken), 'other session, new token');

    // Ending a session already ended is no error; a request without a session token is.
    ok(await logout(X, one.accessToken), 'logout again');
    assertError(await logout(X), 401);
    assertError(await logout(X, 'not-a-token'), 401, 'invalid_token');
  });

  test('POST /auth/logout with the refresh token ends the session the same way', async () => {
    const bot = await new Bot(X.url).signIn();
    ok(await logout(X, bot.refreshToken), 'logout');
    assertError(await bot.get('/api/user/me'), 401, 'UNAUTHORIZED');
    assertError(await refresh(X, bot.refreshToken), 401, 'invalid_refresh_token');
  });

  test('a revoked session\'s access token opens no private subscription', async () => {
    const bot = await new Bot(X.url).signIn();
    ok(await logout(X, bot.accessToken), 'logout');
    const s = await subscribeOrders(X, bot, bot.accessToken);
    try {
      await assert.rejects(s.subscribed, /103|permission/i);
    } finally {
      s.client.disconnect();
    }
  });

  test('logout ends the live private subscriptions of that session, not those of another session', async () => {
    const one = await new Bot(X.url).signIn();
    const two = await new Bot(X.url, one.wallet).signIn();
    await one.faucet();
    const a = await subscribeOrders(X, one, one.accessToken);
    const b = await subscribeOrders(X, two, two.accessToken);
    try {
      await Promise.all([a.subscribed, b.subscribed]);
      ok(await logout(X, one.accessToken), 'logout');
      await eventually(async () => a.seen.unsubscribed.length, (n) => n > 0, 'the logged-out session\'s subscription to end');
      assert.equal(a.sub.state, 'unsubscribed');
      // The other session's subscription still delivers.
      ok(await two.limit({ side: 'BUY', quantity: '0.001', limitPrice: 50000 }), 'order of the other session');
      await eventually(async () => b.seen.publications.length, (n) => n > 0, 'a publication on the other session\'s subscription');
      assert.equal(b.sub.state, 'subscribed');
      assert.deepEqual(b.seen.unsubscribed, []);
    } finally {
      a.client.disconnect();
      b.client.disconnect();
    }
  });

  test('a refresh token used twice revokes that session only: the same wallet\'s other session keeps REST, refresh and its live subscription', async () => {
    const one = await new Bot(X.url).signIn();
    const two = await new Bot(X.url, one.wallet).signIn();
    await two.faucet();
    const a = await subscribeOrders(X, one, one.accessToken);
    const b = await subscribeOrders(X, two, two.accessToken);
    try {
      await Promise.all([a.subscribed, b.subscribed]);
      const renewed = ok(await refresh(X, one.refreshToken), 'first use rotates') as { token: { accessToken: string } };
      assertError(await refresh(X, one.refreshToken), 401, 'refresh_token_reused');
      // The whole first session is revoked: its old and its new access token, and its live subscription.
      assertError(await one.get('/api/user/me'), 401, 'UNAUTHORIZED');
      assertError(await one.req('GET', '/api/user/me', undefined, renewed.token.accessToken), 401, 'UNAUTHORIZED');
      await eventually(async () => a.seen.unsubscribed.length, (n) => n > 0, 'the revoked session\'s subscription to end');

      // The second session of the same wallet is untouched.
      ok(await two.get('/api/user/me'), 'other session');
      ok(await two.limit({ side: 'BUY', quantity: '0.001', limitPrice: 50000 }), 'order of the other session');
      await eventually(async () => b.seen.publications.length, (n) => n > 0, 'a publication on the other session\'s subscription');
      assert.equal(b.sub.state, 'subscribed');
      assert.deepEqual(b.seen.unsubscribed, []);
      const rotated = ok(await refresh(X, two.refreshToken), 'other session refresh') as { token: { accessToken: string } };
      ok(await two.req('GET', '/api/user/me', undefined, rotated.token.accessToken), 'other session, new token');
    } finally {
      a.client.disconnect();
      b.client.disconnect();
    }
  });

  test('API keys: scopes chosen at creation (default read+trade), shown in the records, validated; a key cannot create a wider key', async () => {
    const bot = await new Bot(X.url).signIn();
    const plain = ok(await bot.post('/api/user/api-key', { name: 'default' }), 'create default');
    assert.deepEqual(plain.scopes, ['read', 'trade']);
    const manager = ok(await bot.post('/api/user/api-key', { name: 'manager', scopes: ['account', 'read', 'trade'] }), 'create manager');
    assert.deepEqual(manager.scopes, ['read', 'trade', 'account']);
    const listed = ok(await bot.get('/api/user/api-key'), 'list') as { list: Array<{ id: string; scopes: string[] }> };
    assert.deepEqual(Object.fromEntries(listed.list.map((k) => [k.id, k.scopes])), { [plain.id]: ['read', 'trade'], [manager.id]: ['read', 'trade', 'account'] });

    assertError(await bot.post('/api/user/api-key', { scopes: ['admin'] }), 400);
    assertError(await bot.post('/api/user/api-key', { scopes: [] }), 400);
    assertError(await bot.put(`/api/user/api-key/${plain.id}`, { scopes: ['read'] }), 400);

    const asKey = (key: string, method: string, path: string, body?: unknown) => http(X.url, method, path, body, { 'x-api-key': key });
    ok(await asKey(plain.apiKey, 'GET', '/api/user/me'), 'key works');
    assertError(await asKey(manager.apiKey, 'POST', '/api/user/api-key', { scopes: ['read', 'withdraw'] }), 403, 'INSUFFICIENT_SCOPE');
    assert.deepEqual(ok(await asKey(manager.apiKey, 'POST', '/api/user/api-key', { scopes: ['read'] }), 'narrower key').scopes, ['read']);
    const count = (ok(await bot.get('/api/user/api-key'), 'list') as { count: number }).count;
    assert.equal(count, 3, 'the refused creation stored nothing');
  });
});
