/**
 * Account risk under cross margin (one collateral balance backs every position):
 *   equity      = balance − pending withdrawals + Σ uPnL at mark
 *   maintenance = Σ maintenanceMargin(instrument tiers, |size| × mark)
 * marginCall when maintenance ≥ 80% of equity; liquidation when equity ≤ maintenance (margin ratio ≥ 100%).
 *
 * Bankruptcy price of a position: the price at which the account's equity reaches zero, the account's other
 * positions held at their marks. Long: (cost − E′) / size, rounded up to the price increment; short:
 * (cost + E′) / size, rounded down (E′ = equity without this position's uPnL). Rounding favours the
 * liquidated account, so closing at the bankruptcy price never leaves it below zero.
 */
import {
  ceilDivUnits, floorDivUnits, notional, notionalExact, quotientScratch, scaledQuotient, SCALE_N, type Money, type Units,
} from '../domain/fixed.js';
import { collateralUnits, costUnits, unrealizedPnL, unrealizedUnits, type Account, type Position } from './account.js';
import { maintenanceMargin, maintenanceMarginUnits } from './instrument-rules.js';
import type { Market } from './market.js';

/** marginCall at maintenance ≥ MARGIN_CALL_PERCENT % of equity. */
export const MARGIN_CALL_PERCENT = 80n;

export interface AccountRisk {
  equity: Money;
  maintenance: Money;
  hasPositions: boolean;
}

export function accountRisk(acc: Account, markets: Map<string, Market>): AccountRisk {
  let equity = acc.balance - acc.pendingWithdrawals;
  let maintenance = 0n;
  let hasPositions = false;
  for (const pos of acc.positions.values()) {
    if (pos.qty === 0) continue;
    hasPositions = true;
    const m = markets.get(pos.instrument)!;
    const mark = m.valuationPrice;
    equity += unrealizedPnL(pos, mark);
    const value = mark === null ? pos.cost : notional(Math.abs(pos.qty), mark);
    maintenance += maintenanceMargin(m.rules, value);
  }
  return { equity, maintenance, hasPositions };
}

/** Verdicts of quickRisk. */
export const QuickRisk = {
  /** Amounts too large for doubles, or the account is in breach or below zero: look with accountRisk. */
  Unsure: 0,
  /** Equity ≥ 0 and no positions. */
  NoPositions: 1,
  /** Positions, equity above maintenance, no margin call. */
  Healthy: 2,
  /** Positions, equity above maintenance, maintenance ≥ 80% of equity. */
  MarginCall: 3,
} as const;
export type QuickRiskVerdict = (typeof QuickRisk)[keyof typeof QuickRisk];

const TERM = 2 ** 50;

/**
 * The sweep's common answer without bigints (it runs for both sides of every fill): accountRisk in doubles,
 * exact because every term is bounded by 2^50 (see account.ts). Anything that needs action — a breach, a
 * deficit — or does not fit answers Unsure, and the caller decides with accountRisk.
 */
export function quickRisk(acc: Account, markets: Map<string, Market>): QuickRiskVerdict {
  let equity = collateralUnits(acc);
  let maintenance = 0;
  let hasPositions = false;
  for (const pos of acc.positions.values()) {
    if (pos.qty === 0) continue;
    hasPositions = true;
    const m = markets.get(pos.instrument)!;
    const mark = m.valuationPrice;
    const u = unrealizedUnits(pos, mark);
    const value = mark === null ? costUnits(pos) : notionalExact(Math.abs(pos.qty), mark);
    if (!(value >= 0 && value <= TERM)) return QuickRisk.Unsure; // also NaN
    const mm = maintenanceMarginUnits(m.rules, value);
    if (mm < 0) return QuickRisk.Unsure;
    equity += u;
    maintenance += mm;
    if (!(equity <= TERM && equity >= -TERM && maintenance <= TERM)) return QuickRisk.Unsure; // also NaN
  }
  if (!(equity >= -TERM && equity <= TERM)) return QuickRisk.Unsure; // NaN balance
  if (!hasPositions) return equity >= 0 ? QuickRisk.NoPositions : QuickRisk.Unsure;
  if (equity <= maintenance) return QuickRisk.Unsure;
  // maintenance × 100 ≥ equity × 80, scaled to × 5 and × 4 so both products stay exact below 2^53.
  return maintenance * 5 >= equity * 4 ? QuickRisk.MarginCall : QuickRisk.Healthy;
}

export function mustLiquidate(r: AccountRisk): boolean {
  return r.hasPositions && r.equity <= r.maintenance;
}

export function isMarginCall(r: AccountRisk): boolean {
  return r.hasPositions && r.maintenance * 100n >= r.equity * MARGIN_CALL_PERCENT;
}

/** Equity of the account without `except`'s unrealized PnL (E′ above). */
export function equityWithout(acc: Account, except: Position, markets: Map<string, Market>): Money {
  let e = acc.balance - acc.pendingWithdrawals;
  for (const p of acc.positions.values()) {
    if (p === except || p.qty === 0) continue;
    e += unrealizedPnL(p, markets.get(p.instrument)!.valuationPrice);
  }
  return e;
}

/** Cross-margin bankruptcy price (null: the account's collateral covers a fall to zero). */
export function bankruptcyPrice(acc: Account, pos: Position, markets: Map<string, Market>): Units | null {
  const abs = BigInt(Math.abs(pos.qty));
  if (abs === 0n) return null;
  const inc = BigInt(markets.get(pos.instrument)!.rules.priceIncrement);
  const e = equityWithout(acc, pos, markets);
  if (pos.qty > 0) {
    const num = pos.cost - e;
    if (num <= 0n) return null;
    const raw = (num * SCALE_N + abs - 1n) / abs; // ceil
    return Number(((raw + inc - 1n) / inc) * inc);
  }
  const num = pos.cost + e;
  const raw = num > 0n ? (num * SCALE_N) / abs : 0n; // floor
  const p = (raw / inc) * inc;
  return Number(p > 0n ? p : inc);
}

/**
 * bankruptcyPrice in doubles; undefined when some amount is too large for that (the caller uses
 * bankruptcyPrice). Runs for every position update, on both sides of every fill.
 */
export function bankruptcyPriceUnits(acc: Account, pos: Position, markets: Map<string, Market>): Units | null | undefined {
  const abs = Math.abs(pos.qty);
  if (abs === 0) return null;
  const inc = markets.get(pos.instrument)!.rules.priceIncrement;
  let e = collateralUnits(acc);
  for (const p of acc.positions.values()) {
    if (p === pos || p.qty === 0) continue;
    e += unrealizedUnits(p, markets.get(p.instrument)!.valuationPrice);
    if (!(e <= TERM * 4 && e >= -TERM * 4)) return undefined; // also NaN
  }
  const cost = costUnits(pos);
  if (!(e <= TERM * 4 && e >= -TERM * 4) || cost !== cost || inc < 1) return undefined;
  // num is an exact integer below 2^53 here (|e| ≤ 2^52, cost ≤ 2^50): when the quotient is too large for
  // doubles (a well-funded short's price is astronomical) only the division itself goes to bigints.
  if (pos.qty > 0) {
    const num = cost - e;
    if (num <= 0) return null;
    if (!scaledQuotient(num, abs)) {
      const n = BigInt(abs);
      const i = BigInt(inc);
      const big = (BigInt(num) * SCALE_N + n - 1n) / n;
      return Number(((big + i - 1n) / i) * i);
    }
    const raw = quotientScratch.r > 0 ? quotientScratch.q + 1 : quotientScratch.q; // ceil
    return ceilDivUnits(raw, inc) * inc;
  }
  const num = cost + e;
  let raw = 0;
  if (num > 0) {
    if (!scaledQuotient(num, abs)) {
      const i = BigInt(inc);
      const p = ((BigInt(num) * SCALE_N) / BigInt(abs) / i) * i;
      return Number(p > 0n ? p : i);
    }
    raw = quotientScratch.q; // floor
  }
  const p = floorDivUnits(raw, inc) * inc;
  return p > 0 ? p : inc;
}

/** ADL rank 1–5 (5 = first to be deleveraged): profit ratio × leverage, in fixed bands. */
export function adlLevel(pos: Position, upnl: Money, leverage: number): number {
  if (pos.qty === 0 || pos.cost === 0n || upnl <= 0n) return 1;
  const score = (upnl * BigInt(leverage) * 100n) / pos.cost; // % of cost × leverage
  if (score >= 400n) return 5;
  if (score >= 200n) return 4;
  if (score >= 100n) return 3;
  if (score >= 30n) return 2;
  return 1;
}

/** adlLevel in doubles (uPnL and cost as doubles); 0 when they are too large for it. */
export function adlLevelUnits(pos: Position, upnl: number, cost: number, leverage: number): number {
  if (pos.qty === 0 || cost === 0 || upnl <= 0) return 1;
  if (!(upnl <= 3e12 && cost <= 2 ** 50)) return 0; // also NaN
  // ⌊upnl × leverage × 100 / cost⌋ ≥ k  ⟺  upnl × leverage × 100 ≥ k × cost, scaled down to stay exact.
  const x = upnl * leverage;
  if (x >= 4 * cost) return 5;
  if (x >= 2 * cost) return 4;
  if (x >= cost) return 3;
  if (x * 10 >= 3 * cost) return 2;
  return 1;
}

/**
 * ADL rank score (higher = deleveraged first): uPnL / cost × leverage, as an exact fraction. Compare two
 * scores with `compareScore`.
 */
export interface AdlScore {
  num: bigint;
  den: bigint;
}

export function adlScore(pos: Position, upnl: Money, leverage: number): AdlScore {
  return { num: upnl * BigInt(leverage), den: pos.cost > 0n ? pos.cost : 1n };
}

export function compareScore(a: AdlScore, b: AdlScore): number {
  const l = a.num * b.den;
  const r = b.num * a.den;
  return l < r ? -1 : l > r ? 1 : 0;
}
