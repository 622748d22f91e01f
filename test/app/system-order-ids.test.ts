// End to end over HTTP: the ids of orders the exchange creates itself (TpSl triggers, liquidation, ADL) are
// `DDDDD:` + `ffffffffff` + 16 hex digits of a counter. A client could pick such an id for its own order
// before the counter reaches it; the exchange's order would then share the id with the client's order, and
// the id routes (GET/DELETE /api/order/{id}) would reach only one of them. So client ids in that namespace
// are refused as bad input (a 4xx that changes nothing); no UUID-derived id is refused in practice.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ALL_TIME, Bot, assertError, eventually, newOrderId, ok, startTestExchange, type TestExchange } from './client.js';

const systemLike = (n: number, prefix = newOrderId().slice(0, 6)) => `${prefix}ffffffffff${n.toString(16).padStart(16, '0')}`;

describe('order ids of the exchange\'s own orders cannot be taken by a client', () => {
  let X: TestExchange;
  let A: Bot;
  let B: Bot;
  let admin: Bot;

  before(async () => {
    X = await startTestExchange();
    [A, B, admin] = await Promise.all([new Bot(X.url).signIn(), new Bot(X.url).signIn(), new Bot(X.url).signIn()]);
    await Promise.all([A.faucet(), B.faucet()]);
    await X.ex.auth.setRole(admin.exchangeId, 'admin');
    ok(await admin.post('/api/admin/index-price', { instrument: 'BTCUSDT', price: '100000' }), 'index');
  });
  after(async () => {
    await X?.stop();
  });

  test('create routes refuse an id in the system namespace with a 4xx and change nothing', async () => {
    const before = { opened: await A.openOrders(), balance: await A.balance() };
    for (const id of [systemLike(1), systemLike(2).toUpperCase(), systemLike(0x1234)]) {
      assertError(await A.limit({ side: 'BUY', quantity: '0.001', limitPrice: 90000, id }), 400, 'INVALID_ORDER_ID');
      assertError(await A.stopLimit({ side: 'BUY', quantity: '0.001', limitPrice: 101000, stopPrice: 100500, id }), 400, 'INVALID_ORDER_ID');
      assertError(await A.market({ side: 'BUY', cashQuantity: 100, id }), 400, 'INVALID_ORDER_ID');
      const batch = ok(await A.post('/api/v2/order/mass-limit/BTCUSDT', [await A.limitBody({ side: 'BUY', quantity: '0.001', limitPrice: 90000, id })]), 'mass-limit');
      assert.equal(batch.length, 1);
      assert.equal(batch[0].success, false);
      assert.match(batch[0].failReason, /reserved/i);
    }
    assert.deepEqual(await A.openOrders(), before.opened);
    assert.deepEqual(await A.balance(), before.balance);
    // Ids that merely contain f's elsewhere are ordinary ids.
    const o = ok(await A.limit({ side: 'BUY', quantity: '0.001', limitPrice: 90000, id: `${newOrderId().slice(0, 6)}fffffffff0${'0'.repeat(16)}` }), 'ordinary id');
    assert.equal(o.status, 'NEW');
    ok(await A.del(`/api/order/${o.id}`), 'cancel');
  });

  test('a triggered TpSl order has an id no other order of the user holds', async () => {
    // A long 0.01 at 100000 with a stop-loss at 99000; B makes both sides.
    ok(await B.limit({ side: 'SELL', quantity: '0.01', limitPrice: 100000 }), 'B sell');
    assert.equal(ok(await A.limit({ side: 'BUY', quantity: '0.01', limitPrice: 100000 }), 'A buy').status, 'FILLED');
    // A tries to take the ids the exchange will give its next orders: every attempt is refused.
    for (let n = 1; n <= 4; n++) assertError(await A.limit({ side: 'BUY', quantity: '0.001', limitPrice: 95000, id: systemLike(n) }), 400, 'INVALID_ORDER_ID');
    ok(await A.post('/api/tpsl/BTCUSDT', await A.tpslBody('BTCUSDT', { type: 'stop-loss', side: 'SELL', quantity: 0, price: 99000 })), 'stop-loss');
    ok(await B.limit({ side: 'BUY', quantity: '0.01', limitPrice: 98500 }), 'B bid');
    ok(await admin.post('/api/admin/index-price', { instrument: 'BTCUSDT', price: '98800' }), 'index down');

    const done = await eventually(
      async () => ok(await A.get('/api/tpsl?status=done')) as { list: Array<Record<string, any>> },
      (v) => v.list.length === 1, 'the stop-loss done',
    );
    const triggerId = done.list[0].triggerOrder as string;
    assert.match(triggerId, /^[0-9]{5}:ffffffffff[0-9a-f]{16}$/);
    const trig = await A.order(triggerId);
    assert.equal(trig.group, 'tpsl');
    assert.equal(trig.status, 'FILLED');
    assert.deepEqual(await A.openOrders(), []);
    const hist = await eventually(
      async () => ok(await A.get(`/api/order?${ALL_TIME}&id=${encodeURIComponent(triggerId)}`)) as { list: any[]; count: number },
      (v) => v.count >= 1, 'the trigger order in the history',
    );
    assert.equal(hist.count, 1);
    assert.equal(hist.list[0].group, 'tpsl');
  });
});
