// The double-precision fast path of `notional` must agree with exact bigint arithmetic everywhere.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { mulDivHalfUp, notional, notionalExact, SCALE_N } from '../../src/domain/fixed.js';

const exact = (q: number, p: number) => mulDivHalfUp(BigInt(q), BigInt(p), SCALE_N);

test('notional equals exact bigint rounding over the whole safe-integer range', () => {
  fc.assert(fc.property(fc.maxSafeNat(), fc.maxSafeNat(), (q, p) => notional(q, p) === exact(q, p)), { numRuns: 20_000 });
});

test('notional equals exact bigint rounding for realistic sizes and prices, including half-way cases', () => {
  fc.assert(fc.property(fc.integer({ min: 0, max: 1e12 }), fc.integer({ min: 0, max: 1e14 }), (q, p) => notional(q, p) === exact(q, p)), { numRuns: 20_000 });
  // q × p / 1e8 ending exactly in .5 rounds up; just below rounds down.
  assert.equal(notional(1, 50_000_000), 1n);
  assert.equal(notional(1, 49_999_999), 0n);
  assert.equal(notional(3, 50_000_000), 2n);
});

test('the fast path declines what it cannot do exactly, and the result is still exact', () => {
  const big = Number.MAX_SAFE_INTEGER;
  assert.equal(notionalExact(big, big), -1);
  assert.equal(notional(big, big), exact(big, big));
  assert.equal(notionalExact(-5, 10), -1);
  assert.equal(notional(-5, 100_000_000), -5n);
});
