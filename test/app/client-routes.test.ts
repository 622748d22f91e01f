// The routes the public client (exchange-api 1.0.66) calls beyond the version-2 table, against a real started
// exchange with real wallets: the version-1 create and close routes (UUID ids that the client later uses to
// read, cancel and replace), the deprecated cross-instrument batch replace, public trades, the auth user and
// its services, ping, and the client's quirks (updateTpSl's `query`, mass-cancel without an instrument).
// Hostile cases: another user's order id, a bad instrument, a wrong signature: 4xx and nothing changes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Bot, assertError, eventually, http, ok, startTestExchange, type TestExchange } from './client.js';

/** Days since 2025-07-24 (UTC), five digits: the spec's version-2 prefix for an instant. */
const dayPrefix = (ms: number) => String(Math.floor((ms - Date.UTC(2025, 6, 24)) / 86_400_000)).padStart(5, '0');
/** The ids a version-1 UUID may be kept as, made between `from` and `to` (a midnight may pass in between). */
const keptAs = (uuid: string, from: number, to: number) =>
  [...new Set([dayPrefix(from), dayPrefix(to)])].map((d) => `${d}:${uuid.replace(/-/g, '').slice(0, 26).toLowerCase()}`);

describe('public-client routes beyond the v2 table', () => {
  let X: TestExchange;
  let A: Bot;
  let B: Bot;
  let M: Bot;

  before(async () => {
    X = await startTestExchange();
    [A, B, M] = await Promise.all([new Bot(X.url).signIn(), new Bot(X.url).signIn(), new Bot(X.url).signIn()]);
    await Promise.all([A.faucet(), B.faucet(), M.faucet()]);
  });
  after(() => X?.stop());

  test('GET /api/ping answers { time } in ms', async () => {
    const from = Date.now();
    const r = ok(await http(X.url, 'GET', '/api/ping'));
    const to = Date.now();
    assert.ok(Number.isInteger(r.time) && r.time >= from && r.time <= to, `time ${r.time} not in [${from}, ${to}]`);
  });

  test('v1 limit with a UUID id: kept as DDDDD:<26 hex>, read, replaced and cancelled by the UUID', async () => {
    const uuid = randomUUID();
    const from = Date.now();
    const o = ok(await A.post('/api/order/limit', await A.limitBody({ id: uuid, side: 'BUY', quantity: '0.01', limitPrice: 90000 })), 'v1 limit');
    assert.ok(keptAs(uuid, from, Date.now()).includes(o.id), `id ${o.id}`);
    assert.equal(o.status, 'NEW');
    assert.equal((await A.order(uuid)).id, o.id, 'GET by the UUID');
    assert.ok((await A.openOrders()).some((x) => x.id === o.id));

    // B can neither read, replace nor cancel it by the UUID.
    assertError(await B.get(`/api/order/${uuid}`), 404);
    assertError(await B.put(`/api/order/${uuid}/limit`, await B.replaceBody(uuid, '0.02', 91000)), 404);
    assertError(await B.del(`/api/order/${uuid}`), 404);
    const still = await A.order(uuid);
    assert.equal(still.status, 'NEW');
    assert.equal(still.quantity, 0.01);

    ok(await A.put(`/api/order/${uuid}/limit`, await A.replaceBody(uuid, '0.02', 91000)), 'replace by UUID');
    const replaced = await A.order(uuid);
    assert.equal(replaced.quantity, 0.02);
    assert.equal(replaced.limitPrice, 91000);

    ok(await A.del(`/api/order/${uuid}`), 'cancel by UUID');
    assert.equal((await A.order(o.id)).status, 'CANCELLED');
    // The id stays spent: the same UUID cannot name a second order.
    assertError(await A.post('/api/order/limit', await A.limitBody({ id: uuid, side: 'BUY', quantity: '0.01', limitPrice: 90000 })), [400, 409]);
  });

  test('v1 create refuses a wrong signature, a bad instrument, a reserved id; nothing is placed', async () => {
    const before = (await A.openOrders()).length;
    const good = await A.limitBody({ id: randomUUID(), side: 'BUY', quantity: '0.01', limitPrice: 90000 });
    // Signed by B, sent by A.
    assertError(await A.post('/api/order/limit', await B.limitBody({ id: randomUUID(), side: 'BUY', quantity: '0.01', limitPrice: 90000 })), 400, 'INVALID_SIGNATURE');
    // Signed quantity differs from the one sent.
    assertError(await A.post('/api/order/limit', { ...good, quantity: '0.02' }), 400, 'INVALID_SIGNATURE');
    assertError(await A.post('/api/order/limit', await A.limitBody({ id: randomUUID(), instrument: 'NOPEUSDT', side: 'BUY', quantity: '0.01', limitPrice: 90000 })), 400);
    assertError(await A.post('/api/order/limit', { ...good, id: 'not-an-id' }), 400);
    // A UUID whose digits fall in the exchange's own id space.
    const reserved = 'ffffffff-ff00-4000-8000-000000000000';
    assertError(await A.post('/api/order/limit', await A.limitBody({ id: reserved, side: 'BUY', quantity: '0.01', limitPrice: 90000 })), 400, 'INVALID_ORDER_ID');
    const sm = await A.stopLimitBody({ id: randomUUID(), side: 'SELL', quantity: '0.01', limitPrice: 80000, stopPrice: 81000 });
    assertError(await A.post('/api/order/stop-limit', { ...sm, stopPrice: 82000 }), 400, 'INVALID_SIGNATURE');
    assert.equal((await A.openOrders()).length, before);
  });

  test('v1 market, stop-limit, mass-limit and position close', async () => {
    const sell = ok(await M.post('/api/order/limit', await M.limitBody({ id: randomUUID(), side: 'SELL', quantity: '0.05', limitPrice: 100000 })));
    assert.equal(sell.status, 'NEW');
    const mktUuid = randomUUID();
    const mkt = ok(await B.post('/api/order/market', await B.marketBody({ id: mktUuid, side: 'BUY', cashQuantity: 2000 })), 'v1 market');
    assert.equal(mkt.status, 'FILLED');
    const fills = await eventually(() => B.get(`/api/order/${mktUuid}/fill`).then((r) => ok(r)), (f) => f.count === 1, 'fills by UUID');
    assert.equal(fills.list[0].orderId, mkt.id);
    const pos = await eventually(() => B.positions(), (p) => p.length === 1, 'B position');
    assert.equal(pos[0].side, 'BUY');
    assert.equal(pos[0].quantity, 0.02);

    const stopUuid = randomUUID();
    const stop = ok(await B.post('/api/order/stop-limit', await B.stopLimitBody({ id: stopUuid, side: 'SELL', quantity: '0.01', limitPrice: 91000, stopPrice: 92000 })), 'v1 stop-limit');
    assert.equal(stop.type, 'STOP_LIMIT');
    assert.equal((await B.order(stopUuid)).id, stop.id);

    const items = await Promise.all([0, 1].map((i) => B.limitBody({ id: randomUUID(), side: 'BUY', quantity: '0.01', limitPrice: 95000 + i })));
    const forged = { ...(await A.limitBody({ id: randomUUID(), side: 'BUY', quantity: '0.01', limitPrice: 95005 })) };
    const batch = ok(await B.post('/api/order/mass-limit/BTCUSDT', [...items, forged]), 'v1 mass-limit');
    assert.deepEqual(batch.map((r: { success: boolean }) => r.success), [true, true, false], JSON.stringify(batch));
    for (const [i, r] of batch.slice(0, 2).entries()) assert.equal((await B.order(items[i].id as string)).id, r.orderId);
    assert.equal(batch[2].orderId, forged.id);
    // Cancelled by the UUIDs the client sent.
    const cancelled = ok(await B.post('/api/order/mass-cancel-by-id', { orderIds: items.map((i) => i.id) }), 'cancel by UUIDs');
    assert.deepEqual(cancelled.map((r: { success: boolean }) => r.success), [true, true]);
    for (const r of batch.slice(0, 2)) assert.equal((await B.order(r.orderId)).status, 'CANCELLED');

    // Close the position through the v1 route with a UUID; B's closing cannot use A's wallet.
    const closeUuid = randomUUID();
    const body = { instrument: 'BTCUSDT', ...(await B.closeBody('BTCUSDT', 0, 10, closeUuid)) };
    assertError(await B.post('/api/position/BTCUSDT/close', { instrument: 'BTCUSDT', ...(await A.closeBody('BTCUSDT', 0, 10, randomUUID())) }), 400, 'INVALID_SIGNATURE');
    assertError(await B.post('/api/position/ETHUSDT/close', body), 400, 'INVALID_INSTRUMENT');
    assert.equal((await B.positions()).length, 1, 'refusals change nothing');
    // Someone must be there to buy back from: M rests a buy.
    ok(await M.post('/api/order/limit', await M.limitBody({ id: randomUUID(), side: 'BUY', quantity: '0.05', limitPrice: 99000 })));
    const closed = ok(await B.post('/api/position/BTCUSDT/close', body), 'v1 close');
    assert.equal((await B.order(closeUuid)).id, closed.id);
    await eventually(() => B.positions(), (p) => p.length === 0, 'B position closed');
  });

  test('PUT /api/order/limit replaces across instruments; another user\'s id fails alone', async () => {
    const resting = (o: { status: string }) => { assert.equal(o.status, 'NEW', JSON.stringify(o)); return o as { id: string; status: string }; };
    const btc = resting(ok(await A.limit({ side: 'BUY', quantity: '0.01', limitPrice: 96000 })));
    const eth = resting(ok(await A.limit({ instrument: 'ETHUSDT', side: 'BUY', quantity: '0.1', limitPrice: 3400 })));
    const bOrder = resting(ok(await B.limit({ side: 'BUY', quantity: '0.01', limitPrice: 95000 })));
    const replaceItem = async (bot: Bot, orderId: string, quantity: string, limitPrice: number) => ({ orderId, ...(await bot.replaceBody(orderId, quantity, limitPrice)) });
    const res = ok(await A.put('/api/order/limit', [
      await replaceItem(A, btc.id, '0.02', 96500),
      await replaceItem(A, eth.id, '0.2', 3410),
      await replaceItem(A, bOrder.id, '0.03', 94000),
    ]), 'batch replace');
    assert.deepEqual(res.map((r: { orderId: string; success: boolean }) => [r.orderId, r.success]), [[btc.id, true], [eth.id, true], [bOrder.id, false]], JSON.stringify(res));
    assert.match(res[2].failReason, /not found/i);
    const [b2, e2, other] = [await A.order(btc.id), await A.order(eth.id), await B.order(bOrder.id)];
    assert.deepEqual([b2.quantity, b2.limitPrice], [0.02, 96500]);
    assert.deepEqual([e2.quantity, e2.limitPrice], [0.2, 3410]);
    assert.deepEqual([other.quantity, other.limitPrice, other.status], [0.01, 95000, 'NEW'], 'B\'s order untouched');
    // A signature that does not match fails its item only.
    const bad = ok(await A.put('/api/order/limit', [{ ...(await replaceItem(A, btc.id, '0.03', 96600)), quantity: '0.04' }]));
    assert.equal(bad[0].success, false);
    assert.equal((await A.order(btc.id)).quantity, 0.02);
    assertError(await A.put('/api/order/limit', []), 400);
  });

  test('mass-cancel without an instrument cancels every open order of the caller only', async () => {
    ok(await A.limit({ side: 'BUY', quantity: '0.01', limitPrice: 95500 }));
    ok(await A.limit({ instrument: 'ETHUSDT', side: 'BUY', quantity: '0.1', limitPrice: 3400 }));
    const bOpen = (await B.openOrders()).map((o) => o.id).sort();
    assert.ok(bOpen.length > 0);
    assert.ok(new Set((await A.openOrders()).map((o) => o.instrument)).size >= 2);
    assertError(await A.post('/api/order/mass-cancel', { instrument: 'NOPEUSDT' }), 400);
    ok(await A.post('/api/order/mass-cancel', {}), 'mass-cancel all');
    assert.deepEqual(await A.openOrders(), []);
    assert.deepEqual((await B.openOrders()).map((o) => o.id).sort(), bOpen, 'B\'s orders untouched');
  });

  test('updateTpSl: the quantity under `query`; neither key → 400', async () => {
    ok(await M.post('/api/order/limit', await M.limitBody({ id: randomUUID(), side: 'SELL', quantity: '0.01', limitPrice: 100000 })));
    ok(await A.market({ side: 'BUY', cashQuantity: 1000 }));
    await eventually(() => A.positions(), (p) => p.length === 1, 'A position');
    const created = ok(await A.post('/api/tpsl/BTCUSDT', await A.tpslBody('BTCUSDT', { type: 'take-profit', side: 'SELL', quantity: 0, price: 110000 })));
    const signed = await A.tpslBody('BTCUSDT', { type: 'take-profit', side: 'SELL', quantity: '0.005', price: 111000 });
    // What the public client's updateTpSl sends: instrument, type, order, query, price, side, signature.
    const { quantity, ...rest } = signed;
    assertError(await A.put(`/api/tpsl/BTCUSDT/${created.id}`, { instrument: 'BTCUSDT', ...rest }), 400);
    assertError(await B.put(`/api/tpsl/BTCUSDT/${created.id}`, { instrument: 'BTCUSDT', ...rest, query: quantity }), 404);
    const modified = ok(await A.put(`/api/tpsl/BTCUSDT/${created.id}`, { instrument: 'BTCUSDT', ...rest, query: quantity }), 'modify with query');
    assert.equal(modified.quantity, '0.005');
    assert.equal(modified.price, '111000');
  });

  test('GET /api/market/{instrument}/trades: recent trades naming no order or user', async () => {
    const trades = await eventually(() => http(X.url, 'GET', '/api/market/BTCUSDT/trades').then((r) => ok(r)), (t) => t.length >= 2, 'trades');
    for (const t of trades) {
      assert.deepEqual(Object.keys(t).sort(), ['createdAt', 'executionId', 'fillPrice', 'fillQuantity', 'instrument', 'side']);
      assert.equal(t.instrument, 'BTCUSDT');
    }
    const times = trades.map((t: { createdAt: string }) => Date.parse(t.createdAt));
    assert.deepEqual(times, [...times].sort((a, b) => b - a), 'newest first');
    assertError(await http(X.url, 'GET', '/api/market/NOPEUSDT/trades'), [400, 404]);
  });

  test('GET /auth/user/me and /auth/user/me/service', async () => {
    const signedUp = ok(await http(X.url, 'POST', '/auth/refresh', undefined, { authorization: `Bearer ${A.refreshToken}` }));
    A.accessToken = signedUp.token.accessToken;
    A.refreshToken = signedUp.token.refreshToken;
    const me = ok(await A.get('/auth/user/me'));
    assert.deepEqual(me, signedUp.user, 'the user of the session response');
    assert.equal(me.wallet.toLowerCase(), A.address.toLowerCase());
    const services = ok(await A.get('/auth/user/me/service'));
    assert.deepEqual(services, [{ user: me.id, service: 'exchange', createdAt: me.createdAt }]);
    assert.notEqual(ok(await B.get('/auth/user/me')).id, me.id);
    assertError(await http(X.url, 'GET', '/auth/user/me'), 401);
    assertError(await http(X.url, 'GET', '/auth/user/me/service', undefined, { authorization: 'Bearer nope' }), 401);
  });
});
