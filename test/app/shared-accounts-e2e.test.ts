/**
 * Two gateways on one shared state, end to end: two exchanges started at once with AUTH_STORE=postgres on the same
 * fresh database and the same NATS cluster name, each with its own DATA_DIR. They create one signing key and one
 * operator token between them; a session opened on one is accepted by the other; a profile edited through one is read
 * through the other, and so are a trade signal, a mobile-app rule and every step of OAuth; a logout on one ends the
 * session on the other.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { NATS_TEST_URL, skipUnless } from '../services.js';
import { createPostgresTestDatabase } from '../store/dialects.js';
import { assertError, Bot, DOMAIN, eventually, http, ok, startTestExchange, type TestExchange } from './client.js';

const skip = (await skipUnless('nats')) || (await skipUnless('postgres'));

/** Another gateway's user cache may hold a profile this long (USER_TTL_MS in src/auth/auth-service.ts) plus slack. */
const STALE_PROFILE_MS = 15_000;

describe('e2e: two gateways on AUTH_STORE=postgres', { skip }, () => {
  const cluster = `test_${randomBytes(6).toString('hex')}`;
  let database: Awaited<ReturnType<typeof createPostgresTestDatabase>>;
  let G1: TestExchange;
  let G2: TestExchange;

  before(async () => {
    database = await createPostgresTestDatabase();
    const env = { AUTH_STORE: 'postgres', AUTH_DATABASE_URL: database.connectionString, NATS_URL: NATS_TEST_URL, CLUSTER_NAME: cluster };
    [G1, G2] = await Promise.all([startTestExchange(env), startTestExchange(env)]);
  });
  after(async () => {
    await Promise.all([G1?.stop(), G2?.stop()]);
    await database?.drop();
  });

  test('one operator token, copied to each DATA_DIR (0600) for the CLI, accepted by both', async () => {
    assert.notEqual(G1.ex.dataDir, G2.ex.dataDir);
    assert.equal(G1.ex.operatorToken, G2.ex.operatorToken);
    for (const G of [G1, G2]) {
      const file = join(G.ex.dataDir, 'operator-token');
      assert.equal(readFileSync(file, 'utf8').trim(), G1.ex.operatorToken);
      assert.equal(statSync(file).mode & 0o777, 0o600);
      ok(await http(G.url, 'GET', '/api/admin/status', undefined, { 'x-operator-token': G1.ex.operatorToken }), 'admin status');
    }
  });

  test('a mobile-app rule saved by an admin through one gateway blocks on the other', async () => {
    const admin = await new Bot(G1.url).signIn();
    await G1.ex.auth.setRole(admin.exchangeId, 'admin');
    const id = '5d1e0c2a-2222-4b4b-8c8c-0123456789ab';
    const check = async () => ok(await http(G2.url, 'GET', '/api/mobile-app/blocked-version?platform=android&version=3.1.0'), 'check on gateway 2') as { blocked: boolean; rule: { blockMessage: string } | null };
    assert.equal((await check()).blocked, false);
    ok(await admin.put(`/api/mobile-app/blocked-version/${id}`, { platform: 'android', versionMin: '3.0.0', versionMax: '3.2.0', blockMessage: 'Update' }), 'rule on gateway 1');
    const after = await check();
    assert.deepEqual([after.blocked, after.rule?.blockMessage], [true, 'Update']);
  });

  test('OAuth across gateways: registered, consented, exchanged, used and revoked on either, in any order', async () => {
    const operator = { 'x-operator-token': G1.ex.operatorToken };
    const body = { name: 'Shared tracker', redirectUri: 'https://tracker.example.com/cb', scopes: ['read'] };
    const { integration, clientSecret } = ok(await http(G1.url, 'POST', '/api/admin/oauth/integrations', body, operator), 'register on gateway 1') as {
      integration: { id: string }; clientSecret: string;
    };
    const listed = ok(await http(G2.url, 'GET', '/api/admin/oauth/integrations', undefined, operator), 'integrations on gateway 2') as { list: Array<{ id: string }> };
    assert.deepEqual(listed.list.map((i) => i.id), [integration.id]);

    // The consent screen opens on gateway 2; the wallet (signed in on gateway 1) approves there.
    const B = await new Bot(G1.url).signIn();
    const consent = ok(await http(G2.url, 'GET', `/api/oauth?integrationId=${integration.id}&scopes=read&state=s`), 'consent on gateway 2') as { requestId: string };
    const signature = await B.wallet.signTypedData(DOMAIN(), { 'Oauth consent': [{ name: 'oauthRequestId', type: 'string' }] }, { oauthRequestId: consent.requestId });
    const approved = ok(await B.post('/api/oauth/approve', { requestId: consent.requestId, signature }), 'approve on gateway 1') as { code: string };
    assertError(await http(G2.url, 'POST', '/api/oauth/deny', { requestId: consent.requestId }), 409);

    // The integration redeems the code on gateway 2, once: gateway 1 refuses it after.
    const token = ok(await http(G2.url, 'POST', '/api/oauth/token', { integrationId: integration.id, clientSecret, code: approved.code }), 'token on gateway 2') as { accessToken: string };
    assertError(await http(G1.url, 'POST', '/api/oauth/token', { integrationId: integration.id, clientSecret, code: approved.code }), 400, 'INVALID_GRANT');

    const grant = { authorization: `Bearer ${token.accessToken}` };
    for (const G of [G1, G2]) {
      assert.equal((ok(await http(G.url, 'GET', '/api/user/me', undefined, grant), 'the grant reads') as { id: string }).id, B.userId);
      assertError(await http(G.url, 'POST', '/api/user/faucet', undefined, grant), 403, 'INSUFFICIENT_SCOPE');
    }
    const onG2 = (method: string, path: string) => http(G2.url, method, path, undefined, { authorization: `Bearer ${B.accessToken}` });
    const mine = ok(await onG2('GET', '/api/oauth/request/list'), 'approvals on gateway 2') as { list: Array<{ id: string; status: string; client: { name: string } }> };
    assert.deepEqual(mine.list.map((r) => [r.id, r.status, r.client.name]), [[consent.requestId, 'approved', 'Shared tracker']]);

    // Revoked through gateway 2: gateway 1 refuses the grant on its next request (no cache in between).
    ok(await onG2('DELETE', `/api/oauth/request/${consent.requestId}`), 'revoke on gateway 2');
    assertError(await http(G1.url, 'GET', '/api/user/me', undefined, grant), 401);
    // All of it lived in PostgreSQL: no gateway has an auth.db of its own.
    for (const G of [G1, G2]) assert.equal(existsSync(join(G.ex.dataDir, 'auth.db')), false, `${G.ex.dataDir}/auth.db`);
  });

  test('a token issued by one gateway is accepted by the other; profiles edited and signals posted on one are read on the other', async () => {
    const A = await new Bot(G1.url).signIn();
    const onG2 = (method: string, path: string, body?: unknown) => http(G2.url, method, path, body, { authorization: `Bearer ${A.accessToken}` });

    const name = `Shared ${randomBytes(4).toString('hex')}`;
    ok(await A.req('PUT', `/api/user/${A.userId}`, { name, locale: 'fr' }), 'profile edit on gateway 1');
    const me2 = ok(await onG2('GET', '/api/user/me'), 'me on gateway 2') as { id: string; exchangeId: number; name: string; locale: string };
    assert.deepEqual({ id: me2.id, exchangeId: me2.exchangeId, name: me2.name, locale: me2.locale }, { id: A.userId, exchangeId: A.exchangeId, name, locale: 'fr' });
    const found = ok(await onG2('GET', `/api/user/list?search=${encodeURIComponent(name)}`), 'search on gateway 2') as { list: Array<{ id: string; name: string }>; count: number };
    assert.deepEqual(found.list.map((u) => [u.id, u.name]), [[A.userId, name]]);
    assert.equal(found.count, 1);

    // The other way: favourites set on gateway 2, read on gateway 1 (whose user cache may serve the old row briefly).
    ok(await onG2('PUT', '/api/pair/BTCUSDT/favorite', { favorite: true }), 'favourite on gateway 2');
    await eventually(async () => (ok(await A.get('/api/user/me')) as { favoriteInstruments: string[] }).favoriteInstruments, (f) => f.includes('BTCUSDT'), 'the favourite on gateway 1', STALE_PROFILE_MS);

    // A trade signal posted through gateway 1 is public on gateway 2 and in its author's list there.
    const posted = ok(await A.post('/api/trade/signal', { instrument: 'BTCUSDT', side: 'BUY', entryPrice: '100000', comment: name }), 'signal on gateway 1') as { id: string };
    const read = ok(await http(G2.url, 'GET', `/api/trade/signal/${posted.id}`), 'signal on gateway 2') as { id: string; comment: string; entryPrice: number; author: { name: string } };
    assert.deepEqual([read.id, read.comment, read.entryPrice, read.author.name], [posted.id, name, 100000, name]);
    const listed = ok(await onG2('GET', '/api/trade/signal'), 'signals on gateway 2') as { list: Array<{ id: string }>; count: number };
    assert.deepEqual([listed.list.map((x) => x.id), listed.count], [[posted.id], 1]);

    // A logout on gateway 1 ends the session on gateway 2 (revocation over NATS).
    ok(await http(G1.url, 'POST', '/auth/logout', undefined, { authorization: `Bearer ${A.accessToken}` }), 'logout');
    await eventually(async () => (await onG2('GET', '/api/user/me')).status, (s) => s === 401, 'gateway 2 to refuse the logged-out token');
  });
});
