/**
 * Liquidation and auto-deleveraging. Runs at the end of every command over the accounts whose margin may have
 * changed (fills, funding, price ticks), in ascending user id, until no account is left in breach (a
 * liquidation's fills may push others into breach: the cascade is handled in the same command).
 *
 * For an account with equity ≤ maintenance (while the matcher is active):
 * 1. its open orders are cancelled and its live TpSl cancelled (reason "Liquidation");
 * 2. each position (instrument listing order) is closed by a reduce-only IOC order of group `liquidation`
 *    limited to its bankruptcy price P_b — extended by what the reserve fund can absorb (fund / size per
 *    unit), never past mark ± slippageLimit. The liquidation fee (instrument liquidationFee × fill value)
 *    goes to the reserve fund;
 * 3. what the book could not take within that limit is auto-deleveraged at P_b against the opposite
 *    positions ranked by ADL score (uPnL / cost × leverage, highest first; user id breaks ties), with orders
 *    of group `adl` (no fee) on both sides;
 * 4. a remaining negative equity (a loss beyond the collateral) is paid by the reserve fund, as far as the
 *    fund goes (also for an account whose own closing trade lost more than its collateral). With the fund
 *    empty such a deficit stays on the account's balance (bad debt, visible in the ledger) until the fund
 *    has money again (liquidation fees, funding residue): the first command after that pays it.
 * Money moves only between balances and the reserve fund, so conservation holds at every step.
 */
import { notional, SCALE_N, type Money, type Units } from '../domain/fixed.js';
import { unrealizedPnL, type Account, type Position } from './account.js';
import type { Market } from './market.js';
import { accountRisk, adlScore, bankruptcyPrice, compareScore, isMarginCall, mustLiquidate, quickRisk, QuickRisk } from './margin.js';
import type { RiskQueue } from './risk-queue.js';
import type { EngineState } from './state.js';

/** What the liquidator needs from the engine (bound to its private operations). */
export interface LiquidationHost {
  readonly s: EngineState;
  cancelOrders(acc: Account, reason: string): void;
  cancelTpSls(userId: number, reason: string): void;
  /** Reduce-only IOC limit order of group `liquidation`, matched against the book. */
  liquidationOrder(acc: Account, m: Market, qty: Units, limit: Units): void;
  /** Closes `qty` of both positions against each other at `price` (orders of group `adl`). */
  adlTrade(m: Market, acc: Account, counterparty: Account, qty: Units, price: Units): void;
  /** Moves `amount` from the reserve fund to the account (loss beyond collateral). */
  coverFromReserve(acc: Account, amount: Money): void;
  setMarginCall(acc: Account, flag: boolean): void;
}

/** Upper bound of sweep rounds per command (each round liquidates at least one account). */
const MAX_ROUNDS = 10_000;

export const LIQUIDATION_REASON = 'Liquidation';

export class Liquidator {
  /**
   * Accounts without positions left below zero because the reserve fund was empty (bad debt), paid as soon
   * as the fund has money again (liquidation fees, funding residue). Derived from the state, not part of it.
   */
  private readonly inDeficit = new Set<Account>();

  constructor(private readonly host: LiquidationHost) {
    for (const acc of host.s.accounts.values()) {
      const risk = accountRisk(acc, host.s.markets);
      if (risk.equity < 0n && !risk.hasPositions) this.inDeficit.add(acc);
    }
  }

  /** Bad debt is waiting for the reserve fund, which has money: the next sweep pays it. */
  get deficitsPayable(): boolean {
    return this.inDeficit.size > 0 && this.host.s.totals.reserveFund > 0n;
  }

  /**
   * Checks (and empties) `candidates`; accounts touched by liquidation fills are re-added and checked too.
   * Then bad debt left from earlier commands is paid from the reserve fund, as far as it goes.
   */
  sweep(candidates: RiskQueue): void {
    this.checkCandidates(candidates);
    if (this.deficitsPayable) {
      for (const acc of [...this.inDeficit].sort((a, b) => a.userId - b.userId)) this.coverDeficit(acc);
    }
  }

  private checkCandidates(candidates: RiskQueue): void {
    const s = this.host.s;
    for (let round = 0; candidates.size > 0 && round < MAX_ROUNDS; round++) {
      const list = candidates.take();
      for (let i = 0; i < list.length; i++) {
        const acc = list[i];
        const quick = quickRisk(acc, s.markets);
        if (quick !== QuickRisk.Unsure) {
          // The same outcomes as below for a solvent account, without bigints.
          if (quick === QuickRisk.NoPositions) this.inDeficit.delete(acc);
          this.host.setMarginCall(acc, quick === QuickRisk.MarginCall);
          continue;
        }
        const risk = accountRisk(acc, s.markets);
        if (!risk.hasPositions && risk.equity >= 0n) this.inDeficit.delete(acc);
        if (!risk.hasPositions && risk.equity < 0n) {
          // A loss beyond the collateral realized by the account's own closing trade.
          this.coverDeficit(acc);
          this.host.setMarginCall(acc, false);
        } else if (mustLiquidate(risk) && s.matcher.state === 'active') {
          this.liquidate(acc);
          this.host.setMarginCall(acc, isMarginCall(accountRisk(acc, s.markets)));
        } else {
          this.host.setMarginCall(acc, isMarginCall(risk));
        }
      }
    }
    candidates.clear(); // a runaway cascade stops here; the rest is checked at the next tick
  }

  private liquidate(acc: Account): void {
    const s = this.host.s;
    // TpSl first: cancelling an order would otherwise end its waiting TpSl with the order's reason.
    this.host.cancelTpSls(acc.userId, LIQUIDATION_REASON);
    this.host.cancelOrders(acc, LIQUIDATION_REASON);
    for (const m of s.markets.values()) {
      const pos = acc.positions.get(m.id);
      if (!pos || pos.qty === 0) continue;
      const pb = bankruptcyPrice(acc, pos, s.markets);
      if (pb === null) continue; // cannot happen in breach: collateral covers a fall to zero
      this.host.liquidationOrder(acc, m, Math.abs(pos.qty), this.bookLimit(m, pos, pb));
      if (pos.qty !== 0) this.deleverage(m, acc, pos, pb);
      this.coverDeficit(acc);
    }
  }

  /** P_b extended by the reserve fund's capacity, within mark ± slippageLimit; rounded toward P_b. */
  private bookLimit(m: Market, pos: Position, pb: Units): Units {
    const fund = this.host.s.totals.reserveFund;
    const abs = BigInt(Math.abs(pos.qty));
    const ext = fund > 0n ? (fund * SCALE_N) / abs : 0n;
    const mark = BigInt(m.valuationPrice ?? pb);
    const band = notional(Number(mark), m.rules.slippageLimit);
    const inc = BigInt(m.rules.priceIncrement);
    const p = BigInt(pb);
    if (pos.qty > 0) {
      let limit = p - ext;
      if (limit < mark - band) limit = mark - band;
      if (limit > p) limit = p;
      limit = ((limit + inc - 1n) / inc) * inc;
      return Number(limit > inc ? limit : inc);
    }
    let limit = p + ext;
    if (limit > mark + band) limit = mark + band;
    if (limit < p) limit = p;
    limit = (limit / inc) * inc;
    return Number(limit > inc ? limit : inc);
  }

  /** Closes the rest of `pos` at `price` against the opposite positions, highest ADL score first. */
  private deleverage(m: Market, acc: Account, pos: Position, price: Units): void {
    const long = pos.qty > 0;
    const ranked: Array<{ acc: Account; pos: Position; score: ReturnType<typeof adlScore> }> = [];
    for (const other of m.holders) {
      if (other === acc) continue;
      const p = other.positions.get(m.id);
      if (!p || p.qty === 0 || (p.qty > 0) === long) continue;
      ranked.push({ acc: other, pos: p, score: adlScore(p, unrealizedPnL(p, m.valuationPrice), other.leverage.get(m.id) ?? 1) });
    }
    ranked.sort((a, b) => compareScore(b.score, a.score) || a.acc.userId - b.acc.userId);
    for (const c of ranked) {
      if (pos.qty === 0) break;
      const q = Math.min(Math.abs(pos.qty), Math.abs(c.pos.qty));
      this.host.adlTrade(m, acc, c.acc, q, price);
    }
  }

  /** Negative equity left after a position is closed: the reserve fund pays what it can; the rest waits (inDeficit). */
  private coverDeficit(acc: Account): void {
    const s = this.host.s;
    const { equity, hasPositions } = accountRisk(acc, s.markets);
    if (equity < 0n && s.totals.reserveFund > 0n) {
      const need = -equity;
      const paid = need < s.totals.reserveFund ? need : s.totals.reserveFund;
      this.host.coverFromReserve(acc, paid);
      if (paid === need) {
        this.inDeficit.delete(acc);
        return;
      }
    }
    if (equity < 0n && !hasPositions) this.inDeficit.add(acc);
    else this.inDeficit.delete(acc);
  }
}
