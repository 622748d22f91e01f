// Hand-written fast paths of the fixed-point helpers must agree with the exact bigint / text arithmetic everywhere.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { formatUnits, mulDivHalfUp, notional, notionalExact, SCALE_N, toWireNumber } from '../../src/domain/fixed.js';

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

test('toWireNumber divides exactly: the same double as parsing the 8-decimal text', () => {
  const viaText = (v: number | bigint) => Number(formatUnits(v));
  fc.assert(fc.property(fc.maxSafeInteger(), (v) => Object.is(toWireNumber(v), viaText(v)) && Object.is(toWireNumber(BigInt(v)), viaText(v))), { numRuns: 20_000 });
  fc.assert(fc.property(fc.integer({ min: -1e12, max: 1e12 }), (v) => toWireNumber(v) === viaText(v)), { numRuns: 20_000 });
  const huge = 10n ** 30n + 12_345_678n;
  assert.equal(toWireNumber(huge), viaText(huge));
  assert.equal(toWireNumber(12_345_678_901), 123.45678901);
});
