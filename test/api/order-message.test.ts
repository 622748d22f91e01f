// The limit-order route signs over amounts it has already parsed; they must be exactly what the wire
// contract's message (round(v, 8) × 1e8 of the raw client value) holds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseUnits } from '../../src/domain/fixed.js';
import { limitOrderMessage, limitOrderMessageOfUnits } from '../../src/api/signatures.js';

test('a limit order message from parsed units equals the one from the raw decimals', () => {
  const values: Array<string | number> = [
    '0.0001', '1', '100000.1', '99999.9', ' 42.5 ', '+3.25', '1e-4', '1.5E3', '0.000000015', '0.000000014', '.5', '7.',
    0.0001, 100000.1, 1e-8, 12345678.12345678, '90071992.54740991', // the largest amount the gateway accepts
  ];
  const b = { id: '20410:0123456789abcdef0123456789', instrument: 'BTCUSDT', side: 'BUY' };
  for (const quantity of values) {
    for (const limitPrice of ['100000.1', 0.1, '5e2']) {
      const expected = limitOrderMessage({ ...b, leverage: 10, quantity, limitPrice }, '16182');
      const actual = limitOrderMessageOfUnits(b, 10, parseUnits(quantity), parseUnits(limitPrice), '16182');
      assert.deepEqual(actual, expected, `${JSON.stringify(quantity)} / ${JSON.stringify(limitPrice)}`);
      assert.deepEqual(Object.keys(actual), Object.keys(expected));
    }
  }
});
