// End to end, over HTTP against the real exchange: one user can never see or act on another user's
// orders, fills, positions or TpSl. Every route that takes an id answers B's request for A's id with 404
// (or a per-item failure in batch routes), A's rows are unchanged afterwards, and B's lists never hold
// A's rows.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ALL_TIME, Bot, assertError, eventually, ok, startTestExchange, type TestExchange } from './client.js';

/** The version 1 (UUID) spelling of a version 2 id: the UUID's first 26 hex digits are the v2 suffix. */
function v1Of(v2: string): string {
  const h = v2.slice(6).toLowerCase() + '000000';
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

function resting(res: { status: number; body: any }): any {
  const o = ok(res, 'create');
  assert.equal(o.status, 'NEW', `order not resting: ${JSON.stringify(o)}`);
  return o;
}

describe('isolation: B never sees or touches A', () => {
  let X: TestExchange;
  let A: Bot;
  let B: Bot;
  let C: Bot;
  /** A's rows. */
  let restId = '';
  let stopId = '';
  let filledId = '';
  let tpslId = '';
  let aIds: string[] = [];
  /** B's own rows (so B's lists are not trivially empty). */
  let bRestId = '';
  let bFilledId = '';
  let bTpslId = '';
  /** Snapshots of A's state taken before B's attempts. */
  let aBefore: { rest: any; stop: any; filled: any; positions: any; tpsl: any; opened: any; balance: any };

  async function snapshotA() {
    return {
      rest: await A.order(restId),
      stop: await A.order(stopId),
      filled: await A.order(filledId),
      positions: await A.positions(),
      tpsl: ok(await A.get('/api/position?withTpSL=yes')).list[0].tpslList,
      opened: await A.openOrders(),
      balance: await A.balance(),
    };
  }

  before(async () => {
    X = await startTestExchange();
    [A, B, C] = await Promise.all([new Bot(X.url).signIn(), new Bot(X.url).signIn(), new Bot(X.url).signIn()]);
    await Promise.all([A.faucet(), B.faucet(), C.faucet()]);

    // C makes the market: A and B each buy 0.01 from C.
    resting(await C.limit({ side: 'SELL', quantity: '0.02', limitPrice: 100000 }));
    const fa = ok(await A.limit({ side: 'BUY', quantity: '0.01', limitPrice: 100000 }));
    assert.equal(fa.status, 'FILLED');
    filledId = fa.id;
    const fb = ok(await B.limit({ side: 'BUY', quantity: '0.01', limitPrice: 100000 }));
    assert.equal(fb.status, 'FILLED');
    bFilledId = fb.id;

    restId = resting(await A.limit({ side: 'SELL', quantity: '0.01', limitPrice: 102000 })).id;
    stopId = resting(await A.stopLimit({ side: 'SELL', quantity: '0.01', limitPrice: 95000, stopPrice: 96000 })).id;
    tpslId = ok(await A.post('/api/tpsl/BTCUSDT', await A.tpslBody('BTCUSDT', { type: 'take-profit', side: 'SELL', quantity: 0, price: 110000 }))).id;
    aIds = [restId, stopId, filledId];

    bRestId = resting(await B.limit({ side: 'SELL', quantity: '0.01', limitPrice: 103000 })).id;
    bTpslId = ok(await B.post('/api/tpsl/BTCUSDT', await B.tpslBody('BTCUSDT', { type: 'stop-loss', side: 'SELL', quantity: 0, price: 90000 }))).id;

    // Let the read model catch up so history reads see everything.
    await eventually(() => A.get(`/api/fill?${ALL_TIME}`).then((r) => ok(r)), (p) => p.count === 1, 'A fill projected');
    await eventually(() => A.get('/api/order').then((r) => ok(r)), (p) => p.count === 3, 'A orders projected');
    await eventually(() => B.get('/api/order').then((r) => ok(r)), (p) => p.count === 2, 'B orders projected');
    aBefore = await snapshotA();
    assert.equal(aBefore.positions.length, 1);
    assert.deepEqual(aBefore.tpsl.map((t: { id: string }) => t.id), [tpslId]);
  });
  after(async () => {
    await X?.stop();
  });

  test('the owner reaches its orders by v2 and v1 id', async () => {
    for (const id of aIds) {
      assert.equal((await A.order(id)).id, id);
      assert.equal((await A.order(v1Of(id))).id, id, `v1 spelling of ${id}`);
      ok(await A.get(`/api/order/${id}/fill`));
    }
  });

  test('GET /api/order/{id} and /api/order/{id}/fill: 404 for another user\'s order, both id spellings', async () => {
    for (const id of aIds) {
      for (const spelling of [id, id.toUpperCase(), v1Of(id)]) {
        assertError(await B.get(`/api/order/${spelling}`), 404, 'ORDER_NOT_FOUND');
        assertError(await B.get(`/api/order/${spelling}/fill`), 404, 'ORDER_NOT_FOUND');
        assertError(await B.get(`/api/order/${spelling}/fill?version=2`), 404, 'ORDER_NOT_FOUND');
      }
    }
  });

  test('DELETE /api/order/{id}: 404, A\'s orders stay open', async () => {
    for (const id of aIds) {
      assertError(await B.del(`/api/order/${id}`), 404);
      assertError(await B.del(`/api/order/${v1Of(id)}`), 404);
    }
    assert.equal((await A.order(restId)).status, 'NEW');
    assert.equal((await A.order(stopId)).status, 'NEW');
  });

  test('PUT /api/order/{id}/limit and /stop-limit: 404 even with a body A signed', async () => {
    assertError(await B.put(`/api/order/${restId}/limit`, await B.replaceBody(restId, '0.02', 101000)), 404);
    assertError(await B.put(`/api/order/${v1Of(restId)}/limit`, await B.replaceBody(v1Of(restId), '0.02', 101000)), 404);
    // A replace A really signed, replayed by B, still reaches nothing.
    assertError(await B.put(`/api/order/${restId}/limit`, await A.replaceBody(restId, '0.02', 101000)), 404);
    assertError(await B.put(`/api/order/${stopId}/stop-limit`, await B.replaceStopBody(stopId, '0.02', 94000, 95000)), 404);
    assertError(await B.put(`/api/order/${stopId}/stop-limit`, await A.replaceStopBody(stopId, '0.02', 94000, 95000)), 404);
    // Replacing A's limit order through the stop-limit route (and vice versa) is no different.
    assertError(await B.put(`/api/order/${restId}/stop-limit`, await A.replaceStopBody(restId, '0.02', 94000, 95000)), 404);
    assertError(await B.put(`/api/order/${filledId}/limit`, await A.replaceBody(filledId, '0.02', 101000)), 404);
  });

  test('PUT /api/order/limit/{instrument} batch replace: per-item failure for A\'s ids, B\'s own item succeeds', async () => {
    const items = [
      { orderId: restId, ...(await B.replaceBody(restId, '0.02', 101500)) },
      { orderId: restId, ...(await A.replaceBody(restId, '0.03', 101500)) },
      { orderId: v1Of(restId), ...(await A.replaceBody(v1Of(restId), '0.03', 101500)) },
      { orderId: bRestId, ...(await B.replaceBody(bRestId, '0.01', 103500)) },
    ];
    const res = ok(await B.put('/api/order/limit/BTCUSDT', items), 'batch replace') as Array<{ orderId: string; success: boolean; failReason?: string }>;
    assert.equal(res.length, 4);
    for (const r of res.slice(0, 3)) {
      assert.equal(r.success, false, JSON.stringify(r));
      assert.equal(typeof r.failReason, 'string');
      assert.ok((r.failReason ?? '').length > 0);
    }
    assert.deepEqual(res[3], { orderId: bRestId, success: true });
    assert.equal((await B.order(bRestId)).limitPrice, 103500);
  });

  test('POST /api/order/mass-cancel-by-id: per-item failure for A\'s ids; mass-cancel only cancels B\'s orders', async () => {
    const res = ok(await B.post('/api/order/mass-cancel-by-id', { orderIds: [restId, v1Of(stopId), filledId] }), 'mass-cancel-by-id') as Array<{ orderId: string; success: boolean; failReason?: string }>;
    assert.equal(res.length, 3);
    for (const r of res) {
      assert.equal(r.success, false, `B cancelled A's order? ${JSON.stringify(r)}`);
      assert.equal(typeof r.failReason, 'string');
    }
    assert.deepEqual(res.map((r) => r.orderId), [restId, v1Of(stopId), filledId]);

    ok(await B.post('/api/order/mass-cancel', { instrument: 'BTCUSDT' }), 'B mass-cancel');
    assert.deepEqual(await B.openOrders(), []);
    assert.equal((await A.order(restId)).status, 'NEW');
    assert.equal((await A.order(stopId)).status, 'NEW');
    // Put B's resting order back for the list checks below.
    bRestId = resting(await B.limit({ side: 'SELL', quantity: '0.01', limitPrice: 103000 })).id;
  });

  test('TpSl: PUT/DELETE /api/tpsl/{instrument}/{id} 404; a TpSl cannot be hung on A\'s order', async () => {
    const body = await B.tpslBody('BTCUSDT', { type: 'take-profit', side: 'SELL', quantity: 0, price: 120000 });
    assertError(await B.put(`/api/tpsl/BTCUSDT/${tpslId}`, body), 404, 'TPSL_NOT_FOUND');
    // A's own signature over the modify, replayed by B.
    assertError(await B.put(`/api/tpsl/BTCUSDT/${tpslId}`, await A.tpslBody('BTCUSDT', { type: 'take-profit', side: 'SELL', quantity: 0, price: 120000 })), 404);
    assertError(await B.del(`/api/tpsl/BTCUSDT/${tpslId}`), 404, 'TPSL_NOT_FOUND');
    assertError(await B.del(`/api/tpsl/ETHUSDT/${tpslId}`), 404);
    // Attaching a TpSl to A's resting order.
    const onA = await B.post('/api/tpsl/BTCUSDT', await B.tpslBody('BTCUSDT', { type: 'stop-loss', side: 'BUY', quantity: 0, price: 105000 }, restId));
    assertError(onA, 404);
    const tp = (await A.positions())[0];
    assert.ok(tp);
    const aTpsl = ok(await A.get('/api/position?withTpSL=yes')).list[0].tpslList;
    assert.deepEqual(aTpsl, aBefore.tpsl);
    assert.equal(aTpsl[0].status, 'active');
    assert.equal(aTpsl[0].price, '110000');
  });

  test('B\'s lists never hold A\'s rows', async () => {
    const bOrders = ok(await B.get('/api/order?limit=500'));
    assert.ok(bOrders.count >= 3, `B sees its own orders: ${bOrders.count}`);
    for (const o of bOrders.list) {
      assert.equal(o.user, String(B.exchangeId));
      assert.ok(!aIds.includes(o.id), `A's order ${o.id} in B's list`);
      for (const t of o.tpslList) assert.notEqual(t.id, tpslId);
    }
    assert.ok(bOrders.list.some((o: { id: string }) => o.id === bFilledId));
    for (const q of [`id=${restId}`, `id=${restId}&id=${stopId}&id=${filledId}`, `id=${v1Of(restId)}`, 'status=NEW&withTpSL=yes', 'groupStatus=OPENED', 'type=STOP_LIMIT']) {
      const page = ok(await B.get(`/api/order?${q}`), q);
      for (const o of page.list) assert.ok(!aIds.includes(o.id), `${q}: A's order ${o.id}`);
    }
    assert.deepEqual(ok(await B.get(`/api/order?id=${restId}`)), { list: [], count: 0 });
    assert.deepEqual(ok(await B.get('/api/order?type=STOP_LIMIT')), { list: [], count: 0 });

    const opened = await B.openOrders();
    assert.deepEqual(opened.map((o) => o.id), [bRestId]);

    const fills = ok(await B.get(`/api/fill?${ALL_TIME}&limit=500`));
    assert.equal(fills.count, 1);
    assert.deepEqual(fills.list.map((f: { order: string }) => f.order), [bFilledId]);
    assert.deepEqual(ok(await B.get(`/api/order/${bFilledId}/fill`)).list.map((f: { orderId: string }) => f.orderId), [bFilledId]);

    const positions = ok(await B.get('/api/position?withTpSL=yes')).list;
    assert.equal(positions.length, 1);
    assert.equal(positions[0].user, String(B.exchangeId));
    assert.notEqual(positions[0].id, aBefore.positions[0].id);
    assert.deepEqual(positions[0].tpslList.map((t: { id: string }) => t.id), [bTpslId]);

    const tpsl = ok(await B.get('/api/tpsl?limit=500'));
    assert.deepEqual(tpsl.list.map((t: { id: string }) => t.id), [bTpslId]);
    assert.deepEqual(ok(await B.get(`/api/tpsl?status=active&instrument=BTCUSDT`)).list.map((t: { id: string }) => t.id), [bTpslId]);

    // And the other way round: A's lists hold none of B's rows.
    const aOrders = ok(await A.get('/api/order?limit=500'));
    assert.deepEqual(aOrders.list.map((o: { id: string }) => o.id).sort(), [...aIds].sort());
    assert.deepEqual(ok(await A.get('/api/tpsl')).list.map((t: { id: string }) => t.id), [tpslId]);
  });

  test('B\'s leverage change and position close leave A\'s position alone', async () => {
    ok(await B.put('/api/position/BTCUSDT', { leverage: 5 }), 'B leverage');
    // C provides the bid B's close sells into.
    resting(await C.limit({ side: 'BUY', quantity: '0.01', limitPrice: 99000 }));
    const close = ok(await B.post('/api/v2/position/BTCUSDT/close', await B.closeBody('BTCUSDT', 0, 5)), 'B close');
    assert.equal(close.status, 'FILLED');
    assert.deepEqual(await B.positions(), []);
    const [p] = await A.positions();
    assert.equal(p.leverage, aBefore.positions[0].leverage);
    assert.equal(p.quantity, 0.01);
    assert.equal(p.side, 'BUY');
  });

  test('A\'s orders, position and TpSl are exactly as before B\'s attempts', async () => {
    const now = await snapshotA();
    assert.deepEqual(now.rest, aBefore.rest);
    assert.deepEqual(now.stop, aBefore.stop);
    assert.deepEqual(now.filled, aBefore.filled);
    assert.deepEqual(now.opened, aBefore.opened);
    assert.deepEqual(now.tpsl, aBefore.tpsl);
    assert.equal(now.balance.funding.balance, aBefore.balance.funding.balance);
    // Position fields that do not move with the mark price.
    const pick = (p: any) => ({ id: p.id, side: p.side, quantity: p.quantity, avgPrice: p.avgPrice, leverage: p.leverage, fee: p.fee, createdAt: p.createdAt });
    assert.deepEqual(now.positions.map(pick), aBefore.positions.map(pick));
    // A can still act on them: replace then cancel its own resting order.
    ok(await A.put(`/api/order/${restId}/limit`, await A.replaceBody(restId, '0.01', 102500)));
    assert.equal((await A.order(restId)).limitPrice, 102500);
    ok(await A.del(`/api/order/${restId}`));
    assert.equal((await A.order(restId)).status, 'CANCELLED');
  });
});
