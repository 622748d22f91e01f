// Routes that show one user's record to another (transfer target lookup, user search, public profile, trade
// signal author) carry public fields only: no email, social links, favourites, locale or exchangeId.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Bot, http, ok, startTestExchange, type TestExchange } from './client.js';

const PRIVATE = ['email', 'social', 'favoriteInstruments', 'locale', 'dateTimeFormat', 'exchangeId', 'role', 'marginCall'];

/** Every key anywhere in a JSON value. */
function keysOf(v: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(v)) v.forEach((x) => keysOf(x, out));
  else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) keysOf(x, out.add(k));
  return out;
}

describe('privacy of other users\' records', () => {
  let X: TestExchange;
  let A: Bot;
  let B: Bot;
  const secrets = { email: 'alice.private@example.com', social: [{ type: 'telegram', value: '@alice_private_handle' }], locale: 'de-CH' };

  /** Neither a private key nor a private value of A's anywhere in what B sees. */
  const assertPublicOnly = (body: unknown, what: string, allowNullEmail = false) => {
    const keys = keysOf(body);
    for (const k of PRIVATE) {
      if (k === 'email' && allowNullEmail) continue;
      assert.ok(!keys.has(k), `${what}: ${k} leaked in ${JSON.stringify(body)}`);
    }
    const text = JSON.stringify(body);
    for (const v of [secrets.email, secrets.social[0]!.value]) assert.ok(!text.includes(v), `${what}: ${v} leaked`);
  };

  before(async () => {
    X = await startTestExchange();
    [A, B] = await Promise.all([new Bot(X.url).signIn(), new Bot(X.url).signIn()]);
    assert.equal(ok(await A.put(`/api/user/${A.userId}`, { name: 'Alice Private', ...secrets })).email, secrets.email);
    ok(await A.put('/api/pair/BTCUSDT/favorite', { favorite: true }));
  });
  after(async () => {
    await X?.stop();
  });

  test('GET /api/transfer/detail shows the target\'s email to nobody but the target', async () => {
    const smartAccount = ok(await B.get(`/api/transfer/detail?target=${A.address}`)).smartAccountAddress as string;
    assert.notEqual(smartAccount.toLowerCase(), A.address.toLowerCase());
    for (const target of [A.address, A.address.toLowerCase(), smartAccount]) {
      const seen = ok(await B.get(`/api/transfer/detail?target=${target}`), `B looks up ${target}`);
      assert.deepEqual(Object.keys(seen).sort(), ['email', 'smartAccountAddress'], 'the spec\'s shape is kept');
      assert.equal(seen.email, null, 'another user\'s email stays private');
      assert.match(seen.smartAccountAddress, /^0x[0-9a-fA-F]{40}$/);
      assertPublicOnly(seen, 'transfer detail', true);
      const own = ok(await A.get(`/api/transfer/detail?target=${target}`), 'A looks up itself');
      assert.deepEqual(own, { smartAccountAddress: seen.smartAccountAddress, email: secrets.email });
    }
  });

  test('user search, public profile and trade-signal author carry public fields only', async () => {
    const authId = ok(await A.get('/api/user/me')).authId as string;
    const list = ok(await B.get(`/api/user/list?authId=${authId}`));
    assert.equal(list.list[0].name, 'Alice Private');
    assertPublicOnly(list, 'user list');
    const byName = ok(await B.get('/api/user/list?search=Alice Private'));
    assert.equal(byName.count, 1);
    assertPublicOnly(byName, 'user search');
    const profile = ok(await B.get(`/api/public/${authId}/profile`));
    assert.equal(profile.name, 'Alice Private');
    assertPublicOnly(profile, 'public profile');
    const signal = ok(await A.post('/api/trade/signal', { instrument: 'BTCUSDT', side: 'BUY', entryPrice: '100000' }));
    const pub = ok(await http(X.url, 'GET', `/api/trade/signal/${signal.id}`));
    assert.equal(pub.author.name, 'Alice Private');
    assertPublicOnly(pub, 'trade signal');
  });
});
