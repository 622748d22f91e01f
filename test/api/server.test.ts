import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Type, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { FastifyInstance } from 'fastify';
import { buildAuthServer, buildServer } from '../../src/api/server.js';
import { ORDER_BOOK_GROUPINGS } from '../../src/domain/enums.js';
import { PUBLIC_CHANNELS, USER_CHANNELS } from '../../src/realtime/channel-policy.js';
import * as RestOnly from '../../src/api/records/user.js';
import * as Shared from '../../src/records/index.js';

const R = { ...Shared, ...RestOnly };
import { ACCESS, API_KEY, AUTH, CHAIN, GOOD_SIG, NOW, OTHER_SIG, REFRESH, makeDeps, newOrderId } from './fakes.js';
import { VALID, type Req } from './requests.js';

const PAGED = (s: TSchema) => R.Paged(s);
const SHAPES: Record<string, TSchema> = {
  'GET /api/market': R.MarketInfoRecord,
  'GET /api/coin': R.CoinListRecord,
  'GET /api/market/{instrument}/deep': R.DepthRecord,
  'GET /api/market/{instrument}/recent-trades': Type.Array(R.RecentTradeRecord),
  'GET /api/market/available-balance': R.AvailableBalanceRecord,
  'GET /api/market/power': R.PowerRecord,
  'POST /api/v2/order/limit': R.OrderRecord,
  'POST /api/v2/order/stop-limit': R.OrderRecord,
  'POST /api/v2/order/market': R.OrderRecord,
  'POST /api/v2/order/mass-limit/{instrument}': Type.Array(R.BatchResultRecord),
  'PUT /api/order/{orderId}/limit': R.EmptyResponse,
  'PUT /api/order/{orderId}/stop-limit': R.EmptyResponse,
  'PUT /api/order/limit/{instrument}': Type.Array(R.BatchResultRecord),
  'DELETE /api/order/{orderId}': R.EmptyResponse,
  'POST /api/order/mass-cancel': R.EmptyResponse,
  'POST /api/order/mass-cancel-by-id': Type.Array(R.CancelResultRecord),
  'GET /api/order/{orderId}': R.OrderRecord,
  'GET /api/order/{orderId}/fill': Type.Object({ list: Type.Array(R.OrderFillRecord), count: Type.Integer() }),
  'GET /api/order/opened': Type.Array(R.OpenOrderRecord),
  'GET /api/order': PAGED(R.OrderWithTpSlRecord),
  'GET /api/fill': PAGED(R.FillRecord),
  'GET /api/position': Type.Object({ list: Type.Array(R.PositionListItemRecord) }),
  'PUT /api/position/{instrument}': R.LeverageChangeRecord,
  'POST /api/v2/position/{instrument}/close': R.OrderRecord,
  'GET /api/tpsl': PAGED(R.TpSlRecord),
  'POST /api/tpsl/{instrument}': R.TpSlRecord,
  'PUT /api/tpsl/{instrument}/{id}': R.TpSlRecord,
  'DELETE /api/tpsl/{instrument}/{id}': R.TpSlRecord,
  'GET /api/user/me': R.UserWireRecord,
  'GET /api/user/funding': Type.Array(R.UserFundingRecord),
  'GET /api/user/balance': Type.Array(R.BalanceItemRecord),
  'GET /auth/user/balance': Type.Array(R.BalanceItemRecord),
  'POST /api/transfer/pf/withdraw': R.TransferRecord,
  'POST /api/user/api-key': R.ApiKeyCreatedRecord,
  'PUT /api/user/api-key/{apiKeyId}/regenerate': R.ApiKeyCreatedRecord,
  'POST /auth/user/sign-up': R.SessionRecord,
  'GET /auth/nonce': R.NonceRecord,
};

function inject(app: FastifyInstance, r: Req, headers: Record<string, string> = AUTH) {
  return app.inject({ method: r.method, url: r.url, headers: r.auth ? headers : {}, ...(r.body !== undefined ? { payload: r.body as object } : {}) });
}

function assertError(res: { statusCode: number; json(): unknown }, status: number, code?: string) {
  assert.equal(res.statusCode, status);
  const body = res.json() as { error: { code: string; message: string } };
  assert.ok(Value.Check(R.ErrorBody, body), `error shape: ${JSON.stringify(body)}`);
  assert.ok(body.error.message.length > 0);
  if (code) assert.equal(body.error.code, code, body.error.message);
  return body.error;
}

describe('gateway routes', () => {
  let app: FastifyInstance;
  let env: ReturnType<typeof makeDeps>;
  before(async () => {
    env = makeDeps();
    app = await buildServer(env.deps);
  });
  after(() => app.close());

  test('every route answers 200 with the documented shape', async () => {
    for (const r of VALID) {
      const res = await inject(app, r);
      assert.equal(res.statusCode, 200, `${r.method} ${r.url}: ${res.body}`);
      const shape = SHAPES[`${r.method} ${r.route}`];
      if (shape) {
        const body = res.json();
        assert.ok(Value.Check(shape, body), `${r.method} ${r.route} shape: ${[...Value.Errors(shape, body)].slice(0, 3).map((e) => `${e.path} ${e.message}`).join('; ')}\n${res.body}`);
      }
    }
  });

  test('order record maps every field per the spec', async () => {
    const res = await app.inject({ method: 'GET', url: `/api/order/${newOrderId(1)}`, headers: AUTH });
    const o = res.json();
    assert.deepEqual(Object.keys(o).sort(), [
      'cashQuantity', 'createdAt', 'fee', 'filledAvgPrice', 'group', 'id', 'instrument', 'limitPrice', 'quantity', 'realizedPnL', 'rejectedReason',
      'side', 'status', 'stopPrice', 'triggeredAt', 'type', 'unFilledQuantity', 'updatedAt', 'user',
    ]);
    assert.equal(o.quantity, 0.1);
    assert.equal(o.limitPrice, 100000);
    assert.equal(o.stopPrice, null);
    assert.deepEqual(o.fee, [{ coin: 'usdt', quantity: 0 }]);
    assert.equal(o.createdAt, new Date(NOW - 100).toISOString());
    const opened = (await app.inject({ method: 'GET', url: '/api/order/opened', headers: AUTH })).json();
    assert.deepEqual(Object.keys(opened[0]).sort(), [
      'cashQuantity', 'createdAt', 'fee', 'id', 'instrument', 'limitPrice', 'quantity', 'side', 'status', 'stopPrice', 'triggeredAt', 'type',
      'unFilledQuantity', 'updatedAt', 'user',
    ]);
  });

  test('TpSl quantity and price are strings; order list carries tpslList', async () => {
    const res = (await app.inject({ method: 'GET', url: '/api/order?withTpSL=yes', headers: AUTH })).json();
    assert.equal(res.next, 'cursor-2');
    const pos = (await app.inject({ method: 'GET', url: '/api/position?withTpSL=yes', headers: AUTH })).json();
    assert.equal(pos.list[0].tpslList[0].price, '110000');
    assert.equal(pos.list[0].tpslList[0].quantity, '0');
    assert.equal(pos.list[0].fundingRate, -0.01);
  });

  test('401 without, with bad, and with expired credentials; x-api-key accepted', async () => {
    for (const r of VALID.filter((v) => v.auth)) {
      assertError(await inject(app, r, {}), 401, 'UNAUTHORIZED');
      assertError(await inject(app, r, { authorization: 'Bearer nope' }), 401, 'UNAUTHORIZED');
    }
    const ok = await app.inject({ method: 'GET', url: '/api/user/me', headers: { 'x-api-key': API_KEY } });
    assert.equal(ok.statusCode, 200);
    assertError(await app.inject({ method: 'GET', url: '/api/user/me', headers: { 'x-api-key': 'bad' } }), 401, 'UNAUTHORIZED');
  });

  test('validation errors: missing field, wrong type, extra field → 400, submit never called', async () => {
    const before = env.calls.length;
    const base = VALID.find((r) => r.route === '/api/v2/order/limit')!.body as Record<string, unknown>;
    const { quantity: _q, ...missing } = base;
    const cases: unknown[] = [
      missing,
      { ...base, quantity: true },
      { ...base, leverage: '10' }, // no coercion in bodies
      { ...base, leverage: 301 },
      { ...base, side: 'buy' },
      { ...base, extra: 1 },
      { ...base, smp: { smp: true, smpId: 'x', more: 1 } },
      { ...base, id: 'not-an-id' },
      { ...base, quantity: '1,5' },
      [base],
    ];
    for (const payload of cases) {
      const res = await app.inject({ method: 'POST', url: '/api/v2/order/limit', headers: AUTH, payload: payload as object });
      assertError(res, 400);
    }
    assertError(await app.inject({ method: 'POST', url: '/api/v2/order/limit', headers: { ...AUTH, 'content-type': 'text/plain' }, payload: 'text' }), 400);
    assert.equal(env.calls.length, before);
  });

  test('amount rules: increments, bounds, rounding to zero, leverage over the instrument max', async () => {
    const base = VALID.find((r) => r.route === '/api/v2/order/limit')!.body as Record<string, unknown>;
    const before = env.calls.length;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ quantity: '0.00005' }, 'INVALID_QUANTITY'],
      [{ quantity: '0.000000001' }, 'INVALID_QUANTITY'],
      [{ quantity: -1 }, 'INVALID_QUANTITY'],
      [{ quantity: '5000' }, 'INVALID_QUANTITY'],
      [{ limitPrice: '100000.05' }, 'INVALID_LIMIT_PRICE'],
      [{ limitPrice: 0 }, 'INVALID_LIMIT_PRICE'],
      [{ limitPrice: '1e30' }, 'INVALID_LIMIT_PRICE'],
      [{ instrument: 'NOPE' }, 'INVALID_INSTRUMENT'],
      [{ chainId: '1' }, 'INVALID_CHAIN_ID'],
      [{ tpsl: [{ type: 'take-profit', side: 'SELL', quantity: 0, price: '0.05' }] }, 'INVALID_PRICE'],
    ];
    for (const [over, code] of cases) {
      const res = await app.inject({ method: 'POST', url: '/api/v2/order/limit', headers: AUTH, payload: { ...base, ...over } });
      assertError(res, 400, code);
    }
    assert.equal(env.calls.length, before);
    // 8-dp half-up rounding: 0.100000004 rounds to 0.1, a valid multiple.
    const ok = await app.inject({ method: 'POST', url: '/api/v2/order/limit', headers: AUTH, payload: { ...base, quantity: '0.100000004' } });
    assert.equal(ok.statusCode, 200, ok.body);
  });

  test('body defaults apply when a field is absent (leverage 1, GTC; market IOC) and never override a sent value', async () => {
    const base = VALID.find((r) => r.route === '/api/v2/order/limit')!.body as Record<string, unknown>;
    const { leverage: _l, timeInForce: _t, ...bare } = base;
    env.verifier.calls.length = 0;
    const before = env.calls.length;
    const ok = await app.inject({ method: 'POST', url: '/api/v2/order/limit', headers: AUTH, payload: bare });
    assert.equal(ok.statusCode, 200, ok.body);
    const placed = env.calls[before] as { kind: string; order: { leverage: number; timeInForce: string } };
    assert.equal(placed.order.leverage, 1);
    assert.equal(placed.order.timeInForce, 'GTC');
    assert.equal(env.verifier.calls[0].message.leverage, 1n);
    const sent = await app.inject({ method: 'POST', url: '/api/v2/order/limit', headers: AUTH, payload: { ...bare, id: newOrderId(77), leverage: 5, timeInForce: 'IOC' } });
    assert.equal(sent.statusCode, 200, sent.body);
    const placed2 = env.calls[before + 1] as { order: { leverage: number; timeInForce: string } };
    assert.deepEqual([placed2.order.leverage, placed2.order.timeInForce], [5, 'IOC']);
    const market = VALID.find((r) => r.route === '/api/v2/order/market')!.body as Record<string, unknown>;
    const { timeInForce: _mt, ...bareMarket } = market;
    const m = await app.inject({ method: 'POST', url: '/api/v2/order/market', headers: AUTH, payload: { ...bareMarket, id: newOrderId(78) } });
    assert.equal(m.statusCode, 200, m.body);
    assert.equal((env.calls[before + 2] as { order: { timeInForce: string } }).order.timeInForce, 'IOC');
  });

  test('signature: message built per the wire contract; mismatch refused; wallet compared case-insensitively', async () => {
    const base = VALID.find((r) => r.route === '/api/v2/order/limit')!.body as Record<string, unknown>;
    env.verifier.calls.length = 0;
    const ok = await app.inject({ method: 'POST', url: '/api/v2/order/limit', headers: AUTH, payload: { ...base, quantity: 0.1, limitPrice: '100000.1' } });
    assert.equal(ok.statusCode, 200, ok.body);
    const call = env.verifier.calls[0];
    assert.equal(call.type, 'New limit order');
    assert.equal(call.chainId, CHAIN);
    assert.deepEqual(Object.keys(call.message), ['id', 'instrument', 'side', 'leverage', 'quantity', 'limitPrice', 'chainId']);
    assert.equal(call.message.quantity, 10_000_000n);
    assert.equal(call.message.limitPrice, 10_000_010_000_000n);
    assert.equal(call.message.leverage, 10n);
    assert.equal(call.message.chainId, 16182n);

    const before = env.calls.length;
    const signedRoutes = VALID.filter((r) => !r.url.startsWith('/auth/') && r.body && typeof r.body === 'object' && !Array.isArray(r.body) && 'signature' in (r.body as object));
    assert.ok(signedRoutes.length >= 8);
    for (const r of signedRoutes) {
      const res = await inject(app, { ...r, body: { ...(r.body as object), signature: OTHER_SIG } });
      assertError(res, 400, 'INVALID_SIGNATURE');
      const junk = await inject(app, { ...r, body: { ...(r.body as object), signature: '0x1234' } });
      assertError(junk, 400, 'INVALID_SIGNATURE');
    }
    assert.equal(env.calls.length, before);

    // Replace and withdraw sign with the server chain id and their own field lists.
    env.verifier.calls.length = 0;
    await inject(app, VALID.find((r) => r.route === '/api/transfer/pf/withdraw')!);
    assert.deepEqual(env.verifier.calls[0].message, { recipient: '0x' + '12'.repeat(20), amount: 1_012_345_678n }); // rounded down
    env.verifier.calls.length = 0;
    await inject(app, VALID.find((r) => r.route === '/api/order/{orderId}/stop-limit')!);
    assert.deepEqual(Object.keys(env.verifier.calls[0].message), ['orderId', 'quantity', 'limitPrice', 'stopPrice']);
    assert.equal(env.verifier.calls[0].chainId, CHAIN);
  });

  test('mass-limit: per-item results, bad signature and stale order-id date fail per item', async () => {
    const item = (n: number, over: Record<string, unknown> = {}) => ({
      instrument: 'BTCUSDT', side: 'BUY', quantity: '0.1', limitPrice: 100000, signature: GOOD_SIG, chainId: CHAIN, id: newOrderId(n), ...over,
    });
    const stale = newOrderId(3, NOW - 3 * 86_400_000);
    const res = await app.inject({
      method: 'POST', url: '/api/v2/order/mass-limit/BTCUSDT', headers: AUTH,
      payload: [item(1), item(2, { signature: OTHER_SIG }), item(3, { id: stale }), item(4, { instrument: 'ETHUSDT' })],
    });
    assert.equal(res.statusCode, 200, res.body);
    const out = res.json();
    assert.deepEqual(out[0], { orderId: newOrderId(1), success: true });
    assert.equal(out[1].success, false);
    assert.match(out[1].failReason, /signature/i);
    assert.deepEqual(out[2], { orderId: stale, success: false, failReason: 'Invalid order ID date' });
    assert.equal(out[3].success, false);
    const last = env.calls.at(-1)!;
    assert.equal(last.kind, 'order.placeBatch');
    assert.equal((last as { orders: unknown[] }).orders.length, 1);
  });

  test('batch bounds', async () => {
    const item = { instrument: 'BTCUSDT', side: 'BUY', quantity: '0.1', limitPrice: 100000, signature: GOOD_SIG, chainId: CHAIN, id: newOrderId(1) };
    assertError(await app.inject({ method: 'POST', url: '/api/v2/order/mass-limit/BTCUSDT', headers: AUTH, payload: [] }), 400, 'VALIDATION_ERROR');
    assertError(await app.inject({ method: 'POST', url: '/api/v2/order/mass-limit/BTCUSDT', headers: AUTH, payload: Array(21).fill(item) }), 400, 'VALIDATION_ERROR');
    const rep = { orderId: newOrderId(1), quantity: '0.2', limitPrice: '100000', signature: GOOD_SIG };
    assertError(await app.inject({ method: 'PUT', url: '/api/order/limit/BTCUSDT', headers: AUTH, payload: [] }), 400, 'VALIDATION_ERROR');
    assertError(await app.inject({ method: 'PUT', url: '/api/order/limit/BTCUSDT', headers: AUTH, payload: Array(51).fill(rep) }), 400, 'VALIDATION_ERROR');
    const fifty = await app.inject({ method: 'PUT', url: '/api/order/limit/BTCUSDT', headers: AUTH, payload: Array(50).fill(rep) });
    assert.equal(fifty.statusCode, 200);
    assertError(await app.inject({ method: 'POST', url: '/api/order/mass-cancel-by-id', headers: AUTH, payload: { orderIds: [] } }), 400, 'VALIDATION_ERROR');
    assertError(await app.inject({ method: 'POST', url: '/api/v2/order/mass-limit/NOPE', headers: AUTH, payload: [item] }), 404, 'INSTRUMENT_NOT_FOUND');
  });

  test('order ids: bad formats and dates refused', async () => {
    assertError(await app.inject({ method: 'GET', url: '/api/order/xyz', headers: AUTH }), 400, 'VALIDATION_ERROR');
    assertError(await app.inject({ method: 'DELETE', url: '/api/order/00001:zz', headers: AUTH }), 400, 'VALIDATION_ERROR');
    assertError(await app.inject({ method: 'GET', url: `/api/order/${newOrderId(99)}`, headers: AUTH }), 404, 'ORDER_NOT_FOUND');
    assertError(await app.inject({ method: 'GET', url: `/api/order/${newOrderId(99)}/fill`, headers: AUTH }), 404, 'ORDER_NOT_FOUND');
    const base = VALID.find((r) => r.route === '/api/v2/order/limit')!.body as Record<string, unknown>;
    const stale = await app.inject({ method: 'POST', url: '/api/v2/order/limit', headers: AUTH, payload: { ...base, id: newOrderId(5, NOW - 5 * 86_400_000) } });
    assert.equal(assertError(stale, 400, 'INVALID_ORDER_ID').message, 'Invalid order ID date');
    const v1 = await app.inject({ method: 'POST', url: '/api/v2/order/limit', headers: AUTH, payload: { ...base, id: '123e4567-e89b-42d3-a456-426614174000' } });
    assertError(v1, 400, 'VALIDATION_ERROR');
  });

  test('engine refusals keep their status/code/message', async () => {
    assertError(await app.inject({ method: 'DELETE', url: `/api/order/${newOrderId(42)}`, headers: AUTH }), 404, 'ORDER_NOT_FOUND');
    const refusing = makeDeps({ submit: async () => ({ reply: { ok: false, error: { status: 422, code: 'INSUFFICIENT_BALANCE', message: 'Insufficient available balance' } }, events: [] }) });
    const app2 = await buildServer(refusing.deps);
    const r = VALID.find((v) => v.route === '/api/v2/order/market')!;
    const err = assertError(await inject(app2, r), 422, 'INSUFFICIENT_BALANCE');
    assert.equal(err.message, 'Insufficient available balance');
    await app2.close();
  });

  test('transport errors use the error shape: 413, invalid JSON, 415, unknown route', async () => {
    const big = JSON.stringify({ orderIds: Array(30_000).fill(newOrderId(1)) });
    assert.ok(big.length > 256 * 1024);
    assertError(await app.inject({ method: 'POST', url: '/api/order/mass-cancel-by-id', headers: { ...AUTH, 'content-type': 'application/json' }, payload: big }), 413, 'PAYLOAD_TOO_LARGE');
    assertError(await app.inject({ method: 'POST', url: '/api/order/mass-cancel', headers: { ...AUTH, 'content-type': 'application/json' }, payload: '{"instrument":' }), 400, 'INVALID_JSON');
    assertError(await app.inject({ method: 'POST', url: '/api/order/mass-cancel', headers: { ...AUTH, 'content-type': 'application/json' }, payload: '{"__proto__":{"x":1},"instrument":"BTCUSDT"}' }), 400);
    // Poisoning spelled with escapes, and the constructor key, are refused as by Fastify's own parser.
    const json = (payload: string) => app.inject({ method: 'POST', url: '/api/order/mass-cancel', headers: { ...AUTH, 'content-type': 'application/json' }, payload });
    const invalid = await json('{"instrument":');
    for (const payload of ['{"\\u005f_proto__":{"x":1},"instrument":"BTCUSDT"}', '{"constructor":{"prototype":{"x":1}},"instrument":"BTCUSDT"}', '{"c\\u006fnstructor":{"prototype":{"x":1}},"instrument":"BTCUSDT"}']) {
      const r = await json(payload);
      assert.equal(r.statusCode, 400, payload);
      assert.equal(r.json().error.code, invalid.json().error.code, payload);
      assert.equal(r.json().error.message, invalid.json().error.message, payload);
    }
    // A body with a BOM goes through the default parser too (which strips it).
    assert.notEqual((await json('\ufeff{"instrument":"BTCUSDT"}')).statusCode, 400);
    assertError(await app.inject({ method: 'POST', url: '/api/order/mass-cancel', headers: { ...AUTH, 'content-type': 'application/xml' }, payload: '<a/>' }), 415);
    assertError(await app.inject({ method: 'GET', url: '/api/nothing' }), 404, 'NOT_FOUND');
  });

  test('router errors use the error shape too: a malformed percent-escape (400) and an over-long path parameter (414)', async () => {
    for (const url of ['/api/order/%ZZ', '/api/order/%ZZ/fill', '/api/market/%E0%A4%A/deep', '/api/tpsl/BTCUSDT/%zz']) {
      assertError(await app.inject({ method: url.includes('tpsl') ? 'DELETE' : 'GET', url, headers: AUTH }), 400, 'INVALID_URL');
    }
    const long = 'a'.repeat(500);
    for (const [method, url] of [['GET', `/api/order/${long}`], ['DELETE', `/api/order/${long}`], ['GET', `/api/market/${long}/deep`]] as const) {
      assertError(await app.inject({ method, url, headers: AUTH }), 414, 'URI_TOO_LONG');
    }
  });

  test('market data: depth grouping, best level, bounds', async () => {
    const best = (await app.inject({ method: 'GET', url: '/api/market/BTCUSDT/deep?marketLevel=1' })).json();
    assert.deepEqual(best, { t: NOW - 2, asks: [{ price: 100001, quantity: 1 }], bids: [{ price: 99999, quantity: 1 }] });
    assertError(await app.inject({ method: 'GET', url: '/api/market/BTCUSDT/deep?roundPrice=5' }), 400, 'VALIDATION_ERROR');
    assertError(await app.inject({ method: 'GET', url: '/api/market/BTCUSDT/deep?maxLevel=1001' }), 400, 'VALIDATION_ERROR');
    assertError(await app.inject({ method: 'GET', url: '/api/market/NOPE/deep' }), 404, 'INSTRUMENT_NOT_FOUND');
    const inst = (await app.inject({ method: 'GET', url: '/api/market/instrument?fields=metrics' })).json();
    assert.ok(Value.Check(Type.Array(R.InstrumentMetricsRecord), inst));
    assert.equal(inst[0].maintenanceMargin['50000'].percent, 0.5);
    assert.equal(inst[0].leverageLimit['300'], 50000);
    const plain = (await app.inject({ method: 'GET', url: '/api/market/instrument' })).json();
    assert.equal(plain[0].fundingRate, undefined);
  });

  test('refresh: empty JSON body accepted; inactive refresh token → 401', async () => {
    const ok = await app.inject({ method: 'POST', url: '/auth/refresh', headers: { authorization: `Bearer ${REFRESH}`, 'content-type': 'application/json' } });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().token.accessToken, ACCESS);
    assertError(await app.inject({ method: 'POST', url: '/auth/refresh', headers: { authorization: 'Bearer old' } }), 401, 'UNAUTHORIZED');
    assertError(await app.inject({ method: 'POST', url: '/auth/refresh' }), 401, 'UNAUTHORIZED');
  });

  test('logout: the session token in the bearer header, empty JSON body accepted; no or a foreign token → 401', async () => {
    const res = await app.inject({ method: 'POST', url: '/auth/logout', headers: { authorization: `Bearer ${ACCESS}`, 'content-type': 'application/json' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {});
    assertError(await app.inject({ method: 'POST', url: '/auth/logout', headers: { authorization: 'Bearer old' } }), 401, 'invalid_token');
    assertError(await app.inject({ method: 'POST', url: '/auth/logout' }), 401, 'UNAUTHORIZED');
  });

  test('OpenAPI document lists every route; docs served', async () => {
    const res = await app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    assert.match(doc.openapi, /^3\./);
    for (const r of [...VALID, { method: 'POST', route: '/auth/refresh' } as Req, { method: 'POST', route: '/auth/logout' } as Req]) {
      assert.ok(doc.paths[r.route]?.[r.method.toLowerCase()], `missing ${r.method} ${r.route}`);
    }
    const docs = await app.inject({ method: 'GET', url: '/docs/' });
    assert.ok(docs.statusCode < 400, `docs status ${docs.statusCode}`);
  });

  test('OpenAPI document describes every real-time channel with a payload schema', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const channels = doc['x-realtime']?.channels as Record<string, { payload: { $ref: string }; recoverable: boolean; subscribeData: string }>;
    assert.ok(channels, 'x-realtime.channels');
    const expected = [
      ...PUBLIC_CHANNELS, `orderBook-{instrument}-{${ORDER_BOOK_GROUPINGS.join('|')}}`, 'orderBook-{instrument}-best', 'recent-trade-{instrument}', 'trade-{instrument}',
      ...USER_CHANNELS.map((n) => `${n}-{exchangeId}`),
    ].map((n) => `{env}:${n}`);
    assert.deepEqual(Object.keys(channels).sort(), expected.sort());
    for (const [name, c] of Object.entries(channels)) {
      const ref = c.payload.$ref.replace('#/components/schemas/', '');
      assert.equal(doc.components.schemas[ref]?.type, 'object', `${name}: payload ${c.payload.$ref}`);
      const user = USER_CHANNELS.some((u) => name === `{env}:${u}-{exchangeId}`);
      assert.equal(c.recoverable, user || name === '{env}:funding-rate', `${name} recoverable`);
      assert.equal(c.subscribeData !== 'none', user, `${name} subscribe data`);
    }
    // A payload the spec leaves open is described field by field (coin-price: the coin with its index price).
    assert.ok(doc.components.schemas.ChannelCoinPrice.properties.price);
  });

  test('auth routes can run on a separate instance', async () => {
    const apiOnly = await buildServer(env.deps, { includeAuthRoutes: false });
    assertError(await apiOnly.inject({ method: 'GET', url: '/auth/nonce' }), 404, 'NOT_FOUND');
    const authOnly = await buildAuthServer(env.deps);
    assert.equal((await authOnly.inject({ method: 'GET', url: '/auth/nonce' })).json().nonce, 'abcdefgh12345678');
    assertError(await authOnly.inject({ method: 'GET', url: '/api/user/me', headers: AUTH }), 404);
    await apiOnly.close();
    await authOnly.close();
  });
});
