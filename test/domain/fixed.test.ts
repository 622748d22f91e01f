// Hand-written fast paths of the fixed-point helpers must agree with the exact bigint / text arithmetic everywhere.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  applyRateCeil, ceilDivUnits, formatUnits, mulDivHalfUp, notional, notionalExact, productParts, productScratch, quotientScratch, rateCeilUnits,
  scaledQuotient, SCALE_N, toWireNumber,
} from '../../src/domain/fixed.js';

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

test('productParts splits quantity × price exactly into whole units and the remainder (or declines)', () => {
  const check = (q: number, p: number) => {
    const raw = BigInt(q) * BigInt(p);
    if (!productParts(q, p)) return raw / SCALE_N > BigInt(Number.MAX_SAFE_INTEGER) || q * Math.floor(p / 1e8) > Number.MAX_SAFE_INTEGER || q * (p % 1e8) > Number.MAX_SAFE_INTEGER;
    return BigInt(productScratch.units) === raw / SCALE_N && BigInt(productScratch.frac) === raw % SCALE_N
      && Number.isSafeInteger(productScratch.units) && productScratch.frac >= 0 && productScratch.frac < 1e8;
  };
  fc.assert(fc.property(fc.maxSafeNat(), fc.maxSafeNat(), check), { numRuns: 20_000 });
  fc.assert(fc.property(fc.integer({ min: 0, max: 1e12 }), fc.integer({ min: 0, max: 1e14 }), check), { numRuns: 20_000 });
  // Prices just below a multiple of 1e8, where the division's floor may be one off.
  fc.assert(fc.property(fc.integer({ min: 0, max: 1e10 }), fc.integer({ min: 1, max: 90_000_000 }), (q, k) => check(q, k * 1e8 - 1)), { numRuns: 5_000 });
  assert.equal(productParts(-1, 5), false);
});

test('ceilDivUnits and rateCeilUnits equal the bigint ceilings', () => {
  const ceil = (a: bigint, d: bigint) => (a <= 0n ? 0n : (a + d - 1n) / d);
  fc.assert(fc.property(fc.integer({ min: -10, max: 2 ** 52 }), fc.integer({ min: 1, max: 300 }), (a, d) => BigInt(ceilDivUnits(a, d)) === ceil(BigInt(a), BigInt(d))), { numRuns: 20_000 });
  fc.assert(fc.property(fc.maxSafeNat(), fc.integer({ min: 0, max: 100_000_000 }), (a, rate) => {
    const fast = rateCeilUnits(a, rate);
    return fast === -1 ? rate >= 67_108_864 || BigInt(a) * BigInt(rate) / SCALE_N > BigInt(Number.MAX_SAFE_INTEGER) / 2n : BigInt(fast) === applyRateCeil(BigInt(a), rate);
  }), { numRuns: 20_000 });
  assert.equal(rateCeilUnits(100_000_000, 20_000), 20_000);
  assert.equal(rateCeilUnits(1, 20_000), 1);
});

test('scaledQuotient divides a × 1e8 by b exactly (or declines)', () => {
  const check = (a: number, b: number) => {
    const ok = scaledQuotient(a, b);
    const p = BigInt(a) * SCALE_N;
    if (!ok) return a > 2 ** 50 || b > 9e11 || BigInt(a) / BigInt(b) >= 90_000_000n;
    return BigInt(quotientScratch.q) === p / BigInt(b) && BigInt(quotientScratch.r) === p % BigInt(b);
  };
  fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 50 }), fc.integer({ min: 1, max: 9e11 }), check), { numRuns: 20_000 });
  fc.assert(fc.property(fc.integer({ min: 0, max: 1e14 }), fc.integer({ min: 1, max: 1e10 }), check), { numRuns: 20_000 });
  fc.assert(fc.property(fc.maxSafeNat(), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), check), { numRuns: 5_000 });
});
