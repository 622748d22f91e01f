// OAuth end to end: operator registration (admin only, or the CLI function), consent request, wallet-signed
// approval, code → grant exchange, the grant's scopes enforced on real routes, denial, listing, revocation.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { registerOauthIntegration } from '../../src/accounts/operator.js';
import { Bot, CHAIN_ID, DOMAIN, assertError, http, ok, singleProcessOnly, startTestExchange, type TestExchange } from './client.js';

const CONSENT = { 'Oauth consent': [{ name: 'oauthRequestId', type: 'string' }] };

async function grantAdmin(X: TestExchange, exchangeId: number): Promise<void> {
  await X.ex.auth.setRole(exchangeId, 'admin');
}

describe('oauth', () => {
  let X: TestExchange;
  let admin: Bot;
  let A: Bot;
  let B: Bot;
  let integrationId = '';
  let clientSecret = '';
  const consent = (bot: Bot, requestId: string, chainId = CHAIN_ID) => bot.wallet.signTypedData(DOMAIN(chainId), CONSENT, { oauthRequestId: requestId });
  const open = async (query: string) => ok(await http(X.url, 'GET', `/api/oauth?${query}`));
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  before(async () => {
    X = await startTestExchange();
    [admin, A, B] = await Promise.all([new Bot(X.url).signIn(), new Bot(X.url).signIn(), new Bot(X.url).signIn()]);
    await grantAdmin(X, admin.exchangeId);
  });
  after(async () => {
    await X?.stop();
  });

  test('only operators register integrations; bad registrations change nothing', async () => {
    const body = { name: 'Portfolio tracker', redirectUri: 'https://tracker.example.com/callback', scopes: ['read'], description: 'reads your positions' };
    assertError(await A.post('/api/admin/oauth/integrations', body), 403, 'FORBIDDEN');
    assertError(await http(X.url, 'POST', '/api/admin/oauth/integrations', body), 401);
    for (const bad of [
      { ...body, redirectUri: 'http://tracker.example.com/cb' }, { ...body, redirectUri: 'not a url' }, { ...body, scopes: ['admin'] },
      { ...body, scopes: [] }, { ...body, name: '' }, { ...body, extra: 1 },
    ]) {
      assertError(await admin.post('/api/admin/oauth/integrations', bad), 400);
    }
    assert.deepEqual(ok(await admin.get('/api/admin/oauth/integrations')).list, []);
    const r = ok(await admin.post('/api/admin/oauth/integrations', body));
    integrationId = r.integration.id;
    clientSecret = r.clientSecret;
    assert.deepEqual(r.integration.scopes, ['read']);
    assert.equal(ok(await admin.get('/api/admin/oauth/integrations')).list.length, 1);
    assertError(await A.get('/api/admin/oauth/integrations'), 403);
  });

  // The CLI function writes DATA_DIR/auth.db (AUTH_STORE=sqlite); a cluster keeps OAuth in PostgreSQL.
  test('the operator CLI function registers into the running exchange', { skip: singleProcessOnly }, async () => {
    const r = await registerOauthIntegration(X.ex.dataDir, { name: 'Trading bot', redirectUri: 'http://localhost:9000/cb', scopes: ['read', 'trade'] });
    const c = await open(`integrationId=${r.integration.id}`);
    assert.equal(c.client.name, 'Trading bot');
    assert.deepEqual(c.scopes, ['read', 'trade'], 'no scopes asked = all the integration may ask for');
  });

  test('GET /api/oauth validates integration and scopes', async () => {
    const c = await open(`integrationId=${integrationId}&scopes=read&state=xyz`);
    assert.equal(c.client.id, integrationId);
    assert.equal(c.client.redirectUri, 'https://tracker.example.com/callback');
    assert.deepEqual(c.scopes, ['read']);
    assert.equal(c.state, 'xyz');
    assertError(await http(X.url, 'GET', `/api/oauth?integrationId=${integrationId}&scopes=trade`), 400, 'INVALID_SCOPE');
    assertError(await http(X.url, 'GET', '/api/oauth?integrationId=00000000-0000-4000-8000-000000000000'), 404);
    assertError(await http(X.url, 'GET', '/api/oauth?integrationId=nope'), 400);
    assertError(await http(X.url, 'GET', '/api/oauth'), 400);
  });

  test('signed approval → code → scoped grant; grant limits; revocation', async () => {
    const c = await open(`integrationId=${integrationId}&scopes=read&state=s1`);
    // Bad signatures: another wallet, another chain, garbage. The request stays pending.
    assertError(await B.post('/api/oauth/approve', { requestId: c.requestId, signature: await consent(A, c.requestId) }), 400, 'INVALID_SIGNATURE');
    assertError(await B.post('/api/oauth/approve', { requestId: c.requestId, signature: await consent(B, c.requestId, '1') }), 400, 'INVALID_SIGNATURE');
    assertError(await B.post('/api/oauth/approve', { requestId: c.requestId, signature: '0x12' }), 400);
    assertError(await http(X.url, 'POST', '/api/oauth/approve', { requestId: c.requestId, signature: await consent(B, c.requestId) }), 401);
    assert.deepEqual(ok(await B.get('/api/oauth/request/list')), { list: [], count: 0 });

    const approved = ok(await B.post('/api/oauth/approve', { requestId: c.requestId, signature: await consent(B, c.requestId) }));
    const redirect = new URL(approved.redirectUrl);
    assert.equal(redirect.origin + redirect.pathname, 'https://tracker.example.com/callback');
    assert.equal(redirect.searchParams.get('code'), approved.code);
    assert.equal(redirect.searchParams.get('state'), 's1');
    assertError(await B.post('/api/oauth/approve', { requestId: c.requestId, signature: await consent(B, c.requestId) }), 409);

    assertError(await http(X.url, 'POST', '/api/oauth/token', { integrationId, clientSecret: 'wrong', code: approved.code }), 401, 'INVALID_CLIENT');
    const token = ok(await http(X.url, 'POST', '/api/oauth/token', { integrationId, clientSecret, code: approved.code }));
    assert.match(token.accessToken, /^pxo_/);
    assert.deepEqual(token.scopes, ['read']);
    assertError(await http(X.url, 'POST', '/api/oauth/token', { integrationId, clientSecret, code: approved.code }), 400, 'INVALID_GRANT');

    // The grant reads as B, and only reads.
    const g = bearer(token.accessToken);
    assert.equal(ok(await http(X.url, 'GET', '/api/user/me', undefined, g)).id, B.userId);
    ok(await http(X.url, 'GET', '/api/position', undefined, g));
    assertError(await http(X.url, 'POST', '/api/user/faucet', undefined, g), 403, 'INSUFFICIENT_SCOPE');
    assertError(await http(X.url, 'POST', '/api/v2/order/limit', await B.limitBody({ side: 'BUY', quantity: '0.01', limitPrice: 90000 }), g), 403, 'INSUFFICIENT_SCOPE');
    assertError(await http(X.url, 'GET', '/api/user/api-key', undefined, g), 403, 'INSUFFICIENT_SCOPE');
    assertError(await http(X.url, 'GET', '/api/oauth/request/list', undefined, g), 403, 'INSUFFICIENT_SCOPE');
    assertError(await http(X.url, 'PUT', `/api/user/${B.userId}`, { name: 'via grant' }, g), 403, 'INSUFFICIENT_SCOPE');
    assertError(await http(X.url, 'GET', '/api/user/me', undefined, bearer('pxo_forged')), 401);

    const list = ok(await B.get('/api/oauth/request/list'));
    assert.equal(list.count, 1);
    assert.equal(list.list[0].id, c.requestId);
    assert.equal(list.list[0].status, 'approved');
    assert.equal(list.list[0].client.name, 'Portfolio tracker');
    assert.deepEqual(ok(await A.get('/api/oauth/request/list')), { list: [], count: 0 }, "A never sees B's approvals");

    assertError(await A.del(`/api/oauth/request/${c.requestId}`), 404);
    ok(await http(X.url, 'GET', '/api/user/me', undefined, g));
    ok(await B.del(`/api/oauth/request/${c.requestId}`));
    assertError(await http(X.url, 'GET', '/api/user/me', undefined, g), 401);
    assertError(await B.del(`/api/oauth/request/${c.requestId}`), 404);
    assertError(await B.del('/api/oauth/request/nope'), 400);
    assert.equal(ok(await B.get('/api/oauth/request/list')).list[0].status, 'revoked');
  });

  test('approval in the public signing client\'s shape: { oauthRequestId, apiKeyEnabled, signature }', async () => {
    const c = await open(`integrationId=${integrationId}&scopes=read`);
    const signature = await consent(B, c.requestId);
    assertError(await B.post('/api/oauth/approve', { signature }), 400, 'VALIDATION_ERROR');
    assertError(await B.post('/api/oauth/approve', { requestId: c.requestId, oauthRequestId: '00000000-0000-4000-8000-000000000000', signature }), 400);
    const approved = ok(await B.post('/api/oauth/approve', { oauthRequestId: c.requestId, apiKeyEnabled: false, signature }), 'approve');
    assert.equal(approved.requestId, c.requestId);
    assert.equal(new URL(approved.redirectUrl).searchParams.get('code'), approved.code);
  });

  test('deny: redirect with access_denied; listed only withRejected; no later approval', async () => {
    const c = await open(`integrationId=${integrationId}&state=s2`);
    const denied = ok(await http(X.url, 'POST', '/api/oauth/deny', { requestId: c.requestId }, bearer(A.accessToken)));
    const redirect = new URL(denied.redirectUrl);
    assert.equal(redirect.searchParams.get('error'), 'access_denied');
    assert.equal(redirect.searchParams.get('state'), 's2');
    assertError(await http(X.url, 'POST', '/api/oauth/deny', { requestId: c.requestId }), 409);
    assertError(await A.post('/api/oauth/approve', { requestId: c.requestId, signature: await consent(A, c.requestId) }), 409);
    assert.equal(ok(await A.get('/api/oauth/request/list')).count, 0);
    const withRejected = ok(await A.get('/api/oauth/request/list?withRejected=yes'));
    assert.deepEqual(withRejected.list.map((r: any) => [r.id, r.status]), [[c.requestId, 'rejected']]);
    // Anonymous denial works too (the consent screen may not be signed in).
    const c2 = await open(`integrationId=${integrationId}`);
    ok(await http(X.url, 'POST', '/api/oauth/deny', { requestId: c2.requestId }));
    assertError(await http(X.url, 'POST', '/api/oauth/deny', { requestId: '00000000-0000-4000-8000-000000000000' }), 404);
    assertError(await http(X.url, 'POST', '/api/oauth/deny', {}), 400);
  });
});
