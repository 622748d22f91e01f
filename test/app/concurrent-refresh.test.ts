// End to end: the public client refreshes from several requests at once when its access token expires
// (`Balance.listen` alone sends six). Within REFRESH_GRACE_SEC they all get 200 with the same child refresh token;
// after the window the parent revokes the family. test/auth/refresh-grace.test.ts has the exact boundaries.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Bot, assertError, http, ok, sleep, startTestExchange, type TestExchange } from './client.js';

const GRACE_SEC = 1;
const refresh = (X: TestExchange, token: string) => http(X.url, 'POST', '/auth/refresh', undefined, { authorization: `Bearer ${token}` });
const me = (X: TestExchange, token: string) => http(X.url, 'GET', '/api/user/me', undefined, { authorization: `Bearer ${token}` });

interface Refreshed {
  token: { accessToken: string; refreshToken: string };
}

describe('e2e: concurrent refresh with a grace window', () => {
  let X: TestExchange;
  before(async () => {
    X = await startTestExchange({ REFRESH_GRACE_SEC: String(GRACE_SEC) });
  });
  after(async () => {
    await X?.stop();
  });

  test('six parallel refreshes: all 200, one child, distinct working access tokens; after the grace the parent revokes the family', async () => {
    const bot = await new Bot(X.url).signIn();
    const answers = (await Promise.all(Array.from({ length: 6 }, () => refresh(X, bot.refreshToken)))).map((r) => ok(r, 'parallel refresh') as Refreshed);
    const child = answers[0].token.refreshToken;
    assert.notEqual(child, bot.refreshToken);
    assert.deepEqual(new Set(answers.map((a) => a.token.refreshToken)), new Set([child]));
    assert.equal(new Set(answers.map((a) => a.token.accessToken)).size, 6);
    for (const a of answers) assert.equal(ok(await me(X, a.token.accessToken), 'new access token').exchangeId, bot.exchangeId);

    // The parent keeps answering the same child until the window closes, then it is reuse.
    const deadline = Date.now() + GRACE_SEC * 1000 + 5000;
    let res = await refresh(X, bot.refreshToken);
    while (res.status === 200 && Date.now() < deadline) {
      assert.equal((res.body as Refreshed).token.refreshToken, child, 'the same child within the grace');
      await sleep(100);
      res = await refresh(X, bot.refreshToken);
    }
    assertError(res, 401, 'refresh_token_reused');
    assertError(await refresh(X, child), 401, 'invalid_refresh_token');
    for (const a of answers) assertError(await me(X, a.token.accessToken), 401, 'UNAUTHORIZED');
  });

  test('within the grace the child is the one live token: it rotates on, and the parent is then reuse', async () => {
    const bot = await new Bot(X.url).signIn();
    const [a, b] = (await Promise.all([refresh(X, bot.refreshToken), refresh(X, bot.refreshToken)])).map((r) => ok(r, 'refresh') as Refreshed);
    assert.equal(a.token.refreshToken, b.token.refreshToken);
    const grandchild = ok(await refresh(X, a.token.refreshToken), 'child rotates') as Refreshed;
    // Handing the child out again would fork the family: the parent is reuse even inside the window.
    assertError(await refresh(X, bot.refreshToken), 401, 'refresh_token_reused');
    assertError(await refresh(X, grandchild.token.refreshToken), 401, 'invalid_refresh_token');
  });

  test('after logout the parent gets nothing, within the grace or not', async () => {
    const bot = await new Bot(X.url).signIn();
    const child = ok(await refresh(X, bot.refreshToken), 'refresh') as Refreshed;
    ok(await http(X.url, 'POST', '/auth/logout', undefined, { authorization: `Bearer ${child.token.accessToken}` }), 'logout');
    assertError(await refresh(X, bot.refreshToken), 401, 'invalid_refresh_token');
    assertError(await refresh(X, child.token.refreshToken), 401, 'invalid_refresh_token');
  });
});
