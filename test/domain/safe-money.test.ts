// The engine keeps money as safe-integer numbers where it provably fits and as bigints where it may not
// (src/domain/fixed.ts: safeOf, addSafe, mulDivHalfUpSafe). These properties hold the number path to exact
// bigint arithmetic written here, with values on both sides of 2^53: the same integer, or NaN (never a
// rounded number) when a result would not be a safe integer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { addSafe, mulDivHalfUpSafe, safeOf } from '../../src/domain/fixed.js';

const MAX = BigInt(Number.MAX_SAFE_INTEGER);
const TWO_53 = 2n ** 53n;
const isSafe = (v: bigint): boolean => v <= MAX && v >= -MAX;

/** Integers within `spread` of ±2^53 (either side), or anywhere below it. */
const nearBoundary = (spread: bigint) =>
  fc.oneof(
    fc.bigInt({ min: TWO_53 - spread, max: TWO_53 + spread }),
    fc.bigInt({ min: -TWO_53 - spread, max: -TWO_53 + spread }),
    fc.bigInt({ min: -MAX, max: MAX }),
  );
const safeNearBoundary = nearBoundary(1n << 20n).filter(isSafe);

/** Round half away from zero of p / d (d > 0), by the schoolbook rule on |p|: ⌊(2|p| + d) / 2d⌋. */
function halfAwayFromZero(p: bigint, d: bigint): bigint {
  const m = p < 0n ? -p : p;
  const q = (2n * m + d) / (2n * d);
  return p < 0n ? -q : q;
}

test('safeOf is the number exactly when the amount is a safe integer, NaN beyond', () => {
  fc.assert(
    fc.property(nearBoundary(1n << 12n), (v) => {
      const n = safeOf(v);
      if (isSafe(v)) assert.equal(BigInt(n), v);
      else assert.ok(Number.isNaN(n), `${v} gave ${n}`);
    }),
    { numRuns: 5000 },
  );
  for (const v of [MAX, -MAX]) assert.equal(BigInt(safeOf(v)), v);
  for (const v of [MAX + 1n, -MAX - 1n, TWO_53 + 1n, 2n ** 80n]) assert.ok(Number.isNaN(safeOf(v)));
});

test('addSafe gives the exact sum while it is a safe integer, NaN (never a rounded sum) past 2^53', () => {
  fc.assert(
    fc.property(safeNearBoundary, safeNearBoundary, (a, b) => {
      const s = addSafe(Number(a), Number(b));
      if (isSafe(a + b)) assert.equal(BigInt(s), a + b);
      else assert.ok(Number.isNaN(s), `${a} + ${b} gave ${s}`);
    }),
    { numRuns: 5000 },
  );
  assert.equal(addSafe(Number.MAX_SAFE_INTEGER - 1, 1), Number.MAX_SAFE_INTEGER);
  assert.ok(Number.isNaN(addSafe(Number.MAX_SAFE_INTEGER, 1)));
  assert.ok(Number.isNaN(addSafe(Number.MAX_SAFE_INTEGER, 2))); // 2^53 + 1 rounds to 2^53 as a double
  assert.ok(Number.isNaN(addSafe(NaN, 0)));
});

test('mulDivHalfUpSafe equals the exact half-away-from-zero quotient while a × b is safe, NaN past 2^53', () => {
  // a × b placed on both sides of 2^53: b is picked around 2^53 / a.
  const operands = fc
    .tuple(fc.bigInt({ min: 1n, max: 1n << 30n }), fc.bigInt({ min: -(1n << 16n), max: 1n << 16n }), fc.boolean(), fc.boolean())
    .map(([a, shift, negA, negB]) => {
      let b = TWO_53 / a + shift;
      if (b < 0n) b = -b;
      return [negA ? -a : a, negB ? -b : b] as const;
    });
  const divisor = fc.oneof(fc.bigInt({ min: 1n, max: 1000n }), fc.bigInt({ min: 1n, max: (1n << 52n) - 1n }), fc.constantFrom(100_000_000n, 2n, 3n));
  let exact = 0;
  let fallback = 0;
  fc.assert(
    fc.property(operands, divisor, ([a, b], d) => {
      const got = mulDivHalfUpSafe(Number(a), Number(b), Number(d));
      if (isSafe(a * b)) {
        exact++;
        assert.equal(BigInt(got), halfAwayFromZero(a * b, d), `${a} × ${b} / ${d}`);
        assert.ok(!Object.is(got, -0));
      } else {
        fallback++;
        assert.ok(Number.isNaN(got), `${a} × ${b} / ${d} gave ${got}`);
      }
    }),
    { numRuns: 20_000 },
  );
  // Both sides of the boundary were exercised.
  assert.ok(exact > 1000 && fallback > 1000, `exact ${exact}, fallback ${fallback}`);
  // Small operands, any divisor: the common case of the fill path.
  fc.assert(
    fc.property(fc.bigInt({ min: -(1n << 26n), max: 1n << 26n }), fc.bigInt({ min: 0n, max: 1n << 26n }), divisor, (a, b, d) => {
      assert.equal(BigInt(mulDivHalfUpSafe(Number(a), Number(b), Number(d))), halfAwayFromZero(a * b, d));
    }),
    { numRuns: 5000 },
  );
  assert.ok(Number.isNaN(mulDivHalfUpSafe(NaN, 1, 1)));
  assert.ok(Number.isNaN(mulDivHalfUpSafe(1, 1, 2 ** 52))); // divisor out of range: the caller uses bigints
});
