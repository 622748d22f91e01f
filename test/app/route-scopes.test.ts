// Scopes of API keys and OAuth grants, against a real started exchange: every registered route declares how it
// authenticates; every key or grant lacking a route's scope gets 403 INSUFFICIENT_SCOPE and one holding it gets
// through; default API keys read and trade but never mint keys, edit the profile or withdraw; no key or grant
// reaches an operator route, whatever its user's role (docs/security.md, "Scopes").
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SCOPES, type Scope } from '../../src/auth/types.js';
import type { RegisteredRoute } from '../../src/api/server.js';
import { Bot, DOMAIN, assertError, http, ok, startTestExchange, type Res, type TestExchange } from './client.js';

const CONSENT = { 'Oauth consent': [{ name: 'oauthRequestId', type: 'string' }] };
const UUID = '00000000-0000-4000-8000-000000000000';

/** Routes anyone may call: each one was made public on purpose (a new public route must be added here). */
const PUBLIC = new Set([
  'GET /api/ping', 'GET /api/market', 'GET /api/coin', 'GET /api/market/instrument', 'GET /api/market/:instrument/deep',
  'GET /api/market/:instrument/recent-trades', 'GET /api/market/:instrument/trades', 'GET /api/user/sign-up/:wallet/check', 'GET /api/user/sign-up/quota',
  'GET /api/public/yield/apr', 'GET /api/public/statistics/total', 'GET /api/public/statistics/online-users',
  'GET /api/public/statistics/charts', 'GET /api/trade/signal/:id', 'GET /api/mobile-app/blocked-version', 'GET /api/oauth',
  'POST /api/oauth/deny', 'POST /api/oauth/token', 'GET /auth/nonce', 'POST /auth/user/sign-up', 'POST /auth/refresh', 'POST /auth/logout',
  'GET /metrics', 'GET /openapi.json', 'GET /asyncapi.json', 'GET /api/market/:instrument/candles', 'GET /api/config',
]);
/** The web terminal's built files (src/api/web-app.ts): the page, its hashed assets. */
const isWebTerminal = (url: string) => url === '/' || url === '/index.html' || url.startsWith('/assets/');
const isDocs = (url: string) => url === '/docs' || url.startsWith('/docs/');
const isAdmin = (url: string) => url.startsWith('/api/admin/');
/** Routes that mint an API key: a grant is refused there whatever its scopes (tested below). */
const MINTS = new Set(['POST /api/user/api-key', 'PUT /api/user/api-key/:apiKeyId/regenerate']);
const nameOf = (r: RegisteredRoute) => `${r.method} ${r.url}`;
const without = (s: Scope) => SCOPES.filter((x) => x !== s);

describe('route scopes', () => {
  let X: TestExchange;
  let U: Bot;
  let admin: Bot;
  let integrationId = '';
  let clientSecret = '';
  let userKey = '';
  let adminKey = '';
  let adminGrant = '';
  /** Grants of U, by the scopes they hold. */
  const grants = new Map<string, string>();

  const grant = async (bot: Bot, scopes: readonly Scope[]): Promise<string> => {
    const c = ok(await http(X.url, 'GET', `/api/oauth?integrationId=${integrationId}&scopes=${scopes.join(',')}`), 'open');
    assert.deepEqual(c.scopes, [...scopes]);
    const signature = await bot.wallet.signTypedData(DOMAIN(), CONSENT, { oauthRequestId: c.requestId });
    const a = ok(await bot.post('/api/oauth/approve', { requestId: c.requestId, signature }), 'approve');
    return ok(await http(X.url, 'POST', '/api/oauth/token', { integrationId, clientSecret, code: a.code }), 'token').accessToken;
  };
  const grantOf = (scopes: readonly Scope[]) => grants.get(scopes.join(','))!;
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const apiKey = (key: string) => ({ 'x-api-key': key });
  const path = (url: string) => url.replace(/:(\w+)/g, (_m, p: string) => ({
    instrument: 'BTCUSDT', pairId: 'BTCUSDT', userId: U.userId, exchangeId: String(U.exchangeId), kind: 'orders', wallet: U.address,
  } as Record<string, string>)[p] ?? UUID);
  const call = (r: RegisteredRoute, headers: Record<string, string>): Promise<Res> => http(X.url, r.method, path(r.url), undefined, headers);

  /** 403 INSUFFICIENT_SCOPE in the error shape (a HEAD reply has no body to check). */
  const assertRefused = (r: RegisteredRoute, res: Res, who: string) => {
    if (r.method === 'HEAD') assert.equal(res.status, 403, `${who} → ${nameOf(r)}`);
    else assert.equal(assertError(res, 403, 'INSUFFICIENT_SCOPE').code, 'INSUFFICIENT_SCOPE', `${who} → ${nameOf(r)}`);
  };
  /** Authenticated and allowed: whatever the handler then says (bad input is fine), not 401/403 and never 5xx. */
  const assertAdmitted = (r: RegisteredRoute, res: Res, who: string) => {
    assert.ok(![401, 403].includes(res.status) && res.status < 500, `${who} → ${nameOf(r)}: ${res.status} ${JSON.stringify(res.body)}`);
  };

  before(async () => {
    X = await startTestExchange();
    [U, admin] = await Promise.all([new Bot(X.url).signIn(), new Bot(X.url).signIn()]);
    await X.ex.auth.setRole(admin.exchangeId, 'admin');
    const reg = ok(await admin.post('/api/admin/oauth/integrations', { name: 'Scope walker', redirectUri: 'https://walker.example.com/cb', scopes: SCOPES }));
    integrationId = reg.integration.id;
    clientSecret = reg.clientSecret;
    for (const s of SCOPES) {
      grants.set(s, await grant(U, [s]));
      grants.set(without(s).join(','), await grant(U, without(s)));
    }
    grants.set(SCOPES.join(','), await grant(U, SCOPES));
    adminGrant = await grant(admin, SCOPES);
    userKey = ok(await U.post('/api/user/api-key', { name: 'default' })).apiKey;
    adminKey = ok(await admin.post('/api/user/api-key', { name: 'admin default' })).apiKey;
  });
  after(async () => {
    await X?.stop();
  });

  test('every registered route is public on purpose, operator-guarded, or declares its scope', () => {
    const seen = new Set<string>();
    for (const r of X.ex.routes) {
      seen.add(nameOf(r).replace(/^HEAD /, 'GET '));
      if (r.auth) assert.ok(r.scope !== undefined && [...SCOPES, 'wallet-session'].includes(r.scope), `${nameOf(r)} declares no scope`);
      else assert.ok(isAdmin(r.url) || isDocs(r.url) || isWebTerminal(r.url) || PUBLIC.has(nameOf(r).replace(/^HEAD /, 'GET ')), `${nameOf(r)} is public: add auth and a scope, or list it in PUBLIC`);
    }
    for (const p of PUBLIC) assert.ok(seen.has(p), `PUBLIC lists ${p}, which is not registered`);
    assert.ok(X.ex.routes.filter((r) => r.auth).length >= 60, 'the walk sees the authenticated routes');
  });

  test('OpenAPI shows each route\'s scope in its security requirement', async () => {
    const doc = ok(await http(X.url, 'GET', '/openapi.json'));
    assert.deepEqual(Object.keys(doc.components.securitySchemes.oauthGrant.flows.authorizationCode.scopes), [...SCOPES]);
    for (const r of X.ex.routes.filter((x) => x.auth && x.method !== 'HEAD')) {
      const op = doc.paths[r.url.replace(/:(\w+)/g, '{$1}')]?.[r.method.toLowerCase()];
      assert.ok(op, `${nameOf(r)} missing from /openapi.json`);
      assert.equal(op['x-scope'], r.scope, nameOf(r));
      const expected = r.scope === 'wallet-session' ? [{ bearerAuth: [] }] : [{ bearerAuth: [] }, { apiKey: [] }, { oauthGrant: [r.scope] }];
      assert.deepEqual(op.security, expected, nameOf(r));
    }
  });

  test('a grant or key lacking the route\'s scope gets 403 INSUFFICIENT_SCOPE; one holding it gets through', async () => {
    for (const r of X.ex.routes.filter((x) => x.auth)) {
      const need = r.scope!;
      assertAdmitted(r, await call(r, bearer(need === 'wallet-session' ? admin.accessToken : U.accessToken)), 'wallet session');
      if (need === 'wallet-session') {
        assertRefused(r, await call(r, bearer(grantOf(SCOPES))), 'grant with every scope');
        assertRefused(r, await call(r, apiKey(userKey)), 'API key');
        assertRefused(r, await call(r, apiKey(adminKey)), "admin's API key");
        continue;
      }
      assertRefused(r, await call(r, bearer(grantOf(without(need)))), `grant without ${need}`);
      if (MINTS.has(nameOf(r))) assertRefused(r, await call(r, bearer(grantOf([need]))), 'grant minting a key');
      else assertAdmitted(r, await call(r, bearer(grantOf([need]))), `grant with only ${need}`);
      const res = await call(r, apiKey(userKey));
      if (need === 'read' || need === 'trade') assertAdmitted(r, res, 'default API key');
      else assertRefused(r, res, 'default API key');
    }
  });

  test('no key or grant reaches /api/admin/*, even an admin\'s; the operator token and an admin\'s wallet session do', async () => {
    const routes = X.ex.routes.filter((r) => isAdmin(r.url));
    assert.ok(routes.length >= 10, 'the walk sees the operator routes');
    for (const r of routes) {
      assertRefused(r, await call(r, apiKey(adminKey)), "admin's API key");
      assertRefused(r, await call(r, bearer(adminGrant)), "admin's grant with every scope");
      assertRefused(r, await call(r, apiKey(userKey)), "user's API key");
      assertAdmitted(r, await call(r, bearer(admin.accessToken)), "admin's wallet session");
      assertAdmitted(r, await call(r, { 'x-operator-token': X.ex.operatorToken }), 'operator token');
      const notAdmin = await call(r, bearer(U.accessToken));
      if (r.method === 'HEAD') assert.equal(notAdmin.status, 403);
      else assertError(notAdmin, 403, 'FORBIDDEN');
    }
  });

  test('a default API key reads and trades, but never mints keys, edits the profile or withdraws', async () => {
    const k = apiKey(userKey);
    const before = ok(await U.get('/api/user/api-key?withDeleted=yes'));
    assert.equal(ok(await http(X.url, 'GET', '/api/user/me', undefined, k)).id, U.userId);
    ok(await http(X.url, 'POST', `/api/admin/users/${U.exchangeId}/deposit`, { amount: '1000' }, { 'x-operator-token': X.ex.operatorToken }));
    const order = ok(await http(X.url, 'POST', '/api/v2/order/limit', await U.limitBody({ side: 'BUY', quantity: '0.01', limitPrice: 1000 }), k), 'order by key');
    ok(await http(X.url, 'DELETE', `/api/order/${order.id}`, undefined, k), 'cancel by key');

    assertError(await http(X.url, 'POST', '/api/user/api-key', { name: 'child' }, k), 403, 'INSUFFICIENT_SCOPE');
    const own = before.list[0].id as string;
    assertError(await http(X.url, 'PUT', `/api/user/api-key/${own}/regenerate`, undefined, k), 403, 'INSUFFICIENT_SCOPE');
    assertError(await http(X.url, 'PUT', `/api/user/${U.userId}`, { name: 'renamed by key' }, k), 403, 'INSUFFICIENT_SCOPE');
    assertError(await http(X.url, 'POST', '/api/user/account', { email: 'key@example.com' }, k), 403, 'INSUFFICIENT_SCOPE');
    assertError(await http(X.url, 'POST', '/api/transfer/pf/withdraw', { recipient: U.address, amount: '1', signature: '0x00' }, k), 403, 'INSUFFICIENT_SCOPE');
    const me = ok(await U.get('/api/user/me'));
    assert.equal(me.name, null);
    assert.equal(me.email, null);
    assert.deepEqual(ok(await U.get('/api/user/api-key?withDeleted=yes')), before, 'no key created or regenerated');
  });

  test('a grant never mints an API key, whatever its scopes; with account it edits the profile', async () => {
    const g = bearer(grantOf(SCOPES));
    const before = ok(await U.get('/api/user/api-key?withDeleted=yes'));
    const e = assertError(await http(X.url, 'POST', '/api/user/api-key', { name: 'from grant' }, g), 403, 'INSUFFICIENT_SCOPE');
    assert.match(e.message, /OAuth grant/);
    assertError(await http(X.url, 'PUT', `/api/user/api-key/${before.list[0].id}/regenerate`, undefined, g), 403, 'INSUFFICIENT_SCOPE');
    assert.deepEqual(ok(await U.get('/api/user/api-key?withDeleted=yes')), before);
    assert.equal(ok(await http(X.url, 'PUT', `/api/user/${U.userId}`, { name: 'Granted name' }, bearer(grantOf(['account'])))).name, 'Granted name');
    assertError(await http(X.url, 'PUT', `/api/user/${U.userId}`, { name: 'read-only' }, bearer(grantOf(['read']))), 403, 'INSUFFICIENT_SCOPE');
    assert.equal(ok(await U.get('/api/user/me')).name, 'Granted name');
  });
});
