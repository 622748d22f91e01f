// End to end: the real exchange (startExchange, port 0, temp DATA_DIR) driven over HTTP only, like a
// trading bot: SIWE sign-in, faucet, EIP-712 signed orders from real ethers wallets, and every read a bot
// makes afterwards. The tests of the first describe share one exchange and run in order.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { clientSignIn, randomWallet } from '../auth/helpers.js';
import { client as wsClient, connected, subscribed } from '../realtime/helpers.js';
import {
  ALL_TIME, Bot, CHAIN_ID, assertError, assertMoney, eventually, http, newOrderId, ok, sign, sleep, startTestExchange, units,
  type TestExchange,
} from './client.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const MAKER = 0.0002;
const TAKER = 0.0005;

/** Money arithmetic in 1e-8 integers, back to a decimal string (avoids float drift in expectations). */
function money(...terms: Array<string | number>): string {
  const n = terms.reduce<bigint>((s, t) => s + units(typeof t === 'number' ? t.toFixed(10) : t), 0n);
  const neg = n < 0n;
  const a = neg ? -n : n;
  return `${neg ? '-' : ''}${a / 100_000_000n}.${(a % 100_000_000n).toString().padStart(8, '0')}`;
}

/** A create response that must be a resting order. */
function resting(res: { status: number; body: any }): { id: string; status: string } {
  const o = ok(res, 'create');
  assert.equal(o.status, 'NEW', `order not resting: ${JSON.stringify(o)}`);
  return o;
}

describe('e2e: two bots trade BTCUSDT over HTTP', () => {
  let X: TestExchange;
  let A: Bot;
  let B: Bot;
  /** Balances as the test expects them to evolve (decimal strings). */
  let balA = '0';
  let balB = '0';
  let sellId = '';
  let buyId = '';

  before(async () => {
    X = await startTestExchange();
    A = await new Bot(X.url).signIn();
    B = await new Bot(X.url).signIn();
  });
  after(async () => {
    await X?.stop();
  });

  test('sign-in: distinct integer exchange ids; the faucet credits the account once', async () => {
    assert.notEqual(A.exchangeId, B.exchangeId);
    assert.notEqual(A.userId, B.userId);
    // Signing in again with the same wallet gives the same account.
    const again = await new Bot(X.url, A.wallet).signIn();
    assert.equal(again.exchangeId, A.exchangeId);

    for (const bot of [A, B]) {
      assertMoney((await bot.balance()).funding.balance, 0, 'balance before faucet');
      await bot.faucet();
      const b = await bot.balance();
      assertMoney(b.funding.balance, 10000, 'balance after faucet');
      assertMoney(b.availableBalance, 10000, 'available after faucet');
      assertError(await bot.post('/api/user/faucet'), 429);
    }
    balA = '10000';
    balB = '10000';
  });

  test('a resting limit SELL is filled by a crossing limit BUY: orders, positions and exact fees', async () => {
    const sell = ok(await A.limit({ side: 'SELL', quantity: '0.01', limitPrice: 100000 }), 'sell');
    sellId = sell.id;
    assert.match(sellId, /^[0-9]{5}:[0-9a-fA-F]{26}$/);
    assert.equal(sell.status, 'NEW');
    assert.equal(sell.type, 'LIMIT');
    assert.equal(sell.side, 'SELL');
    assert.equal(sell.user, String(A.exchangeId));
    assert.equal(sell.quantity, 0.01);
    assert.equal(sell.unFilledQuantity, 0.01);
    assert.equal(sell.limitPrice, 100000);
    assert.equal(sell.group, 'manually');
    assert.deepEqual(sell.fee, [{ coin: 'usdt', quantity: 0 }]);
    assert.match(sell.createdAt, ISO);

    // While it rests: visible in the book and in A's open orders; margin is locked but no fee is paid.
    const depth = ok(await http(X.url, 'GET', '/api/market/BTCUSDT/deep?maxLevel=10&roundPrice=0.1'));
    assert.deepEqual(depth.asks, [{ price: 100000, quantity: 0.01 }]);
    assert.deepEqual(depth.bids, []);
    const opened = await A.openOrders();
    assert.deepEqual(opened.map((o) => [o.id, o.status, o.unFilledQuantity]), [[sellId, 'NEW', 0.01]]);
    const restingBal = await A.balance();
    assertMoney(restingBal.funding.balance, balA, 'balance while resting');
    assertMoney(restingBal.availableBalance, money(balA, -100), 'available while resting (1000 / 10 locked)');

    const buy = ok(await B.limit({ side: 'BUY', quantity: '0.01', limitPrice: 100000 }), 'buy');
    buyId = buy.id;
    assert.equal(buy.status, 'FILLED');
    assert.equal(buy.unFilledQuantity, 0);
    assert.equal(buy.filledAvgPrice, 100000);
    assert.equal(buy.user, String(B.exchangeId));

    const notional = 0.01 * 100000;
    balA = money(balA, -(notional * MAKER)); // 9999.8
    balB = money(balB, -(notional * TAKER)); // 9999.5

    const [pa] = await A.positions();
    assert.equal((await A.positions()).length, 1);
    assert.equal(pa.instrument, 'BTCUSDT');
    assert.equal(pa.side, 'SELL');
    assert.equal(pa.quantity, 0.01);
    assert.equal(pa.avgPrice, 100000);
    assert.equal(pa.leverage, 10);
    assert.equal(pa.user, String(A.exchangeId));
    assert.deepEqual(pa.tpslList, []);
    const pbs = await B.positions();
    assert.equal(pbs.length, 1);
    assert.equal(pbs[0].side, 'BUY');
    assert.equal(pbs[0].quantity, 0.01);
    assert.equal(pbs[0].avgPrice, 100000);

    const ba = await A.balance();
    const bb = await B.balance();
    assertMoney(ba.funding.balance, balA, 'A balance after maker fee');
    assertMoney(bb.funding.balance, balB, 'B balance after taker fee');
    assertMoney(ba.availableBalance, money(balA, -100), 'A available (IM 100 locked)');
    assertMoney(bb.availableBalance, money(balB, -100), 'B available (IM 100 locked)');
    assert.deepEqual(ba.position, [{ instrument: 'BTCUSDT', side: 'SELL', volume: '1000', initialMargin: '100' }]);
    assert.deepEqual(ba.openOrder, []);
  });

  test('order reads: by id, opened, paged list, fills, per-order fills, depth, recent trades', async () => {
    const a = await A.order(sellId);
    assert.equal(a.id, sellId);
    assert.equal(a.status, 'FILLED');
    assert.equal(a.filledAvgPrice, 100000);
    assert.equal(a.unFilledQuantity, 0);
    assert.deepEqual(a.fee, [{ coin: 'usdt', quantity: 0.2 }]);
    const b = await B.order(buyId);
    assert.equal(b.status, 'FILLED');
    assert.deepEqual(b.fee, [{ coin: 'usdt', quantity: 0.5 }]);
    // The lower-case / upper-case hex spelling reaches the same order.
    assert.equal((await A.order(sellId.toUpperCase())).id, sellId);

    assert.deepEqual(await A.openOrders(), []);
    assert.deepEqual(await B.openOrders(), []);

    const page = await eventually(() => A.get('/api/order').then((r) => ok(r)), (p) => p.count >= 1, 'A order list');
    assert.ok(Array.isArray(page.list));
    assert.equal(page.count, 1);
    assert.equal(page.list[0].id, sellId);
    assert.equal(page.list[0].status, 'FILLED');
    assert.deepEqual(page.list[0].tpslList, []);
    const filtered = ok(await A.get('/api/order?status=NEW'));
    assert.deepEqual(filtered, { list: [], count: 0 });

    const fa = await eventually(() => A.get(`/api/fill?${ALL_TIME}`).then((r) => ok(r)), (p) => p.count >= 1, 'A fills');
    assert.equal(fa.count, 1);
    assert.equal(fa.list[0].order, sellId);
    assert.equal(fa.list[0].instrument, 'BTCUSDT');
    assert.equal(fa.list[0].fillQuantity, 0.01);
    assert.equal(fa.list[0].fillPrice, 100000);
    assert.equal(fa.list[0].fillRole, 'MAKER');
    const fb = await eventually(() => B.get(`/api/fill?${ALL_TIME}`).then((r) => ok(r)), (p) => p.count >= 1, 'B fills');
    assert.equal(fb.list[0].order, buyId);
    assert.equal(fb.list[0].fillRole, 'TAKER');
    assert.equal(fb.list[0].id, fa.list[0].id, 'both sides of one execution share its id');
    // fillRole filters in the read model (count included).
    assert.deepEqual(ok(await A.get(`/api/fill?${ALL_TIME}&fillRole=TAKER`)), { list: [], count: 0 });
    const makerOnly = ok(await A.get(`/api/fill?${ALL_TIME}&fillRole=MAKER&fillRole=NONE`));
    assert.equal(makerOnly.count, 1);
    assert.equal(makerOnly.list[0].id, fa.list[0].id);
    assertError(await A.get('/api/fill'), 400);

    const of = ok(await A.get(`/api/order/${sellId}/fill`));
    assert.equal(of.count, 1);
    assert.equal(of.list[0].orderId, sellId);
    assert.equal(of.list[0].makerTakerFlag, 'MAKER');
    assert.equal(of.list[0].side, 'SELL');
    assert.equal(of.list[0].fillQuantity, 0.01);
    assert.equal(of.list[0].fillPrice, 100000);
    const ofb = ok(await B.get(`/api/order/${buyId}/fill?version=2`));
    assert.equal(ofb.list[0].makerTakerFlag, 'TAKER');

    const depth = ok(await http(X.url, 'GET', '/api/market/BTCUSDT/deep?maxLevel=10'));
    assert.deepEqual([depth.asks, depth.bids], [[], []]);
    assert.equal(typeof depth.t, 'number');
    const trades = await eventually(() => http(X.url, 'GET', '/api/market/BTCUSDT/recent-trades?limit=10').then((r) => ok(r)), (l) => l.length >= 1, 'recent trades');
    assert.equal(trades.length, 1);
    assert.equal(trades[0].instrument, 'BTCUSDT');
    assert.equal(trades[0].side, 'BUY');
    assert.equal(trades[0].fillQuantity, 0.01);
    assert.equal(trades[0].fillPrice, 100000);
    assert.equal(trades[0].executionId, fa.list[0].id);

    assertError(await A.get(`/api/order/${newOrderId()}`), 404);
    assertError(await A.get('/api/order/not-an-id'), 400);
    assertError(await http(X.url, 'GET', '/api/market/NOPE/deep'), 404);
  });

  test('replace, cancel, mass cancel of resting orders', async () => {
    const o = ok(await A.limit({ side: 'SELL', quantity: '0.02', limitPrice: 101000 }));
    assert.equal(o.status, 'NEW');
    const depth1 = ok(await http(X.url, 'GET', '/api/market/BTCUSDT/deep?maxLevel=10'));
    assert.deepEqual(depth1.asks, [{ price: 101000, quantity: 0.02 }]);
    // Lock on the short: IM 100 + same-side open volume 2020 / 10.
    const b1 = await A.balance();
    assertMoney(b1.availableBalance, money(balA, -100, -202), 'available with a same-side order');
    assert.deepEqual(b1.openOrder, [{ instrument: 'BTCUSDT', side: 'SELL', unFilledVolume: '2020', unFilledInitialMargin: '202' }]);

    ok(await A.put(`/api/order/${o.id}/limit`, await A.replaceBody(o.id, '0.03', '102000.5')), 'replace');
    const r = await A.order(o.id);
    assert.equal(r.quantity, 0.03);
    assert.equal(r.limitPrice, 102000.5);
    assert.equal(r.unFilledQuantity, 0.03);
    assert.equal(r.status, 'NEW');
    assertMoney((await A.balance()).availableBalance, money(balA, -100, -306.0015), 'available after replace (3060.015 / 10)');
    const depth2 = ok(await http(X.url, 'GET', '/api/market/BTCUSDT/deep?maxLevel=10&roundPrice=1'));
    assert.deepEqual(depth2.asks, [{ price: 102001, quantity: 0.03 }], 'asks are grouped upwards');
    // A replace signed over other values is refused and changes nothing.
    const forged = { ...(await A.replaceBody(o.id, '0.03', '102000.5')), quantity: '0.04' };
    assertError(await A.put(`/api/order/${o.id}/limit`, forged), 400, 'INVALID_SIGNATURE');
    assert.equal((await A.order(o.id)).quantity, 0.03);

    ok(await A.del(`/api/order/${o.id}`), 'cancel');
    assert.equal((await A.order(o.id)).status, 'CANCELLED');
    assertMoney((await A.balance()).availableBalance, money(balA, -100), 'available after cancel');
    assert.deepEqual(await A.openOrders(), []);
    // Cancelling a finished order is not an error and changes nothing (spec: no error is defined).
    ok(await A.del(`/api/order/${o.id}`), 'second cancel');
    assert.equal((await A.order(o.id)).status, 'CANCELLED');
    assertError(await A.del(`/api/order/${newOrderId()}`), 404);
    assertError(await A.del('/api/order/not-an-id'), 400);
    // Cancelling a filled order does not make it CANCELLED.
    ok(await A.del(`/api/order/${sellId}`), 'cancel after fill');
    assert.equal((await A.order(sellId)).status, 'FILLED');
    // Replacing a finished order: 409 saying it is no longer open (GET still shows it), not "not found".
    assertError(await A.put(`/api/order/${o.id}/limit`, await A.replaceBody(o.id, '0.01', 101000)), 409, 'ORDER_NOT_OPEN');
    assertError(await A.put(`/api/order/${sellId}/limit`, await A.replaceBody(sellId, '0.01', 101000)), 409, 'ORDER_NOT_OPEN');
    assertError(await A.put(`/api/order/${newOrderId()}/limit`, await A.replaceBody(o.id, '0.01', 101000)), 404, 'ORDER_NOT_FOUND');
    assert.equal((await A.order(sellId)).status, 'FILLED');

    const x1 = resting(await A.limit({ side: 'SELL', quantity: '0.01', limitPrice: 103000 }));
    const x2 = resting(await A.limit({ side: 'BUY', quantity: '0.01', limitPrice: 95000 }));
    const x3 = resting(await A.limit({ instrument: 'ETHUSDT', side: 'BUY', quantity: '0.1', limitPrice: 3400 }));
    assert.equal((await A.openOrders()).length, 3);
    // BTC lock = max(IM 100 + same-side 1030 / 10, |100 − opposite-side 950 / 10|) = 203; ETH: 340 / 10.
    assertMoney((await A.balance()).availableBalance, money(balA, -203, -34), 'available with orders on both sides and ETH');
    ok(await A.post('/api/order/mass-cancel', { instrument: 'BTCUSDT' }), 'mass-cancel');
    const left = await A.openOrders();
    assert.deepEqual(left.map((x) => x.id), [x3.id]);
    assert.equal((await A.order(x1.id)).status, 'CANCELLED');
    assert.equal((await A.order(x2.id)).status, 'CANCELLED');
    ok(await A.post('/api/order/mass-cancel', { instrument: 'ETHUSDT', dbSync: true }), 'mass-cancel ETH');
    assert.deepEqual(await A.openOrders(), []);
    assertError(await A.post('/api/order/mass-cancel', { instrument: 'NOPE' }), [400, 404]);
  });

  test('mass-limit batch: per-item results, then mass-cancel-by-id', async () => {
    const good1 = await A.limitBody({ side: 'SELL', quantity: '0.01', limitPrice: 104000 });
    const good2 = await A.limitBody({ side: 'SELL', quantity: '0.02', limitPrice: 105000 });
    const foreign = await B.limitBody({ side: 'SELL', quantity: '0.01', limitPrice: 106000 }); // signed by B's wallet
    const oldId = newOrderId(Date.now() - 3 * 86_400_000);
    const stale = await A.limitBody({ side: 'SELL', quantity: '0.01', limitPrice: 107000, id: oldId });
    const res = ok(await A.post('/api/v2/order/mass-limit/BTCUSDT', [good1, good2, foreign, stale]), 'mass-limit') as Array<{ orderId: string; success: boolean; failReason?: string }>;
    assert.equal(res.length, 4);
    assert.deepEqual(res[0], { orderId: good1.id, success: true });
    assert.deepEqual(res[1], { orderId: good2.id, success: true });
    assert.equal(res[2].orderId, foreign.id);
    assert.equal(res[2].success, false);
    assert.match(res[2].failReason ?? '', /signature/i);
    assert.equal(res[3].success, false);
    assert.match(res[3].failReason ?? '', /Invalid order ID date/);

    const open = await A.openOrders();
    assert.deepEqual(open.map((o) => o.id).sort(), [good1.id, good2.id].sort());
    const depth = ok(await http(X.url, 'GET', '/api/market/BTCUSDT/deep?maxLevel=10'));
    assert.deepEqual(depth.asks, [{ price: 104000, quantity: 0.01 }, { price: 105000, quantity: 0.02 }]);

    // Instrument mismatch between path and item is a per-item failure; unknown path instrument is 404.
    const eth = await A.limitBody({ instrument: 'ETHUSDT', side: 'SELL', quantity: '0.1', limitPrice: 4000 });
    const mism = ok(await A.post('/api/v2/order/mass-limit/BTCUSDT', [eth]));
    assert.equal(mism[0].success, false);
    assertError(await A.post('/api/v2/order/mass-limit/NOPE', [eth]), 404);
    assertError(await A.post('/api/v2/order/mass-limit/BTCUSDT', []), 400);

    const unknown = newOrderId();
    const cancelled = ok(await A.post('/api/order/mass-cancel-by-id', { orderIds: [good1.id, good2.id, unknown] }), 'mass-cancel-by-id');
    assert.deepEqual(cancelled.slice(0, 2), [{ orderId: good1.id, success: true }, { orderId: good2.id, success: true }]);
    assert.equal(cancelled[2].orderId, unknown);
    assert.equal(cancelled[2].success, false);
    assert.equal(typeof cancelled[2].failReason, 'string');
    assert.deepEqual(await A.openOrders(), []);
    assertError(await A.post('/api/order/mass-cancel-by-id', { orderIds: [] }), 400);
  });

  test('stop-limit create and replace', async () => {
    const s = ok(await A.stopLimit({ side: 'BUY', quantity: '0.01', limitPrice: 110000, stopPrice: 109000 }), 'stop-limit');
    assert.equal(s.type, 'STOP_LIMIT');
    assert.equal(s.stopPrice, 109000);
    ok(await A.put(`/api/order/${s.id}/stop-limit`, await A.replaceStopBody(s.id, '0.02', 111000, 110000)), 'replace stop-limit');
    const r = await A.order(s.id);
    assert.equal(r.quantity, 0.02);
    assert.equal(r.limitPrice, 111000);
    assert.equal(r.stopPrice, 110000);
    ok(await A.del(`/api/order/${s.id}`));
    assert.equal((await A.order(s.id)).status, 'CANCELLED');
    // The balance is untouched by orders that never traded.
    assertMoney((await A.balance()).funding.balance, balA, 'A balance');
  });

  test('leverage change', async () => {
    const lc = ok(await B.put('/api/position/BTCUSDT', { leverage: 20 }), 'leverage');
    assert.deepEqual(
      { ...lc, maintenanceMargin: undefined },
      { instrument: 'BTCUSDT', side: 'BUY', quantity: 0.01, avgPrice: 100000, leverage: 20, maintenanceMargin: undefined },
    );
    assert.equal(typeof lc.maintenanceMargin, 'number');
    const [p] = await B.positions();
    assert.equal(p.leverage, 20);
    assertMoney((await B.balance()).availableBalance, money(balB, -50), 'B available at 20x (IM 1000 / 20)');
    assertError(await B.put('/api/position/BTCUSDT', { leverage: 0 }), 400);
    assertError(await B.put('/api/position/BTCUSDT', { leverage: 301 }), 400);
    assertError(await B.put('/api/position/NOPE', { leverage: 5 }), 404);
    ok(await B.put('/api/position/BTCUSDT', { leverage: 10 }), 'leverage back to 10');
    // Without a position the leverage still applies to the instrument.
    const flat = ok(await B.put('/api/position/ETHUSDT', { leverage: 7 }));
    assert.equal(flat.instrument, 'ETHUSDT');
    assert.equal(flat.leverage, 7);
  });

  let tpId = '';
  test('TpSl: create, list, modify, delete', async () => {
    // As the public signing client sends it: the whole signed struct, instrument included.
    const createBody = { instrument: 'BTCUSDT', ...(await B.tpslBody('BTCUSDT', { type: 'take-profit', side: 'SELL', quantity: 0, price: 110000 })) };
    assertError(await B.post('/api/tpsl/BTCUSDT', { ...createBody, instrument: 'ETHUSDT' }), 400, 'INVALID_INSTRUMENT');
    const created = ok(await B.post('/api/tpsl/BTCUSDT', createBody), 'tpsl create');
    tpId = created.id;
    assert.equal(created.instrument, 'BTCUSDT');
    assert.equal(created.type, 'take-profit');
    assert.equal(created.side, 'SELL');
    assert.equal(created.quantity, '0');
    assert.equal(created.price, '110000');
    assert.equal(created.status, 'active');
    assert.equal(created.triggerOrder, null);

    const list = await eventually(() => B.get('/api/tpsl').then((r) => ok(r)), (p) => p.count >= 1, 'tpsl list');
    assert.deepEqual(list.list.map((t: { id: string }) => t.id), [tpId]);
    const active = ok(await B.get('/api/tpsl?status=active&instrument=BTCUSDT'));
    assert.equal(active.count, 1);
    const [p] = ok(await B.get('/api/position?withTpSL=yes')).list;
    assert.deepEqual(p.tpslList.map((t: { id: string }) => t.id), [tpId]);

    const modified = ok(await B.put(`/api/tpsl/BTCUSDT/${tpId}`, await B.tpslBody('BTCUSDT', { type: 'take-profit', side: 'SELL', quantity: '0.005', price: '120000' })), 'tpsl modify');
    assert.equal(modified.id, tpId);
    assert.equal(modified.price, '120000');
    assert.equal(modified.quantity, '0.005');
    assert.equal(modified.status, 'active');

    // Refusals: wrong side for a long, already-crossed stop-loss, bad signature, unknown id.
    assertError(await B.post('/api/tpsl/BTCUSDT', await B.tpslBody('BTCUSDT', { type: 'take-profit', side: 'BUY', quantity: 0, price: 110000 })), 400);
    assertError(await B.post('/api/tpsl/BTCUSDT', await B.tpslBody('BTCUSDT', { type: 'stop-loss', side: 'SELL', quantity: 0, price: 100500 })), 400);
    const forged = { ...(await B.tpslBody('BTCUSDT', { type: 'stop-loss', side: 'SELL', quantity: 0, price: 90000 })), price: 80000 };
    assertError(await B.post('/api/tpsl/BTCUSDT', forged), 400, 'INVALID_SIGNATURE');
    assertError(await B.del('/api/tpsl/BTCUSDT/no-such-tpsl'), 404);
    assertError(await B.post('/api/tpsl/ETHUSDT', await B.tpslBody('ETHUSDT', { type: 'stop-loss', side: 'SELL', quantity: 0, price: 3000 })), 409);

    const deleted = ok(await B.del(`/api/tpsl/BTCUSDT/${tpId}`), 'tpsl delete');
    assert.equal(deleted.id, tpId);
    assert.equal(deleted.status, 'cancelled');
    assertError(await B.del(`/api/tpsl/BTCUSDT/${tpId}`), 404);
    assertError(await B.put(`/api/tpsl/BTCUSDT/${tpId}`, await B.tpslBody('BTCUSDT', { type: 'take-profit', side: 'SELL', quantity: 0, price: 130000 })), 404);
    await eventually(() => B.get('/api/tpsl?status=cancelled').then((r) => ok(r)), (pg) => pg.count === 1, 'cancelled tpsl in history');

    // A stop-loss left on the position: closing the position must end it.
    const sl = ok(await B.post('/api/tpsl/BTCUSDT', await B.tpslBody('BTCUSDT', { type: 'stop-loss', side: 'SELL', quantity: 0, price: 90000 })), 'stop-loss');
    tpId = sl.id;
  });

  test('close a position: the position is gone and the realized PnL is in the balance', async () => {
    // B offers 0.01 at 101000 (it reduces B's long when it fills); A closes its short against it.
    const ask = ok(await B.limit({ side: 'SELL', quantity: '0.01', limitPrice: 101000 }));
    assert.equal(ask.status, 'NEW');
    // As the public signing client sends it: the whole signed struct, instrument included.
    const closeBody = { instrument: 'BTCUSDT', ...(await A.closeBody('BTCUSDT', 0, 10)) };
    assertError(await A.post('/api/v2/position/BTCUSDT/close', { ...closeBody, instrument: 'ETHUSDT' }), 400, 'INVALID_INSTRUMENT');
    const close = ok(await A.post('/api/v2/position/BTCUSDT/close', closeBody), 'close');
    assert.equal(close.status, 'FILLED');
    assert.equal(close.side, 'BUY');
    assert.equal(close.filledAvgPrice, 101000);
    assert.equal(close.quantity, 0.01);

    const notional = 0.01 * 101000;
    balA = money(balA, -10, -(notional * TAKER)); // realized (100000 − 101000) × 0.01, taker fee 0.505
    balB = money(balB, 10, -(notional * MAKER)); // realized +10, maker fee 0.202
    assertMoney(close.realizedPnL, -10, 'close order realizedPnL');

    assert.deepEqual(await A.positions(), []);
    assert.deepEqual(await B.positions(), []);
    const ba = await A.balance();
    const bb = await B.balance();
    assertMoney(ba.funding.balance, balA, 'A balance after close');
    assertMoney(bb.funding.balance, balB, 'B balance after close');
    assertMoney(ba.availableBalance, balA, 'A available after close');
    assertMoney(bb.availableBalance, balB, 'B available after close');
    assert.equal((await B.order(ask.id)).status, 'FILLED');

    // B's stop-loss ended with the position.
    const tp = await eventually(() => B.get('/api/tpsl').then((r) => ok(r)), (pg) => pg.list.some((t: { id: string; status: string }) => t.id === tpId && t.status !== 'active'), 'stop-loss ended');
    assert.ok(tp);
    // Nothing left to close.
    assertError(await A.post('/api/v2/position/BTCUSDT/close', await A.closeBody('BTCUSDT', 0, 10)));
  });

  test('market order with cashQuantity', async () => {
    ok(await A.limit({ side: 'SELL', quantity: '0.02', limitPrice: 100000 }));
    const m = ok(await B.market({ side: 'BUY', cashQuantity: 1000 }), 'market');
    assert.equal(m.type, 'MARKET');
    assert.equal(m.status, 'FILLED');
    assert.equal(m.filledAvgPrice, 100000);
    assert.equal(m.cashQuantity, 1000);
    const [p] = await B.positions();
    assert.equal(p.side, 'BUY');
    assert.equal(p.quantity, 0.01);
    assert.equal(p.avgPrice, 100000);
    balB = money(balB, -(1000 * TAKER));
    balA = money(balA, -(1000 * MAKER));
    assertMoney((await B.balance()).funding.balance, balB, 'B balance after market buy');
    assertMoney((await A.balance()).funding.balance, balA, 'A balance after market sell fill');
    const [rest] = await A.openOrders();
    assert.equal(rest.unFilledQuantity, 0.01);
    assert.equal(rest.status, 'PARTIALLY_FILLED');
    ok(await A.post('/api/order/mass-cancel', { instrument: 'BTCUSDT' }));
    assertError(await B.market({ side: 'BUY', cashQuantity: 0 }), 400);
  });

  test('replayed signed body, wrong chainId, wrong signer and a bad id are refused with 4xx', async () => {
    const body = await A.limitBody({ side: 'SELL', quantity: '0.01', limitPrice: 108000 });
    assert.equal(ok(await A.post('/api/v2/order/limit', body), 'first').status, 'NEW');
    const replay = await A.post('/api/v2/order/limit', body);
    assertError(replay, 409, 'DUPLICATE_ORDER_ID');
    assert.equal((await A.openOrders()).length, 1);
    ok(await A.del(`/api/order/${body.id}`));
    // Even after the first is cancelled, the same signed id cannot be used again.
    assertError(await A.post('/api/v2/order/limit', body), 409, 'DUPLICATE_ORDER_ID');
    // ... nor by the batch route.
    const viaBatch = ok(await A.post('/api/v2/order/mass-limit/BTCUSDT', [body]));
    assert.equal(viaBatch[0].success, false);
    assert.match(viaBatch[0].failReason, /already used/);

    // A market order replayed (the first expires: B's long has no bid to sell into).
    const mb = await B.marketBody({ side: 'SELL', cashQuantity: 500 });
    ok(await B.post('/api/v2/order/market', mb), 'first market');
    assertError(await B.post('/api/v2/order/market', mb), 409, 'DUPLICATE_ORDER_ID');

    // chainId 1, signed for chain 1: refused by the chain check.
    const wrongChain = await A.limitBody({ side: 'SELL', quantity: '0.01', limitPrice: 108000, chainId: '1' });
    assertError(await A.post('/api/v2/order/limit', wrongChain), 400, 'INVALID_CHAIN_ID');
    // Body says 16182 but the wallet signed for chain 1: the signature does not recover.
    const id = newOrderId();
    const sig1 = await sign(A.wallet, 'New limit order', { id, instrument: 'BTCUSDT', side: 'SELL', leverage: 10, quantity: units('0.01'), limitPrice: units(108000), chainId: 1n }, '1');
    assertError(await A.post('/api/v2/order/limit', { id, instrument: 'BTCUSDT', side: 'SELL', leverage: 10, quantity: '0.01', limitPrice: 108000, chainId: CHAIN_ID, signature: sig1 }), 400, 'INVALID_SIGNATURE');
    // SIWE with the wrong chain id is refused.
    const n = ok(await http(X.url, 'GET', '/auth/nonce'));
    assertError(await http(X.url, 'POST', '/auth/user/sign-up', await clientSignIn(randomWallet(), n.nonce, { chainId: 1 })));

    // Signed by B, sent by A.
    const byB = await B.limitBody({ side: 'SELL', quantity: '0.01', limitPrice: 108000 });
    assertError(await A.post('/api/v2/order/limit', byB), 400, 'INVALID_SIGNATURE');
    // Tampered quantity.
    const tampered = { ...(await A.limitBody({ side: 'SELL', quantity: '0.01', limitPrice: 108000 })), quantity: '0.02' };
    assertError(await A.post('/api/v2/order/limit', tampered), 400, 'INVALID_SIGNATURE');
    // Malformed id, bad price increment, unknown instrument, missing auth.
    assertError(await A.post('/api/v2/order/limit', { ...(await A.limitBody({ side: 'SELL', quantity: '0.01', limitPrice: 108000 })), id: 'abc' }), 400);
    assertError(await A.limit({ side: 'SELL', quantity: '0.01', limitPrice: '108000.05' }), 400, 'INVALID_LIMIT_PRICE');
    assertError(await A.limit({ instrument: 'NOPE', side: 'SELL', quantity: '0.01', limitPrice: 108000 }), 400, 'INVALID_INSTRUMENT');
    assertError(await http(X.url, 'POST', '/api/v2/order/limit', await A.limitBody({ side: 'SELL', quantity: '0.01', limitPrice: 108000 })), 401);
    assertError(await http(X.url, 'GET', '/api/position', undefined, { authorization: 'Bearer nope' }), 401);
    assert.deepEqual(await A.openOrders(), []);
  });

  test('matcher state as the public client follows it: REST snapshot as of now, then info snapshots even without a change', async () => {
    // The public client marks the moment it starts listening and drops any state not newer than that; the
    // matcher never changed here (engine updatedAt 0), which used to leave such a client without a state.
    const since = Date.now();
    const c = wsClient(X.ex.wsUrl);
    const states: Array<{ state: string; updatedAt: string }> = [];
    try {
      c.connect();
      await connected(c);
      const sub = c.newSubscription(`${X.ex.channelPrefix}info`);
      sub.on('publication', (p) => states.push(p.data as { state: string; updatedAt: string }));
      sub.subscribe();
      await subscribed(sub);
      const m = ok(await http(X.url, 'GET', '/api/market'), 'market');
      assert.equal(m.state, 'active');
      assert.ok(Date.parse(m.updatedAt) >= since, `REST updatedAt ${m.updatedAt} is older than the request`);
      await eventually(async () => states, (l) => l.some((s) => Date.parse(s.updatedAt) > since), 'an info snapshot', 5000);
      assert.ok(states.every((s) => s.state === 'active'));
    } finally {
      c.disconnect();
    }
  });

  test('24 h instrument statistics: fields=metrics and the instruments channel carry the traded high, low and volumes', async () => {
    const trades = ok(await http(X.url, 'GET', '/api/market/BTCUSDT/recent-trades?limit=500')) as Array<{ fillQuantity: number; fillPrice: number; createdAt: string }>;
    assert.ok(trades.length >= 3, `trades so far: ${trades.length}`);
    const prices = trades.map((t) => t.fillPrice);
    const volume = money(...trades.map((t) => money(t.fillQuantity * t.fillPrice)));
    const volumeBase = money(...trades.map((t) => t.fillQuantity));

    // The channel first (no REST read of the statistics yet): the first instrument change after a quiet
    // stretch with no subscriber carries the traded figures. It used to carry zeros: nothing folded the
    // statistics until a publication (or a REST read) asked for them, and that fold came one publication late.
    const c = wsClient(X.ex.wsUrl);
    const seen: Array<Record<string, any>> = [];
    let first: Record<string, any>;
    try {
      c.connect();
      await connected(c);
      const sub = c.newSubscription(`${X.ex.channelPrefix}instruments`);
      sub.on('publication', (p) => seen.push(p.data as Record<string, any>));
      sub.subscribe();
      await subscribed(sub);
      await sleep(1100); // the background fold runs once a second
      ok(await http(X.url, 'POST', '/api/admin/index-price', { instrument: 'BTCUSDT', price: '100000' }, { 'x-operator-token': X.ex.operatorToken }));
      const live = await eventually(async () => seen.filter((i) => i.id === 'BTCUSDT'), (l) => l.length > 0, 'an instruments publication');
      first = live[0]!;
    } finally {
      c.disconnect();
    }

    const btc = (ok(await http(X.url, 'GET', '/api/market/instrument?fields=metrics')) as Array<Record<string, any>>).find((i) => i.id === 'BTCUSDT')!;
    assert.equal(btc.high, Math.max(...prices));
    assert.equal(btc.low, Math.min(...prices));
    assertMoney(btc.volume, volume, 'volume');
    assertMoney(btc.volumeBase, volumeBase, 'volumeBase');
    // The oldest trade of the window (no trade before it): the price 24 h ago.
    assert.equal(btc.closePrice, trades[trades.length - 1]!.fillPrice);
    // No funding settled here (FUNDING_INTERVAL_MS=0): rate 0 as of the instrument's start, a time, not null.
    assert.equal(btc.fundingRate, 0);
    assert.equal(btc.fundingRateCreatedAt, btc.startDate);

    assert.deepEqual([first.high, first.low, first.closePrice], [btc.high, btc.low, btc.closePrice]);
    assertMoney(first.volume, volume, 'channel volume');
    assertMoney(first.volumeBase, volumeBase, 'channel volumeBase');
  });

  test('a value the signed struct cannot hold is a 400 naming the field, not a 500', async () => {
    // Leverage 256..300 is within the spec's 1..300 (and BTCUSDT's maxLeverage) but not a uint8: no wallet
    // can sign it (ethers refuses), so any signature is invalid. The server used to answer 500 here.
    const sig = `0x${'11'.repeat(65)}`;
    const limit = { ...(await A.limitBody({ side: 'BUY', quantity: '0.01', limitPrice: 90000, leverage: 200 })), leverage: 300, signature: sig };
    assert.match(assertError(await A.post('/api/v2/order/limit', limit), 400, 'INVALID_SIGNATURE').message, /leverage/);
    const market = { ...(await A.marketBody({ side: 'BUY', cashQuantity: 100, leverage: 200 })), leverage: 256, signature: sig };
    assertError(await A.post('/api/v2/order/market', market), 400, 'INVALID_SIGNATURE');
    const close = { ...(await A.closeBody('BTCUSDT', 0, 200)), leverage: 300, signature: sig };
    assertError(await A.post('/api/v2/position/BTCUSDT/close', close), 400, 'INVALID_SIGNATURE');
    // In a batch the item fails on its own.
    const good = await A.limitBody({ side: 'BUY', quantity: '0.01', limitPrice: 90000 });
    const batch = ok(await A.post('/api/v2/order/mass-limit/BTCUSDT', [limit, good]), 'mass-limit') as Array<{ success: boolean; failReason?: string }>;
    assert.equal(batch[0].success, false);
    assert.match(batch[0].failReason ?? '', /leverage/);
    assert.equal(batch[1].success, true);
    ok(await A.post('/api/order/mass-cancel', { instrument: 'BTCUSDT' }));
  });
});

/** Sleeps until just after the next whole second. */
async function nextSecond(): Promise<void> {
  await sleep(1000 - (Date.now() % 1000) + 10);
}

describe('e2e: refresh on 401', () => {
  let X: TestExchange;
  before(async () => {
    // No grace window, so the old refresh token is dead at once (test/app/concurrent-refresh.test.ts: with one).
    X = await startTestExchange({ ACCESS_TOKEN_TTL_SEC: '1', REFRESH_GRACE_SEC: '0' });
  });
  after(async () => {
    await X?.stop();
  });

  test('the access token expires, /auth/refresh rotates both tokens, the old refresh token is dead', async () => {
    // JWT times are whole seconds: a 1 s token lives until the next second boundary, so start just after one.
    await nextSecond();
    const bot = await new Bot(X.url).signIn();
    const oldAccess = bot.accessToken;
    const oldRefresh = bot.refreshToken;

    // Wait until the 1 s access token is refused.
    const deadline = Date.now() + 4000;
    let res = await bot.get('/api/position');
    while (res.status === 200 && Date.now() < deadline) {
      await sleep(100);
      res = await bot.get('/api/position');
    }
    assertError(res, 401);

    // A refresh token is not an access token, and an access token is not a refresh token.
    assertError(await bot.req('GET', '/api/position', undefined, oldRefresh), 401);
    assertError(await http(X.url, 'POST', '/auth/refresh', undefined, { authorization: `Bearer ${oldAccess}` }), 401);

    await nextSecond();
    const r = ok(await http(X.url, 'POST', '/auth/refresh', undefined, { authorization: `Bearer ${oldRefresh}` }), 'refresh');
    assert.equal(typeof r.token.accessToken, 'string');
    assert.equal(typeof r.token.refreshToken, 'string');
    assert.notEqual(r.token.refreshToken, oldRefresh);
    assert.notEqual(r.token.accessToken, oldAccess);
    assert.equal(r.user.wallet.toLowerCase(), bot.address.toLowerCase());
    bot.accessToken = r.token.accessToken;
    bot.refreshToken = r.token.refreshToken;
    const retry = ok(await bot.get('/api/position'), 'retry');
    assert.deepEqual(retry, { list: [] });
    assert.equal(ok(await bot.get('/api/user/me')).exchangeId, bot.exchangeId);

    assertError(await http(X.url, 'POST', '/auth/refresh', undefined, { authorization: `Bearer ${oldRefresh}` }), 401);
    assertError(await http(X.url, 'POST', '/auth/refresh'), 401);
  });
});
