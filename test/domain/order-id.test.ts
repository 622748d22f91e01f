import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { dayNumber, orderIdDay, orderIdPrefix } from '../../src/domain/order-id.js';

test('orderIdDay reads the DDDDD prefix, and reads any other text as Number(first five characters) does', () => {
  assert.equal(orderIdDay('00486:8baf2e5c328f40f9b0af1a3336'), 486);
  assert.equal(orderIdDay(`${orderIdPrefix(Date.UTC(2026, 10, 22))}:${'a'.repeat(26)}`), dayNumber(Date.UTC(2026, 10, 22)));
  const reference = (id: string) => Number(id.slice(0, 5));
  fc.assert(fc.property(fc.string({ maxLength: 12 }), (s) => Object.is(orderIdDay(s), reference(s))));
  fc.assert(fc.property(fc.stringMatching(/^[0-9 .e+-]{0,7}/), (s) => Object.is(orderIdDay(s), reference(s))));
});
