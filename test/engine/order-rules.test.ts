/** order-rules.ts on its own: each static check of an order, against a bare market and state (no engine). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseUnits as U } from '../../src/domain/fixed.js';
import { DEMO_INSTRUMENTS } from '../../src/domain/instrument.js';
import { orderIdPrefix } from '../../src/domain/order-id.js';
import type { PlaceOrderInput } from '../../src/engine/commands.js';
import { compileInstrument } from '../../src/engine/instrument-rules.js';
import { Market } from '../../src/engine/market.js';
import { OrderIdIndex } from '../../src/engine/order-id-index.js';
import { validateOrder, validateTpSlInput, validPrice } from '../../src/engine/order-rules.js';
import type { EngineState } from '../../src/engine/state.js';
import { T0 } from './harness.js';

const btc = new Market(compileInstrument(DEMO_INSTRUMENTS[0]), T0);
const state = { orderIds: new OrderIdIndex() } as unknown as EngineState;
const id = (n: number, at = T0) => `${orderIdPrefix(at)}:${n.toString(16).padStart(26, '0')}`;
const limit = (over: Partial<PlaceOrderInput> = {}): PlaceOrderInput => ({
  id: id(1), instrument: 'BTCUSDT', side: 'BUY', type: 'LIMIT', timeInForce: 'GTC', leverage: 10, quantity: U('0.01'), limitPrice: U('100000'), ...over,
});
const code = (input: PlaceOrderInput, userId = 1) => {
  const r = validateOrder(state, T0, userId, input, btc);
  return r === null ? null : r.ok ? 'ok' : r.error.code;
};

test('a well-formed limit, market and stop-limit order passes', () => {
  assert.equal(code(limit()), null);
  assert.equal(code({ id: id(2), instrument: 'BTCUSDT', side: 'SELL', type: 'MARKET', timeInForce: 'IOC', leverage: 5, cashQuantity: U('50') }), null);
  assert.equal(code(limit({ type: 'STOP_LIMIT', timeInForce: 'DAY', stopPrice: U('101000') })), null);
});

test('each static rule has its refusal code', () => {
  const cases: Array<[Partial<PlaceOrderInput> | null, string, number?]> = [
    [{}, 'INVALID_USER', 0],
    [{ id: 'nope' }, 'INVALID_ORDER_ID'],
    [{ id: id(1, T0 - 3 * 86_400_000) }, 'INVALID_ORDER_ID'],
    [{ side: 'LONG' as never }, 'INVALID_SIDE'],
    [{ leverage: 301 }, 'INVALID_LEVERAGE'],
    [{ leverage: 2.5 }, 'INVALID_LEVERAGE'],
    [{ timeInForce: 'GTD' as never }, 'INVALID_TIME_IN_FORCE'],
    [{ type: 'STOP_LIMIT', timeInForce: 'IOC', stopPrice: U('1') }, 'INVALID_TIME_IN_FORCE'],
    [{ quantity: 0 }, 'INVALID_QUANTITY'],
    [{ quantity: U('0.00015') }, 'INVALID_QUANTITY'],
    [{ quantity: U('1001') }, 'INVALID_QUANTITY'],
    [{ limitPrice: U('100000.05') }, 'INVALID_PRICE'],
    [{ limitPrice: U('0.5') }, 'INVALID_PRICE'],
    [{ quantity: U('0.0001'), limitPrice: U('5') }, 'INVALID_VOLUME'],
    [{ type: 'MARKET', timeInForce: 'GTC', cashQuantity: U('10') }, 'INVALID_TIME_IN_FORCE'],
    [{ type: 'MARKET', timeInForce: 'IOC', cashQuantity: -1 }, 'INVALID_CASH_QUANTITY'],
    [{ type: 'MARKET', timeInForce: 'IOC', cashQuantity: U('0.5') }, 'INVALID_VOLUME'],
    [{ type: 'ICEBERG' as never }, 'INVALID_ORDER_TYPE'],
    [{ postOnly: true, type: 'MARKET', timeInForce: 'IOC', cashQuantity: U('10') }, 'INVALID_POST_ONLY'],
    [{ smp: { smp: 'yes' } as never }, 'INVALID_SMP'],
    [{ tpsl: [{ type: 'take-profit', side: 'BUY', quantity: 0, price: U('110000') }] }, 'INVALID_TPSL'],
    [{ tpsl: [{ type: 'trailing' as never, side: 'SELL', quantity: 0, price: U('110000') }] }, 'INVALID_TPSL'],
  ];
  for (const [over, expected, user] of cases) assert.equal(code(limit(over ?? {}), user ?? 1), expected, JSON.stringify(over));
  // A reduce-only order may be below the minimum quantity and volume.
  assert.equal(code(limit({ reduceOnly: true, quantity: U('0.0001'), limitPrice: U('5') })), null);
});

test('an id the user has used is refused; another user may use it', () => {
  const used = new OrderIdIndex();
  const s = { orderIds: used } as unknown as EngineState;
  used.retire(7, id(9), Number(orderIdPrefix(T0)));
  assert.equal((validateOrder(s, T0, 7, limit({ id: id(9) }), btc) as { error: { code: string } }).error.code, 'DUPLICATE_ORDER_ID');
  assert.equal(validateOrder(s, T0, 8, limit({ id: id(9) }), btc), null);
});

test('TpSl inputs and prices on the grid', () => {
  const r = btc.rules;
  assert.equal(validateTpSlInput(r, 'stop-loss', 'SELL', 0, U('90000')), null);
  assert.equal(validateTpSlInput(r, 'stop-loss', 'SELL', U('0.00005'), U('90000'))?.ok, false);
  assert.equal(validateTpSlInput(r, 'stop-loss', 'SELL', U('0.001'), U('90000.01'))?.ok, false);
  assert.equal(validPrice(r, U('1')), true);
  assert.equal(validPrice(r, U('10000000.1')), false);
  assert.equal(validPrice(r, '100' as unknown), false);
});
