// End to end: deposits, withdrawals through the simulated chain (done, error, operator hold), transfer lists,
// transfer detail, the transfer-update and funding channels, and money conservation across deposits,
// trading and withdrawals. Real exchange over HTTP + a real centrifuge client. Tests share one exchange.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Centrifuge } from 'centrifuge';
import WebSocket from 'ws';
import { deriveSmartAccountAddress } from '../../src/auth/smart-account.js';
import type { Engine } from '../../src/engine/engine.js';
import { Bot, DOMAIN, assertError, assertMoney, eventually, newOrderId, ok, startTestExchange, units, type TestExchange } from './client.js';

const CHAIN_DELAY_MS = 150;
const RECIPIENT = '0x' + '5a'.repeat(20);

async function withdrawBody(bot: Bot, amount: string, recipient = RECIPIENT) {
  const signature = await bot.wallet.signTypedData(
    DOMAIN(),
    { Withdraw: [{ name: 'recipient', type: 'address' }, { name: 'amount', type: 'uint256' }] },
    { recipient, amount: units(amount) },
  );
  return { recipient, amount, signature };
}

interface Pub { channel: string; data: any }

async function listen(X: TestExchange, bot: Bot, names: string[]): Promise<{ pubs: Pub[]; close(): void }> {
  const c = new Centrifuge(X.ex.wsUrl, { websocket: WebSocket });
  const pubs: Pub[] = [];
  const subs = names.map((n) => {
    const channel = `${X.ex.channelPrefix}${n}-${bot.exchangeId}`;
    const sub = c.newSubscription(channel, { data: { accessToken: bot.accessToken } });
    sub.on('publication', (ctx) => pubs.push({ channel: n, data: ctx.data }));
    return new Promise<void>((resolve, reject) => {
      sub.once('subscribed', () => resolve());
      sub.once('error', (e) => reject(new Error(JSON.stringify(e))));
      sub.subscribe();
    });
  });
  c.connect();
  await Promise.all(subs);
  return { pubs, close: () => c.disconnect() };
}

const available = async (bot: Bot) => units(String((await bot.balance()).availableBalance));
const funding = async (bot: Bot) => units(String((await bot.balance()).funding.balance));

describe('e2e: funds through the simulated chain', () => {
  let X: TestExchange;
  let A: Bot;
  let B: Bot;

  before(async () => {
    X = await startTestExchange({ CHAIN_DELAY_MS: String(CHAIN_DELAY_MS), CHAIN_FAILURE_RATE: '0', CHAIN_SEED: 'funds-test' });
    A = await new Bot(X.url).signIn();
    B = await new Bot(X.url).signIn();
  });
  after(async () => {
    await X?.stop();
  });

  test('withdrawal: locked at once, held by the operator, released, done; channel events at each step', async () => {
    const ch = await listen(X, A, ['transfer-update', 'funding']);
    try {
      await A.faucet();
      await eventually(() => funding(A), (v) => v === units('10000'), 'faucet credited');
      const res = await A.post('/api/transfer/pf/withdraw', await withdrawBody(A, '1234.56789012'));
      const t = ok(res, 'withdraw');
      assert.deepEqual([t.type, t.status, t.amount, t.coin], ['withdraw', 'pending', 1234.56789012, 'usdt']);
      assert.equal(await available(A), units('10000') - units('1234.56789012'), 'locked at request');
      assert.equal(await funding(A), units('10000'), 'balance moves only when done');

      const held = await X.ex.chain.bridge.hold(t.id, true);
      assert.ok(held.reply.ok, `hold: ${JSON.stringify(held.reply, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`);
      let list = ok(await A.get('/api/transfer'));
      assert.deepEqual(list.list.map((x: any) => [x.id, x.status]), [[t.id, 'blocked']]);
      assert.equal(list.count, 1);
      assert.deepEqual(ok(await A.get('/api/transfer?status=pending')).list, []);
      // The public client puts JavaScript Dates into the query as they are: String(date), ~62 characters with
      // spaces and a '+' (read back as a space), e.g. "Sun Nov 22 2026 19:43:33 GMT+0000 (Coordinated Universal Time)".
      const u = new URL('/api/transfer', X.url);
      u.search = `type=withdraw&after=${String(new Date(Date.now() - 3_600_000))}&before=${String(new Date(Date.now() + 3_600_000))}`;
      assert.deepEqual(ok(await A.get(u.pathname + u.search), 'transfers between two Dates').list.map((x: any) => x.id), [t.id]);

      // The chain's outcome arrives and meets the hold: parked, not applied.
      await eventually(async () => X.ex.chain.simulated.pending, (n) => n === 0, 'the chain answered');
      await X.ex.chain.bridge.idle();
      assert.equal(ok(await A.get('/api/transfer')).list[0].status, 'blocked', 'held: the chain outcome is not applied');
      assert.equal(await funding(A), units('10000'));

      await X.ex.chain.bridge.hold(t.id, false);
      await eventually(() => A.get('/api/transfer'), (r) => r.body.count === 0, 'settled after release');
      assert.equal(await funding(A), units('10000') - units('1234.56789012'));
      assert.equal(await available(A), units('10000') - units('1234.56789012'));

      await eventually(async () => ch.pubs.length, (n) => n >= 6, 'channel events');
      const tu = ch.pubs.filter((p) => p.channel === 'transfer-update' && p.data.type === 'withdraw').map((p) => p.data);
      assert.deepEqual(ch.pubs.filter((p) => p.data.type === 'deposit').map((p) => [p.data.status, p.data.amount]), [['done', 10000]], 'the faucet deposit');
      assert.deepEqual(tu.map((d) => d.status), ['pending', 'blocked', 'pending', 'done']);
      assert.ok(tu.every((d) => d.id === t.id && d.exchangeId === A.exchangeId && d.amount === 1234.56789012));
      const times = tu.map((d) => Date.parse(d.updatedAt));
      assert.ok(times.every((x, i) => i === 0 || x > times[i - 1]!), `updatedAt strictly increases: ${tu.map((d) => d.updatedAt)}`);
      const fu = ch.pubs.filter((p) => p.channel === 'funding').map((p) => p.data.quantity);
      assert.deepEqual(fu, ['10000', '8765.43210988'], 'funding: deposit, then the withdrawal when done');

      await eventually(() => A.get('/api/user/funding-transfer'), (r) => r.body.count === 2, 'funding-transfer projected');
      const latest = ok(await A.get('/api/user/funding-transfer')).list;
      assert.deepEqual(latest.map((m: any) => [m.type, m.quantity, m.balance]), [['withdraw', -1234.56789012, 8765.43210988], ['deposit', 10000, 10000]]);
    } finally {
      ch.close();
    }
  });

  test('a failed withdrawal returns exactly the locked amount and leaves the balance alone', async () => {
    X.ex.chain.simulated.setFailureRate(1);
    try {
      const before = { available: await available(A), funding: await funding(A) };
      const t = ok(await A.post('/api/transfer/pf/withdraw', await withdrawBody(A, '777.00000001')), 'withdraw');
      assert.equal(await available(A), before.available - units('777.00000001'));
      await eventually(() => A.get('/api/transfer'), (r) => r.body.count === 0, 'error settled');
      assert.equal(await available(A), before.available, 'exactly the locked amount came back');
      assert.equal(await funding(A), before.funding);
      assert.equal(X.ex.engine.transfer(t.id), undefined);
    } finally {
      X.ex.chain.simulated.setFailureRate(0);
    }
  });

  test('refusals change nothing: more than available, bad signature, bad recipient', async () => {
    const before = { available: await available(A), funding: await funding(A) };
    assertError(await A.post('/api/transfer/pf/withdraw', await withdrawBody(A, '1000000')), 422);
    const body = await withdrawBody(A, '1');
    assertError(await A.post('/api/transfer/pf/withdraw', { ...body, amount: '2' }), [400, 401, 403]);
    assertError(await A.post('/api/transfer/pf/withdraw', { ...body, recipient: 'nope' }), 400);
    // Mixed case with a wrong EIP-55 checksum cannot be signed (ethers refuses it): 400, not a 500.
    const badChecksum = '0x5A5a5a5a5A5a5a5a5a5A5a5A5a5a5A5a5a5A5a5B';
    assert.match(assertError(await A.post('/api/transfer/pf/withdraw', { ...body, recipient: badChecksum }), 400, 'INVALID_SIGNATURE').message, /recipient/);
    assertError(await B.post('/api/transfer/pf/withdraw', body), [400, 401, 403]); // someone else's signature
    assert.deepEqual({ available: await available(A), funding: await funding(A) }, before);
    assert.equal(ok(await A.get('/api/transfer')).count, 0);
  });

  test('chain deposits are credited once per transaction; operator deposits too', async () => {
    const before = await funding(B);
    const tx = X.ex.chain.simulated.deposit(B.exchangeId, units('250.5'));
    X.ex.chain.simulated.deposit(B.exchangeId, units('250.5'), tx); // the watcher reports it twice
    // Both reports delivered and handled: credited once.
    await eventually(async () => X.ex.chain.simulated.pending, (n) => n === 0, 'both reports delivered');
    await X.ex.chain.bridge.idle();
    assert.equal(await funding(B), before + units('250.5'), 'credited once');
    const r = await X.ex.chain.bridge.operatorDeposit(B.exchangeId, units('10'), 'op-1');
    assert.ok(r.reply.ok);
    assert.equal((await X.ex.chain.bridge.operatorDeposit(B.exchangeId, units('10'), 'op-1')).reply.ok, false, 'same id refused');
    assert.equal(await funding(B), before + units('260.5'));
  });

  test('conservation across deposits, trading and withdrawals', async () => {
    await B.faucet();
    // B sells to A: fees and realized PnL move money between accounts and the exchange.
    ok(await B.limit({ side: 'SELL', quantity: '0.1', limitPrice: '100000', leverage: 10 }), 'sell');
    ok(await A.limit({ side: 'BUY', quantity: '0.1', limitPrice: '100000', leverage: 10 }), 'buy');
    ok(await A.post('/api/v2/position/BTCUSDT/close', await A.closeBody('BTCUSDT', '0.05', 10, newOrderId())), 'close half');
    const w = ok(await B.post('/api/transfer/pf/withdraw', await withdrawBody(B, '100')), 'withdraw');
    await eventually(() => B.get('/api/transfer'), (r) => r.body.count === 0, 'withdraw done');
    assert.equal(X.ex.engine.transfer(w.id), undefined);
    X.ex.engine.checkInvariants();
    const l = (X.ex.engine as Engine).ledger();
    assert.equal(l.balances + l.fees + l.reserveFund - l.openCost, l.deposits - l.withdrawals);
    // deposits: two faucets for A? no — A once, B once, chain 250.5, operator 10; withdrawals: A's 1234.56789012 and B's 100
    assert.equal(l.deposits, units('10000') * 2n + units('250.5') + units('10'));
    assert.equal(l.withdrawals, units('1234.56789012') + units('100'));
  });

  test('transfer detail: by wallet or smart account; unknown address 404; garbage 400', async () => {
    const smart = deriveSmartAccountAddress(B.address);
    for (const target of [B.address, B.address.toLowerCase(), smart, smart.toLowerCase()]) {
      const d = ok(await A.get(`/api/transfer/detail?target=${target}`), target);
      assert.deepEqual(d, { smartAccountAddress: smart, email: null });
    }
    assertError(await A.get(`/api/transfer/detail?target=0x${'00'.repeat(20)}`), 404);
    assertError(await A.get('/api/transfer/detail?target=bob'), 400);
    assertError(await A.get('/api/transfer/detail'), 400);
  });
});
