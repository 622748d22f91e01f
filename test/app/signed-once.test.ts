// End to end: signed instructions take effect at most once. The Withdraw, replace and TpSl messages carry no
// nonce and wallet signatures are deterministic, so the exchange spends each verified digest: an identical
// repeat gets 409 SIGNATURE_ALREADY_USED, also after a restart from the journal alone and from a snapshot.
// Order and close signatures hold the client order id, refused once used. Real exchange over HTTP, real
// ethers wallets; the tests share one data directory and run in order.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/app/config.js';
import { startExchange, type RunningExchange } from '../../src/app/exchange.js';
import { decodeSnapshotFile } from '../../src/journal/file-snapshots.js';
import { Bot, DOMAIN, assertError, assertMoney, eventually, ok, units } from './client.js';

const RECIPIENT = '0x' + '5a'.repeat(20);
const ENV = {
  PORT: '0', SIGNATURE_THREADS: '0', LOG_LEVEL: 'silent', SEED_DEMO: 'true', MARKET_MAKERS: '0', DEMO_WALLET: 'false',
  INDEX_FEED: 'off', FUNDING_INTERVAL_MS: '0', CHAIN_DELAY_MS: '30', CHAIN_FAILURE_RATE: '0',
};

async function withdrawBody(bot: Bot, amount: string) {
  const signature = await bot.wallet.signTypedData(
    DOMAIN(), { Withdraw: [{ name: 'recipient', type: 'address' }, { name: 'amount', type: 'uint256' }] }, { recipient: RECIPIENT, amount: units(amount) },
  );
  return { recipient: RECIPIENT, amount, signature };
}

function assertUsed(res: { status: number; body: unknown }, what: string): void {
  const e = assertError(res, 409, 'SIGNATURE_ALREADY_USED');
  assert.match(e.message, /already used; change one signed field by one unit/, what);
}

const funding = async (bot: Bot) => units(String((await bot.balance()).funding.balance));

describe('e2e: signed instructions take effect at most once', () => {
  const dir = mkdtempSync(join(tmpdir(), 'perpx-signed-once-'));
  let ex: RunningExchange;
  let A: Bot;
  let B: Bot;
  /** Bodies replayed after each restart. */
  let withdraw100: Record<string, unknown>;
  let orderId = '';
  let replace1: Record<string, unknown>;
  let tpslCreate: Record<string, unknown>;
  let slId = '';
  let limitBody: Record<string, unknown>;
  let closeBody: Record<string, unknown>;

  async function start(): Promise<void> {
    ex = await startExchange(loadConfig({ ...ENV, DATA_DIR: dir }));
    // Same wallets, same accounts (auth.db is in the data directory); the new server has a new port.
    A = await new Bot(ex.url, A?.wallet).signIn();
    B = await new Bot(ex.url, B?.wallet).signIn();
  }

  /** Every instruction used so far is still refused, and nothing moved. */
  async function repeatsRefused(what: string): Promise<void> {
    const before = await funding(A);
    assertUsed(await A.post('/api/transfer/pf/withdraw', withdraw100), `withdraw ${what}`);
    assertUsed(await A.put(`/api/order/${orderId}/limit`, replace1), `replace ${what}`);
    assert.equal((await A.order(orderId)).limitPrice, 95200, `the order keeps the newer price ${what}`);
    assertUsed(await A.post('/api/tpsl/BTCUSDT', tpslCreate), `tpsl create ${what}`);
    assertUsed(await A.put(`/api/tpsl/BTCUSDT/${slId}`, tpslCreate), `tpsl create as modify ${what}`);
    assertError(await A.post('/api/v2/order/limit', limitBody), 409, 'DUPLICATE_ORDER_ID');
    assertError(await A.post('/api/v2/position/BTCUSDT/close', closeBody), 409, 'DUPLICATE_ORDER_ID');
    assert.equal(await funding(A), before, `nothing moved ${what}`);
    assert.deepEqual(ok(await A.get('/api/transfer')).list, [], `no new withdrawal ${what}`);
  }

  before(async () => {
    await start();
    await A.faucet();
    await B.faucet();
  });
  after(async () => {
    try {
      await ex?.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('withdraw: the same signed body withdraws once; the amount changed by 0.00000001 withdraws again', async () => {
    withdraw100 = await withdrawBody(A, '100');
    const t = ok(await A.post('/api/transfer/pf/withdraw', withdraw100), 'withdraw');
    assert.equal(t.status, 'pending');
    assertUsed(await A.post('/api/transfer/pf/withdraw', withdraw100), 'repeat while pending');
    await eventually(() => A.get('/api/transfer'), (r) => r.body.count === 0, 'withdrawal settled');
    assertUsed(await A.post('/api/transfer/pf/withdraw', withdraw100), 'repeat after it settled');
    assert.equal(await funding(A), units('9900'), 'withdrawn once');
    // the public client's flow: a distinct amount is a distinct instruction
    ok(await A.post('/api/transfer/pf/withdraw', await withdrawBody(A, '100.00000001')), 'changed by one unit');
    await eventually(() => A.get('/api/transfer'), (r) => r.body.count === 0, 'second withdrawal settled');
    assert.equal(await funding(A), units('9799.99999999'));
    // another wallet's identical message is its own instruction
    ok(await B.post('/api/transfer/pf/withdraw', await withdrawBody(B, '100')), 'same amount, other wallet');
  });

  test('replace: an old signed replace replayed after a newer one is refused; the order keeps the newer price', async () => {
    const o = ok(await A.limit({ side: 'BUY', quantity: '0.01', limitPrice: 95000 }), 'resting order');
    orderId = o.id;
    replace1 = await A.replaceBody(orderId, '0.01', 95100);
    ok(await A.put(`/api/order/${orderId}/limit`, replace1), 'replace 1');
    ok(await A.put(`/api/order/${orderId}/limit`, await A.replaceBody(orderId, '0.01', 95200)), 'replace 2');
    assertUsed(await A.put(`/api/order/${orderId}/limit`, replace1), 'old replace');
    assert.equal((await A.order(orderId)).limitPrice, 95200);
    // the batch route refuses it per item
    const batch = ok(await A.put('/api/order/limit/BTCUSDT', [{ ...replace1, orderId }]), 'batch');
    assert.equal(batch[0].success, false);
    assert.match(batch[0].failReason, /already used/);
    assert.equal((await A.order(orderId)).limitPrice, 95200);
  });

  test("TpSl: a create's signature is refused on the modify route of another TpSl, and as a second create", async () => {
    ok(await B.limit({ side: 'SELL', quantity: '0.01', limitPrice: 100000 }), 'maker');
    const taker = ok(await A.limit({ side: 'BUY', quantity: '0.01', limitPrice: 100000 }), 'taker');
    assert.equal(taker.status, 'FILLED');
    tpslCreate = { instrument: 'BTCUSDT', ...(await A.tpslBody('BTCUSDT', { type: 'take-profit', side: 'SELL', quantity: 0, price: 110000 })) };
    ok(await A.post('/api/tpsl/BTCUSDT', tpslCreate), 'take-profit');
    const sl = ok(await A.post('/api/tpsl/BTCUSDT', await A.tpslBody('BTCUSDT', { type: 'stop-loss', side: 'SELL', quantity: 0, price: 90000 })), 'stop-loss');
    slId = sl.id;
    assertUsed(await A.put(`/api/tpsl/BTCUSDT/${slId}`, tpslCreate), 'create signature on modify');
    // (history reads wait for the read model to catch up with every acknowledged command)
    const stopLoss = ok(await A.get('/api/tpsl?status=active')).list.find((t: { id: string }) => t.id === slId);
    assert.deepEqual([stopLoss.type, units(String(stopLoss.price))], ['stop-loss', units('90000')], 'the stop-loss is unchanged');
    assertUsed(await A.post('/api/tpsl/BTCUSDT', tpslCreate), 'second create');
    // a modify with its own signature works
    ok(await A.put(`/api/tpsl/BTCUSDT/${slId}`, await A.tpslBody('BTCUSDT', { type: 'stop-loss', side: 'SELL', quantity: 0, price: 89000 })), 'modify');
  });

  test('orders and position closes: a used client order id is refused (also once the order left the book)', async () => {
    limitBody = await A.limitBody({ side: 'BUY', quantity: '0.01', limitPrice: 94000 });
    const o = ok(await A.post('/api/v2/order/limit', limitBody), 'limit');
    assertError(await A.post('/api/v2/order/limit', limitBody), 409, 'DUPLICATE_ORDER_ID');
    ok(await A.del(`/api/order/${o.id}`), 'cancel');
    assertError(await A.post('/api/v2/order/limit', limitBody), 409, 'DUPLICATE_ORDER_ID');
    ok(await B.limit({ side: 'BUY', quantity: '0.005', limitPrice: 100000 }), 'bid to close into');
    closeBody = await A.closeBody('BTCUSDT', '0.005', 10);
    ok(await A.post('/api/v2/position/BTCUSDT/close', closeBody), 'close');
    assertError(await A.post('/api/v2/position/BTCUSDT/close', closeBody), 409, 'DUPLICATE_ORDER_ID');
  });

  test('after a restart replaying the journal alone (no snapshot), every repeat is still refused', async () => {
    await ex.close();
    rmSync(join(dir, 'snapshots'), { recursive: true, force: true });
    await start();
    await repeatsRefused('after a journal replay');
    // Refusals are not journaled: one accepted command gives the stop something new to snapshot.
    ok(await B.limit({ side: 'BUY', quantity: '0.001', limitPrice: 90000 }), 'an order after the replay');
  });

  test('after a restart from the snapshot taken at stop, every repeat is still refused; new instructions work', async () => {
    await ex.close();
    const files = readdirSync(join(dir, 'snapshots')).filter((f) => f.endsWith('.json'));
    assert.equal(files.length, 1, 'the stop wrote a snapshot');
    const { snapshot: snap } = decodeSnapshotFile(readFileSync(join(dir, 'snapshots', files[0])), Number(files[0].match(/\d+/)![0]));
    assert.equal(snap.version, 2);
    assert.ok((snap.state as { spent: Array<[number, string]> }).spent.some((e: [number, string]) => e[0] === A.exchangeId && e[1] === 'replace'), 'the snapshot holds the spent digests');
    await start();
    await repeatsRefused('after a snapshot restore');
    // the public client's flow goes on: new amounts, new prices
    ok(await A.post('/api/transfer/pf/withdraw', await withdrawBody(A, '1.5')), 'new withdrawal');
    ok(await A.put(`/api/order/${orderId}/limit`, await A.replaceBody(orderId, '0.01', 95300)), 'new replace');
    assert.equal((await A.order(orderId)).limitPrice, 95300);
    assertMoney((await A.order(orderId)).quantity, '0.01', 'quantity');
  });

  test('OpenAPI: the signed routes document 409 SIGNATURE_ALREADY_USED', async () => {
    const doc = ok(await A.get('/openapi.json'));
    const routes: Array<[string, string]> = [
      ['/api/transfer/pf/withdraw', 'post'], ['/api/order/{orderId}/limit', 'put'], ['/api/order/{orderId}/stop-limit', 'put'],
      ['/api/tpsl/{instrument}', 'post'], ['/api/tpsl/{instrument}/{id}', 'put'],
    ];
    for (const [path, method] of routes) {
      assert.match(doc.paths[path][method].responses['409'].description, /SIGNATURE_ALREADY_USED/, `${method} ${path}`);
    }
    assert.match(doc.paths['/api/order/limit/{instrument}'].put.description, /SIGNATURE_ALREADY_USED/);
  });
});
