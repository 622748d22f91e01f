// Users and profiles end to end over HTTP: search, own-profile edits (others' → 403), favourites reflected
// in /api/user/me, sign-up checks, smart-account validation, public profiles, roles, and the operator-only
// mobile-app rules. Bad input → 4xx with the error shape and no change.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Bot, assertError, eventually, http, ok, startTestExchange, type TestExchange } from './client.js';

/** The operator action (src/auth setRole) applied to the running exchange's auth database. */
async function grantAdmin(X: TestExchange, exchangeId: number): Promise<void> {
  await X.ex.auth.setRole(exchangeId, 'admin');
}

describe('users and profile', () => {
  let X: TestExchange;
  let A: Bot;
  let B: Bot;

  before(async () => {
    X = await startTestExchange();
    [A, B] = await Promise.all([new Bot(X.url).signIn(), new Bot(X.url).signIn()]);
  });
  after(async () => {
    await X?.stop();
  });

  test('GET /api/user/me carries the role', async () => {
    const me = ok(await A.get('/api/user/me'));
    assert.equal(me.role, 'user');
  });

  test('PUT /api/user/{own id} edits the profile; /me shows it', async () => {
    const u = ok(await A.put(`/api/user/${A.userId}`, {
      name: 'Alice Trader', email: 'alice@example.com', locale: 'de-CH', social: [{ type: 'x', value: '@alice' }],
    }));
    assert.equal(u.name, 'Alice Trader');
    assert.equal(u.email, 'alice@example.com');
    assert.equal(u.locale, 'de-CH');
    assert.deepEqual(u.social, [{ type: 'x', value: '@alice' }]);
    const me = ok(await A.get('/api/user/me'));
    assert.equal(me.name, 'Alice Trader');
    assert.equal(me.wallet, u.wallet);
    // null clears a field
    assert.equal(ok(await A.put(`/api/user/${A.userId}`, { email: null })).email, null);
  });

  test("PUT /api/user/{someone else's id} → 403, their profile unchanged", async () => {
    const before = ok(await B.get('/api/user/me'));
    assertError(await A.put(`/api/user/${B.userId}`, { name: 'hijacked' }), 403, 'FORBIDDEN');
    assert.deepEqual(ok(await B.get('/api/user/me')), before);
  });

  test('PUT /api/user bad input → 400, nothing changes', async () => {
    const before = ok(await A.get('/api/user/me'));
    for (const body of [
      {}, { name: '' }, { email: 'not-an-email' }, { avatar: 'http://insecure/img.png' }, { locale: 'english' },
      { name: 'x', role: 'admin' }, { social: [{ type: 'x' }] }, { name: 'a\u0000b' },
    ]) {
      assertError(await A.put(`/api/user/${A.userId}`, body), 400);
    }
    assertError(await A.put('/api/user/not-a-uuid', { name: 'x' }), 400);
    assert.deepEqual(ok(await A.get('/api/user/me')), before);
    assert.equal(before.role, 'user');
  });

  test('POST /api/user/account applies optional fields and returns the user', async () => {
    const u = ok(await B.post('/api/user/account', { name: 'Bob' }));
    assert.equal(u.name, 'Bob');
    assert.equal(u.id, B.userId);
    assert.equal(ok(await B.post('/api/user/account')).name, 'Bob');
    assertError(await B.post('/api/user/account', { wallet: '0x0' }), 400);
  });

  test('PUT /api/pair/{pairId}/favorite is reflected in favoriteInstruments', async () => {
    ok(await A.put('/api/pair/BTCUSDT/favorite', { favorite: true }));
    ok(await A.put('/api/pair/ETHUSDT/favorite', { favorite: true }));
    ok(await A.put('/api/pair/BTCUSDT/favorite', { favorite: true }));
    assert.deepEqual(ok(await A.get('/api/user/me')).favoriteInstruments, ['BTCUSDT', 'ETHUSDT']);
    ok(await A.put('/api/pair/BTCUSDT/favorite', { favorite: false }));
    assert.deepEqual(ok(await A.get('/api/user/me')).favoriteInstruments, ['ETHUSDT']);
    assertError(await A.put('/api/pair/NOPEUSDT/favorite', { favorite: true }), 404, 'INSTRUMENT_NOT_FOUND');
    assertError(await A.put('/api/pair/BTCUSDT/favorite', { favorite: 'yes' }), 400);
    assertError(await A.put('/api/pair/BTCUSDT/favorite', {}), 400);
    assert.deepEqual(ok(await A.get('/api/user/me')).favoriteInstruments, ['ETHUSDT']);
    assert.deepEqual(ok(await B.get('/api/user/me')).favoriteInstruments, []);
  });

  test('GET /api/user/list: search ≥ 3 characters, authId filter, public fields only', async () => {
    const byName = ok(await B.get('/api/user/list?search=alice'));
    assert.equal(byName.count, 1);
    assert.equal(byName.list[0].id, A.userId);
    assert.equal(byName.list[0].name, 'Alice Trader');
    for (const item of byName.list) {
      for (const secret of ['email', 'social', 'favoriteInstruments', 'exchangeId', 'locale']) assert.ok(!(secret in item), `${secret} leaked`);
    }
    const byWallet = ok(await B.get(`/api/user/list?search=${B.address.slice(0, 10).toLowerCase()}`));
    assert.ok(byWallet.list.some((u: any) => u.id === B.userId));
    const me = ok(await A.get('/api/user/me'));
    const byAuthId = ok(await B.get(`/api/user/list?authId=${me.authId}`));
    assert.deepEqual(byAuthId.list.map((u: any) => u.id), [A.userId]);
    // LIKE wildcards are literal
    assert.equal(ok(await B.get('/api/user/list?search=%25%25%25')).count, 0);
    const page = ok(await B.get('/api/user/list?limit=1&offset=1'));
    assert.equal(page.list.length, 1);
    assert.equal(page.count, 2);
    assertError(await B.get('/api/user/list?search=ab'), 400);
    assertError(await B.get('/api/user/list?authId=nope'), 400);
    assertError(await B.get('/api/user/list?limit=0'), 400);
    assertError(await http(X.url, 'GET', '/api/user/list?search=alice'), 401);
  });

  test('sign-up check and quota are public', async () => {
    assert.deepEqual(ok(await http(X.url, 'GET', `/api/user/sign-up/${A.address}/check`)), { wallet: A.address, registered: true });
    const stranger = '0x' + '12'.repeat(20);
    assert.equal(ok(await http(X.url, 'GET', `/api/user/sign-up/${stranger}/check`)).registered, false);
    assertError(await http(X.url, 'GET', '/api/user/sign-up/not-a-wallet/check'), 400);
    const quota = ok(await http(X.url, 'GET', '/api/user/sign-up/quota'));
    assert.equal(quota.registered, 2);
    assert.equal(quota.limit, null);
  });

  test('image check follows the avatar', async () => {
    assert.deepEqual(ok(await B.get('/api/user/image/check')), { hasImage: false, avatar: null });
    ok(await B.put(`/api/user/${B.userId}`, { avatar: 'https://cdn.example.com/b.png' }));
    assert.deepEqual(ok(await B.get('/api/user/image/check')), { hasImage: true, avatar: 'https://cdn.example.com/b.png' });
    assertError(await http(X.url, 'GET', '/api/user/image/check'), 401);
  });

  test('oct delegate list is empty and needs a token', async () => {
    assert.deepEqual(ok(await A.get('/api/user/oct/delegate')), { list: [], count: 0 });
    assertError(await http(X.url, 'GET', '/api/user/oct/delegate'), 401);
  });

  test('POST /api/smart-account/validate knows registered smart accounts', async () => {
    // The session record (refresh response) names the smart account.
    const session = ok(await http(X.url, 'POST', '/auth/refresh', undefined, { authorization: `Bearer ${A.refreshToken}` }));
    A.accessToken = session.token.accessToken;
    A.refreshToken = session.token.refreshToken;
    const smart = session.user.smartAccountAddress as string;
    const other = '0x' + 'ab'.repeat(20);
    const r = ok(await B.post('/api/smart-account/validate', { addresses: [smart, other] }));
    assert.deepEqual(r.list, [{ address: smart, valid: true }, { address: other, valid: false }]);
    assertError(await B.post('/api/smart-account/validate', { addresses: [] }), 400);
    assertError(await B.post('/api/smart-account/validate', { addresses: ['0x1'] }), 400);
    assertError(await http(X.url, 'POST', '/api/smart-account/validate', { addresses: [other] }), 401);
  });

  test('GET /api/public/{authId}/profile: statistics, chart, position history; no private fields', async () => {
    await Promise.all([A.faucet(), B.faucet()]);
    // A opens and closes a position against B, so there is one closed lifetime.
    ok(await B.limit({ side: 'SELL', quantity: '0.01', limitPrice: 100000 }));
    assert.equal(ok(await A.limit({ side: 'BUY', quantity: '0.01', limitPrice: 100000 })).status, 'FILLED');
    ok(await B.limit({ side: 'BUY', quantity: '0.01', limitPrice: 100000 }));
    assert.equal(ok(await A.post('/api/v2/position/BTCUSDT/close', await A.closeBody('BTCUSDT', '0.01', 10))).status, 'FILLED');
    const authId = ok(await A.get('/api/user/me')).authId;
    const p = await eventually(async () => ok(await B.get(`/api/public/${authId}/profile`)), (v) => v.positionHistory.length === 1, 'closed position in profile');
    assert.equal(p.id, A.userId);
    assert.equal(p.authId, authId);
    assert.equal(p.name, 'Alice Trader');
    assert.equal(p.statistics.positionsClosed, 1);
    assert.equal(p.statistics.positionsOpen, 0);
    assert.equal(p.statistics.tradingVolume, 2000);
    assert.ok(p.statistics.fees > 0);
    assert.equal(p.positionHistory[0].instrument, 'BTCUSDT');
    assert.equal(p.positionHistory[0].side, 'BUY');
    assert.equal(p.chart.list.length, 30);
    const lastBalance = p.chart.list[29].balance;
    const funding = ok(await A.get('/api/user/funding'));
    assert.equal(lastBalance, funding[0].quantity);
    for (const secret of ['email', 'wallet', 'exchangeId', 'favoriteInstruments', 'social']) assert.ok(!(secret in p), `${secret} leaked`);
    assertError(await B.get('/api/public/00000000-0000-4000-8000-000000000000/profile'), 404);
    assertError(await B.get('/api/public/nope/profile'), 400);
    assertError(await http(X.url, 'GET', `/api/public/${authId}/profile`), 401);
  });

  test('mobile app: only admins change blocked versions; semver validated; apps read whether blocked', async () => {
    const id = '3f2b6c1e-1111-4a4a-9b9b-0123456789ab';
    const rule = { platform: 'ios', versionMin: '1.0.0', versionMax: '1.4.2', blockType: '2', blockMessage: 'Please update' };
    assertError(await A.put(`/api/mobile-app/blocked-version/${id}`, rule), 403, 'FORBIDDEN');
    assertError(await A.put(`/api/mobile-app/blocked-version/${id}`, { bogus: true }), 403, 'FORBIDDEN');
    assertError(await http(X.url, 'PUT', `/api/mobile-app/blocked-version/${id}`, rule), 401);
    const check = async (platform: string, version: string) => ok(await http(X.url, 'GET', `/api/mobile-app/blocked-version?platform=${platform}&version=${version}`));
    assert.equal((await check('ios', '1.2.0')).blocked, false, 'refused writes changed nothing');

    await grantAdmin(X, A.exchangeId);
    assert.equal(ok(await A.get('/api/user/me')).role, 'admin');
    const saved = ok(await A.put(`/api/mobile-app/blocked-version/${id}`, rule));
    assert.equal(saved.id, id);
    assert.equal(saved.versionMax, '1.4.2');
    assert.equal((await check('ios', '1.2.0')).blocked, true);
    assert.equal((await check('ios', '1.4.2')).rule.blockMessage, 'Please update');
    assert.equal((await check('ios', '1.4.3')).blocked, false);
    assert.equal((await check('ios', '1.0.0-beta.1')).blocked, false, 'a prerelease precedes its release');
    assert.equal((await check('android', '1.2.0')).blocked, false);

    for (const bad of [{ versionMin: '1.0' }, { versionMax: 'v1.2.3' }, { versionMin: '2.0.0', versionMax: '1.0.0' }, { blockType: '3' }, { platform: 'windows' }]) {
      assertError(await A.put(`/api/mobile-app/blocked-version/${id}`, bad), 400);
    }
    assertError(await A.put('/api/mobile-app/blocked-version/1234', rule), 400);
    assertError(await A.put('/api/mobile-app/blocked-version/5f2b6c1e-1111-4a4a-9b9b-0123456789ab', { versionMin: '1.0.0' }), 400, 'PLATFORM_REQUIRED');
    assert.equal((await check('ios', '1.4.2')).rule.versionMax, '1.4.2', 'bad writes changed nothing');
    // A patch changes only the given fields.
    assert.equal(ok(await A.put(`/api/mobile-app/blocked-version/${id}`, { blockType: '0' })).versionMin, '1.0.0');
    assert.equal((await check('ios', '1.2.0')).blocked, false, 'blockType 0 is inactive');
    assertError(await http(X.url, 'GET', '/api/mobile-app/blocked-version?platform=ios&version=latest'), 400);
    assertError(await http(X.url, 'GET', '/api/mobile-app/blocked-version?platform=ios'), 400);
  });

  test('every route of this issue is in /openapi.json with its schemas', async () => {
    const doc = ok(await http(X.url, 'GET', '/openapi.json'));
    const routes: Array<[string, string]> = [
      ['get', '/api/user/list'], ['put', '/api/user/{userId}'], ['post', '/api/user/account'], ['get', '/api/user/sign-up/{wallet}/check'],
      ['get', '/api/user/sign-up/quota'], ['get', '/api/user/image/check'], ['get', '/api/public/{authId}/profile'],
      ['put', '/api/pair/{pairId}/favorite'], ['get', '/api/user/oct/delegate'], ['post', '/api/smart-account/validate'],
      ['get', '/api/public/yield/apr'], ['get', '/api/user/yield/status'], ['get', '/api/user/yield/earned'],
      ['get', '/api/public/statistics/total'], ['get', '/api/public/statistics/online-users'], ['get', '/api/public/statistics/charts'],
      ['get', '/api/trade/signal'], ['post', '/api/trade/signal'], ['get', '/api/trade/signal/{id}'],
      ['put', '/api/mobile-app/blocked-version/{id}'], ['get', '/api/mobile-app/blocked-version'],
      ['get', '/api/oauth'], ['post', '/api/oauth/approve'], ['post', '/api/oauth/deny'], ['post', '/api/oauth/token'],
      ['get', '/api/oauth/request/list'], ['delete', '/api/oauth/request/{id}'], ['post', '/api/admin/oauth/integrations'],
    ];
    for (const [method, path] of routes) {
      const op = doc.paths?.[path]?.[method];
      assert.ok(op, `${method.toUpperCase()} ${path} missing from /openapi.json`);
      assert.ok(op.responses?.['200']?.content, `${method.toUpperCase()} ${path}: no 200 schema`);
    }
  });
});
