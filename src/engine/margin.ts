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
import { notional, SCALE_N, type Money, type Units } from '../domain/fixed.js';
import { unrealizedPnL, type Account, type Position } from './account.js';
import { maintenanceMargin } from './instrument-rules.js';
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
