/**
 * Yield figures derived from what the exchange actually earned: trading fees plus liquidation fees paid
 * into the reserve fund, set against the collateral that was locked while they were earned.
 *
 *   APR over a window = Σ revenue / Σ daily TVL × 365     (= revenue / average TVL × 365 / days)
 *
 * A user's accrued yield is their pro-rata share of each day's revenue: Σ_d revenue_d × balance_d / TVL_d.
 * These are accounting figures: nothing is credited to any account (that would be an engine command).
 */
import { mulDivHalfUp, SCALE_N, type Money } from '../domain/fixed.js';
import type { DayBucket } from '../store/exchange-statistics.js';

export interface AprResult {
  /** yearly rate, 1e-8 units (100000000 = 100 %) */
  apr: bigint;
  exchangeFees: Money;
  reserveIncome: Money;
  /** Σ daily TVL / days */
  averageTvl: Money;
}

type Day = Pick<DayBucket, 'exchangeFees' | 'reserveIncome'> & { tvl: Money };

export function aprOf(days: readonly Day[]): AprResult {
  let exchangeFees = 0n;
  let reserveIncome = 0n;
  let tvlSum = 0n;
  for (const d of days) {
    exchangeFees += d.exchangeFees;
    reserveIncome += d.reserveIncome;
    tvlSum += d.tvl;
  }
  const revenue = exchangeFees + reserveIncome;
  const apr = tvlSum > 0n ? mulDivHalfUp(revenue * 365n, SCALE_N, tvlSum) : 0n;
  const averageTvl = days.length > 0 ? tvlSum / BigInt(days.length) : 0n;
  return { apr, exchangeFees, reserveIncome, averageTvl };
}

/** Σ_d revenue_d × balance_d / TVL_d over the days both series cover (same order, same days). */
export function accruedShare(days: readonly Day[], balances: readonly Money[]): Money {
  let earned = 0n;
  for (let i = 0; i < days.length; i++) {
    const d = days[i]!;
    const balance = balances[i] ?? 0n;
    if (d.tvl <= 0n || balance <= 0n) continue;
    // Rounded toward zero so the shares of all users never add up to more than was earned.
    earned += ((d.exchangeFees + d.reserveIncome) * balance) / d.tvl;
  }
  return earned;
}
