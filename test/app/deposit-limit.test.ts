// Regression (found by test/app/fuzz/http-fuzz.test.ts): a deposit of 10^30 units was credited, and the read
// model could not store it (SQLite's 64-bit integers): the projection failed for good and every history
// route answered 503. A deposit that would bring a balance above the limit is refused and changes nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Bot, assertError, eventually, http, ok, startTestExchange, type TestExchange } from './client.js';

let X: TestExchange;
let U: Bot;
before(async () => {
  X = await startTestExchange();
  U = await new Bot(X.url).signIn();
});
after(async () => {
  await X?.stop();
});

const deposit = (amount: string) => http(X.url, 'POST', `/api/admin/users/${U.exchangeId}/deposit`, { amount }, { 'x-operator-token': X.ex.operatorToken });

test('a deposit past the balance limit is refused, journals nothing, and history keeps answering', async () => {
  ok(await deposit('1000'), 'a normal deposit');
  const seq = X.ex.sequencer.seq;
  const hash = X.ex.engine.stateHash();
  for (const amount of ['10000000000000000000000', '1000000000000000000000', '100000001', '99999999.99999999']) {
    const e = assertError(await deposit(amount));
    assert.ok(['DEPOSIT_LIMIT', 'INVALID_AMOUNT'].includes(e.code), `${amount}: ${e.code}`);
    if (amount.length < 20) assert.equal(e.code, 'DEPOSIT_LIMIT', amount);
    assert.equal(X.ex.sequencer.seq, seq, `${amount}: seq`);
    assert.equal(X.ex.engine.stateHash(), hash, `${amount}: state`);
  }
  // Exactly up to the limit (10^8 USDT in all) is still credited, and projected.
  ok(await deposit('99999000'), 'up to the limit');
  assert.equal((await U.balance()).funding.balance, 100_000_000);
  // The read model projected it (a history route answers, not 503 READ_MODEL_BEHIND).
  await eventually(() => U.get('/api/user/funding-transfer?limit=10'), (r) => r.status === 200 && JSON.stringify(r.body).includes('99999000'), 'deposit in the history');
  assertError(await deposit('0.00000001'), 422, 'DEPOSIT_LIMIT');
});
