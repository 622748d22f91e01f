/**
 * Cross-margin risk written from docs/engine-rules.md alone, over the engine's public views (balance, pending
 * withdrawals, each position's size and cost, the instrument's mark and last price, its configuration as decimal
 * strings). It shares no code with src/engine (margin.ts decides liquidations; this checks it):
 *
 *   equity      = balance − pending withdrawals + Σ uPnL, uPnL at the mark (else the last trade; neither: 0)
 *                 long: notional − cost, short: cost − notional
 *   maintenance = Σ notional × rate − deviance (never below 0), with the tier of the largest `notionalFrom` ≤ notional;
 *                 a position without any price counts its cost as its notional
 *
 * Money in bigint 1e-8 units. notional = |size| × price / 1e8 rounded half up; notional × rate rounded down.
 */
import type { ExchangeEngine } from '../../src/engine/api.js';

const E8 = 100_000_000n;

/** A decimal string ("0.004", "50000", "-1.5") as an exact count of 1e-8. */
export function e8(decimal: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d{1,8}))?$/.exec(decimal.trim());
  if (!m) throw new Error(`not a decimal with at most 8 places: ${decimal}`);
  const value = BigInt(m[2]) * E8 + BigInt((m[3] ?? '').padEnd(8, '0'));
  return m[1] === '-' ? -value : value;
}

/** |size| × price / 1e8, half up (size and price in 1e-8). */
export function notionalOf(size: bigint, price: bigint): bigint {
  const abs = size < 0n ? -size : size;
  return (abs * price + E8 / 2n) / E8;
}

/** The instrument's maintenance margin for a position of this notional. */
export function maintenanceOf(tiers: ReadonlyArray<{ notionalFrom: string; rate: string; deviance: string }>, notional: bigint): bigint {
  let tier = tiers[0];
  if (!tier) return 0n;
  for (const t of tiers) if (notional >= e8(t.notionalFrom)) tier = t;
  const mm = (notional * e8(tier.rate)) / E8 - e8(tier.deviance);
  return mm > 0n ? mm : 0n;
}

export interface OracleRisk {
  equity: bigint;
  maintenance: bigint;
  hasPositions: boolean;
}

/** Equity and maintenance of one account, from what the engine shows. */
export function oracleRisk(engine: ExchangeEngine, userId: number): OracleRisk {
  const account = engine.account(userId);
  let equity = account.balance - account.pendingWithdrawals;
  let maintenance = 0n;
  let hasPositions = false;
  for (const p of engine.positions(userId)) {
    if (p.quantity === 0) continue;
    hasPositions = true;
    const state = engine.instrumentState(p.instrument);
    const config = engine.instrumentConfig(p.instrument);
    if (!state || !config) throw new Error(`position on unknown instrument ${p.instrument}`);
    const price = state.markPrice ?? state.lastPrice;
    const size = BigInt(p.quantity);
    if (price !== null) {
      const value = notionalOf(size, BigInt(price));
      equity += p.side === 'BUY' ? value - p.costBasis : p.costBasis - value;
      maintenance += maintenanceOf(config.maintenanceMargin, value);
    } else {
      maintenance += maintenanceOf(config.maintenanceMargin, p.costBasis);
    }
  }
  return { equity, maintenance, hasPositions };
}
