/** Decimal display and input for exact 8-decimal amounts (the exchange's own fixed-point module). */
import { formatUnits, parseMoney } from '../../../src/domain/fixed.js';

export { formatUnits, parseMoney };

/** Decimal-string input → units (bigint, 1e-8), or null when it is not a positive-or-zero decimal. */
export function toUnits(input: string | number | null | undefined): bigint | null {
  if (input === null || input === undefined) return null;
  const s = String(input).trim();
  if (!/^\d+(\.\d+)?$|^\d*\.\d+$/.test(s)) return null;
  try {
    return parseMoney(s);
  } catch {
    return null;
  }
}

/** Any wire number/string (may be negative) → units. */
export function wireUnits(v: string | number | null | undefined): bigint {
  if (v === null || v === undefined || v === '') return 0n;
  try {
    return parseMoney(typeof v === 'number' ? v.toFixed(8) : v);
  } catch {
    return 0n;
  }
}

/** Units → display string with at most `dp` decimals (truncated toward zero), thousands grouped. */
export function fmt(units: bigint | null | undefined, dp = 2): string {
  if (units === null || units === undefined) return '—';
  const neg = units < 0n;
  const abs = neg ? -units : units;
  const s = formatUnits(abs);
  const [int, frac = ''] = s.split('.');
  const grouped = int!.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const f = frac.padEnd(dp, '0').slice(0, dp);
  return (neg ? '-' : '') + grouped + (dp > 0 ? '.' + f : '');
}

/** A wire value (number or string) formatted like fmt. */
export const fmtWire = (v: string | number | null | undefined, dp = 2): string => (v === null || v === undefined ? '—' : fmt(wireUnits(v), dp));

/** Decimal places of an increment such as "0.1" or "0.0001". */
export function decimalsOf(increment: string | number): number {
  const s = typeof increment === 'number' ? formatUnits(parseMoney(increment.toFixed(8))) : increment;
  const i = s.indexOf('.');
  return i < 0 ? 0 : s.length - i - 1;
}

/** a × b / 1e8 for units (price × quantity → notional), floored toward zero. */
export const mulUnits = (a: bigint, b: bigint): bigint => (a * b) / 100_000_000n;
