/**
 * Exact fixed-point arithmetic at 8 decimal places (the matcher's precision).
 *
 * Two representations, chosen for speed on the hot path:
 * - `Units` (a JS number holding a *safe integer* count of 1e-8): prices and quantities. The book only
 *   compares, adds and subtracts them, which is exact for safe integers. Every value is checked with
 *   Number.isSafeInteger where it enters, so no fractional double ever appears.
 * - `Money` (a bigint count of 1e-8): balances, notionals, fees, PnL — anything that multiplies. The engine's
 *   hot path keeps these as safe-integer numbers where they provably fit (`safeOf`, `addSafe`,
 *   `mulDivHalfUpSafe`: each result is checked with Number.isSafeInteger) and falls back to bigints where
 *   they may not; both give the same integers.
 *
 * No binary floating point is used for money, price or quantity math anywhere in the engine.
 */
export type Units = number;
export type Money = bigint;

export const DECIMALS = 8;
export const SCALE = 100_000_000;
export const SCALE_N = 100_000_000n;
/** Largest price/quantity accepted, in units (≈ 90 million): keeps Units safe integers. */
export const MAX_UNITS = Number.MAX_SAFE_INTEGER;

export type RoundMode = 'halfUp' | 'down';

export class FixedPointError extends Error {}

const DECIMAL_RE = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/**
 * Parses a decimal string or JSON number into a bigint count of 1e-8, rounding half-up (default,
 * as the matcher does for amounts and prices) or down (withdrawals).
 */
export function parseMoney(input: string | number | bigint, mode: RoundMode = 'halfUp'): Money {
  if (typeof input === 'bigint') return input * SCALE_N;
  let text: string;
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) throw new FixedPointError('not a finite number');
    // Number#toString is the shortest round-trip decimal of the double, i.e. what the client wrote.
    text = input.toString();
  } else {
    text = input.trim();
  }
  const m = DECIMAL_RE.exec(text);
  if (!m || (m[2] === '' && (m[3] === undefined || m[3] === ''))) throw new FixedPointError(`not a decimal: ${JSON.stringify(text)}`);
  const negative = m[1] === '-';
  let intPart = m[2] || '0';
  let frac = m[3] ?? '';
  const exp = m[4] ? Number(m[4]) : 0;
  if (!Number.isSafeInteger(exp) || Math.abs(exp) > 400) throw new FixedPointError('exponent out of range');
  // Shift the decimal point by the exponent.
  if (exp > 0) {
    const moved = frac.slice(0, exp).padEnd(exp, '0');
    intPart = intPart + moved;
    frac = frac.slice(exp);
  } else if (exp < 0) {
    const k = -exp;
    const padded = intPart.padStart(k + 1, '0');
    frac = padded.slice(padded.length - k) + frac;
    intPart = padded.slice(0, padded.length - k);
  }
  const kept = frac.slice(0, DECIMALS).padEnd(DECIMALS, '0');
  const rest = frac.slice(DECIMALS);
  let value = BigInt(intPart) * SCALE_N + BigInt(kept);
  if (mode === 'halfUp' && rest.length > 0 && rest.charCodeAt(0) >= 53 /* '5' */) value += 1n;
  return negative ? -value : value;
}

/** Parses into safe-integer Units; throws when the value does not fit. */
export function parseUnits(input: string | number, mode: RoundMode = 'halfUp'): Units {
  const v = parseMoney(input, mode);
  if (v > BigInt(MAX_UNITS) || v < -BigInt(MAX_UNITS)) throw new FixedPointError('value out of range');
  return Number(v);
}

/** True when the decimal carries a non-zero digit beyond the 8th fractional place (it would be rounded). */
export function hasExcessPrecision(input: string | number): boolean {
  const text = typeof input === 'number' ? input.toString() : input.trim();
  const m = DECIMAL_RE.exec(text);
  if (!m) return false;
  const exp = m[4] ? Number(m[4]) : 0;
  const frac = m[3] ?? '';
  // After shifting by exp, fractional digits at index >= 8 are those at index >= 8 + exp here.
  const cut = DECIMALS + exp;
  const beyond = cut >= 0 ? frac.slice(cut) : (m[2] || '').slice(cut) + frac;
  return /[1-9]/.test(beyond);
}

/** Formats a count of 1e-8 as a plain decimal string with no trailing zeros ("1.5", "0", "-0.00000001"). */
export function formatUnits(units: Units | Money): string {
  let v = typeof units === 'bigint' ? units : BigInt(units);
  const negative = v < 0n;
  if (negative) v = -v;
  const int = v / SCALE_N;
  const frac = v % SCALE_N;
  let s = int.toString();
  if (frac !== 0n) s += '.' + frac.toString().padStart(DECIMALS, '0').replace(/0+$/, '');
  return negative ? '-' + s : s;
}

/** JSON number for wire responses (public clients expect numbers); exact for 8-dp values. */
export function toWireNumber(units: Units | Money): number {
  const n = typeof units === 'number' ? units : Number(units);
  // An integer below 2^53 is exact as a double, and IEEE division rounds the exact quotient n / 1e8 to the
  // nearest double: the same double Number() parses from the decimal text, without building the text
  // (hand-written: formatting text was a large share of a history page's mapping time).
  if (Number.isSafeInteger(n)) return n / UNIT;
  return Number(formatUnits(units));
}

/** notional = quantity × price, in money units (1e-8), rounded half-up once per fill. */
export function notional(quantity: Units, price: Units): Money {
  return notionalFrom(notionalExact(quantity, price), quantity, price);
}

/** notional(quantity, price) given `exact` = notionalExact(quantity, price), for callers that need both. */
export function notionalFrom(exact: number, quantity: Units, price: Units): Money {
  return exact >= 0 ? BigInt(exact) : mulDivHalfUp(BigInt(quantity), BigInt(price), SCALE_N);
}

const UNIT = 100_000_000;

/**
 * ⌊a / b⌋ for integers when a and the quotient × b are below 2^53: the division is correctly rounded, so
 * its floor may be one off next to an integer, and the exact remainder fixes that. Every double fast path
 * below divides through it.
 */
export function floorDivUnits(a: number, b: number): number {
  const q = Math.floor(a / b);
  const r = a - q * b;
  return r < 0 ? q - 1 : r >= b ? q + 1 : q;
}

/**
 * quantity × price / 1e8 rounded half-up, in doubles, when every intermediate is an exact integer below 2^53;
 * −1 when it cannot be done exactly (the caller falls back to bigint). Hand-written because notional is on
 * every order and fill, where bigint arithmetic was a visible share of the engine's time. (Overwrites productScratch.)
 */
export function notionalExact(quantity: Units, price: Units): number {
  if (!productParts(quantity, price)) return -1;
  const out = productScratch.units + (2 * productScratch.frac >= UNIT ? 1 : 0);
  return out <= Number.MAX_SAFE_INTEGER ? out : -1;
}

/**
 * Where `productParts` leaves its result (module scratch, so the margin hot path allocates nothing):
 * quantity × price = units × 1e8 + frac at 1e-16, with 0 ≤ frac < 1e8. Read it before the next call of
 * productParts or notionalExact.
 */
export const productScratch = { units: 0, frac: 0 };

/**
 * Splits quantity × price (a 1e-16 amount) exactly into whole 1e-8 units and the remainder below one unit,
 * in doubles, into `productScratch`; false when an intermediate would not be an exact integer below 2^53
 * (the caller then uses bigints). Same decomposition as notionalExact: price = high × 1e8 + low.
 */
export function productParts(quantity: Units, price: Units): boolean {
  if (quantity < 0 || price < 0) return false;
  const priceHigh = floorDivUnits(price, UNIT);
  const whole = quantity * priceHigh;
  const part = quantity * (price - priceHigh * UNIT);
  if (whole > Number.MAX_SAFE_INTEGER || part > Number.MAX_SAFE_INTEGER) return false;
  const q = floorDivUnits(part, UNIT);
  const units = whole + q;
  if (units > Number.MAX_SAFE_INTEGER) return false;
  productScratch.units = units;
  productScratch.frac = part - q * UNIT;
  return true;
}

/** ⌈a / d⌉ for a safe integer a ≥ 0 and a positive integer d with a / d's quotient × d exact (d small); 0 for a ≤ 0. */
export function ceilDivUnits(a: number, d: number): number {
  if (a <= 0) return 0;
  const q = floorDivUnits(a, d);
  return a - q * d > 0 ? q + 1 : q;
}

/**
 * ⌈amount × rate / 1e8⌉ (a fee) in doubles for amount ≥ 0 and 0 ≤ rate < 2^26 (fractions up to ~67%);
 * −1 when it cannot be done exactly (the caller uses applyRateCeil). amount = high × 1e8 + low keeps
 * every product below 2^53.
 */
export function rateCeilUnits(amount: number, rate: Units): number {
  if (amount <= 0 || rate <= 0) return 0;
  if (rate >= 67_108_864) return -1;
  const high = floorDivUnits(amount, UNIT);
  const whole = high * rate;
  if (whole > Number.MAX_SAFE_INTEGER) return -1;
  const out = whole + ceilDivUnits((amount - high * UNIT) * rate, UNIT);
  return out <= Number.MAX_SAFE_INTEGER ? out : -1;
}

/**
 * ⌊amount × rate / 1e8⌋ in doubles for 0 ≤ amount ≤ 2^50 and 0 ≤ rate < 2^26; −1 outside those bounds (the
 * caller uses bigints). amount = high × 1e8 + low keeps every product below 2^53.
 */
export function rateFloorUnits(amount: number, rate: number): number {
  if (amount < 0 || amount > 2 ** 50 || rate < 0 || rate >= 67_108_864) return -1;
  const high = floorDivUnits(amount, UNIT);
  return high * rate + floorDivUnits((amount - high * UNIT) * rate, UNIT);
}

/** Where scaledQuotient leaves a × 1e8 = q × b + r (0 ≤ r < b). */
export const quotientScratch = { q: 0, r: 0 };

function divMod(a: number, b: number): void {
  const q = floorDivUnits(a, b);
  quotientScratch.q = q;
  quotientScratch.r = a - q * b;
}

/**
 * a × 1e8 / b as quotient and remainder (quotientScratch), exactly in doubles, for 0 ≤ a ≤ 2^50,
 * 1 ≤ b ≤ 9·10^11 and a / b < 9·10^7 (a price per unit below 90 million); false otherwise (use bigints).
 * Long division by 10^4 twice keeps every product below 2^53. Prices from money / quantity (average
 * entry, bankruptcy) go through it for every position update.
 */
export function scaledQuotient(a: number, b: number): boolean {
  if (!(a >= 0 && a <= 2 ** 50 && b >= 1 && b <= 9e11)) return false;
  divMod(a, b);
  const q1 = quotientScratch.q;
  if (q1 >= 90_000_000) return false;
  divMod(quotientScratch.r * 10_000, b);
  const q2 = quotientScratch.q;
  divMod(quotientScratch.r * 10_000, b);
  quotientScratch.q = q1 * UNIT + q2 * 10_000 + quotientScratch.q;
  return true;
}

/** The amount as a number when it is a safe integer (then exactly equal); NaN otherwise. */
export function safeOf(v: Money): number {
  // Conversion rounds monotonically and 2^53 is a double: a value beyond the safe range never lands inside it.
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : NaN;
}

/**
 * a + b for safe integers a, b when the sum is a safe integer too (then it is exact); NaN otherwise, also for
 * a NaN operand. A true sum beyond ±(2^53 − 1) rounds to at least 2^53 in magnitude, so the check cannot pass
 * a rounded sum.
 */
export function addSafe(a: number, b: number): number {
  const s = a + b;
  return Number.isSafeInteger(s) ? s : NaN;
}

/**
 * mulDivHalfUp(a, b, d) in numbers, for safe integers a, b and 0 < d < 2^52: the same integer when a × b is a
 * safe integer (then the product is exact, by the argument of addSafe); NaN otherwise (use bigints).
 */
export function mulDivHalfUpSafe(a: number, b: number, d: number): number {
  const p = a * b;
  if (!Number.isSafeInteger(p) || !(d > 0 && d < 2 ** 52)) return NaN;
  if (p === 0) return 0; // not −0
  const m = p < 0 ? -p : p;
  const q = floorDivUnits(m, d);
  const out = 2 * (m - q * d) >= d ? q + 1 : q; // the half away from zero, as mulDivHalfUp
  return p < 0 ? -out : out;
}

/** a × b / d rounded half-up (away from zero for the half), exact bigint arithmetic. */
export function mulDivHalfUp(a: bigint, b: bigint, d: bigint): bigint {
  const p = a * b;
  const q = p / d;
  const r = p % d;
  if (r === 0n) return q;
  const twice = (r < 0n ? -r : r) * 2n;
  if (twice >= (d < 0n ? -d : d)) return (p < 0n) !== (d < 0n) ? q - 1n : q + 1n;
  return q;
}

/** a × b / d rounded up (toward +infinity) for non-negative inputs. */
export function mulDivCeil(a: bigint, b: bigint, d: bigint): bigint {
  const p = a * b;
  const q = p / d;
  return p % d === 0n ? q : q + 1n;
}

/** a × rate where rate is a fraction expressed in 1e-8 units (0.0002 → 20_000); rounded up. */
export function applyRateCeil(amount: Money, rate: Units): Money {
  if (amount <= 0n || rate <= 0) return 0n;
  return mulDivCeil(amount, BigInt(rate), SCALE_N);
}

export function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
export function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
export function absBig(a: bigint): bigint {
  return a < 0n ? -a : a;
}
