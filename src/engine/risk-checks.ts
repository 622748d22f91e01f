/**
 * Pre-trade risk: the available balance of an account (with an order or a leverage change tried on it), the
 * margin an order needs, the leverage tier's notional cap, and the account view the balance routes show.
 * Exact rules in docs/engine-rules.md ("Margin"); the doubles fast path is exact by the bounds in account.ts.
 */
import { applyRateCeil, productParts, productScratch, rateCeilUnits, SCALE_N, type Money, type Units } from '../domain/fixed.js';
import type { Side } from '../domain/enums.js';
import {
  collateralUnits, costUnits, instrumentLock, lockOf, lockUnits, smallMoney, SUM_LIMIT, unrealizedPnL, unrealizedUnits, type Account, type Position,
} from './account.js';
import { notionalCap } from './instrument-rules.js';
import type { Market } from './market.js';
import type { OrderState } from './order.js';
import { capRefusal } from './order-rules.js';
import type { AvailableBalanceView } from './records.js';
import type { EngineState } from './state.js';

/** Whether an order on `side` of `qty` (null = any size) only reduces the account's position. */
export function reduces(acc: Account, instrument: string, side: Side, qty: Units | null): boolean {
  const pos = acc.positions.get(instrument);
  if (!pos || pos.qty === 0) return false;
  if ((pos.qty > 0) === (side === 'BUY')) return false;
  return qty === null || qty <= Math.abs(pos.qty);
}

export class RiskChecks {
  constructor(private readonly s: EngineState) {}

  /**
   * Available balance per the wire contract: balance − pending withdrawals + Σ min(0, uPnL at mark) − Σ lock.
   * The extra arguments add open-order volume (exact, 1e-16 units) on one instrument and override that
   * instrument's leverage: used to test an order or a leverage change before accepting it.
   */
  available(acc: Account, extraInstrument: string | null = null, extraBuyRaw = 0n, extraSellRaw = 0n, extraLeverage = 1): Money {
    let total = acc.pendingWithdrawals === 0n ? acc.balance : acc.balance - acc.pendingWithdrawals;
    let sawExtra = false;
    for (const vol of acc.openVolume.values()) {
      const instrument = vol.instrument;
      const pos = acc.positions.get(instrument);
      if (instrument === extraInstrument) {
        sawExtra = true;
        total -= lockOf(pos, vol.buyRaw + extraBuyRaw, vol.sellRaw + extraSellRaw, extraLeverage);
      } else {
        total -= lockOf(pos, vol.buyRaw, vol.sellRaw, acc.leverage.get(instrument) ?? 1);
      }
      if (pos !== undefined && pos.qty !== 0) {
        const m = this.s.markets.get(instrument);
        const u = unrealizedPnL(pos, m ? m.valuationPrice : null);
        if (u < 0n) total += u;
      }
    }
    // An instrument the user has no orders/position on yet has no openVolume entry: count the extra volume
    // here rather than creating the entry (a refused command must not change state).
    if (extraInstrument !== null && !sawExtra) total -= lockOf(acc.positions.get(extraInstrument), extraBuyRaw, extraSellRaw, extraLeverage);
    return total;
  }

  /**
   * available() in doubles, with `extraUnits`/`extraFrac` (parts of quantity × price, see productParts) more
   * open volume on one side of `extraInstrument` at `extraLeverage`; NaN when some amount is too large to be
   * exact in doubles (the caller then uses available()).
   */
  private availableUnits(acc: Account, extraInstrument: string, extraIsBid: boolean, extraUnits: number, extraFrac: number, extraLeverage: number): number {
    let total = collateralUnits(acc);
    let sawExtra = false;
    for (const vol of acc.openVolume.values()) {
      const instrument = vol.instrument;
      const pos = acc.positions.get(instrument);
      let lock: number;
      if (instrument === extraInstrument) {
        sawExtra = true;
        lock = lockUnits(pos, vol, extraLeverage, extraIsBid, extraUnits, extraFrac);
      } else {
        lock = lockUnits(pos, vol, acc.leverage.get(instrument) ?? 1, false, 0, 0);
      }
      if (lock < 0) return NaN;
      total -= lock;
      if (pos !== undefined && pos.qty !== 0) {
        const m = this.s.markets.get(instrument);
        const u = unrealizedUnits(pos, m ? m.valuationPrice : null);
        if (u < 0) total += u;
        else if (u !== u) return NaN;
      }
      if (!(total <= SUM_LIMIT && total >= -SUM_LIMIT)) return NaN; // also NaN
    }
    if (!sawExtra) {
      const lock = lockUnits(acc.positions.get(extraInstrument), undefined, extraLeverage, extraIsBid, extraUnits, extraFrac);
      if (lock < 0) return NaN;
      total -= lock;
    }
    return total;
  }

  /**
   * Why the account cannot take the order on, or null: its available balance with the order's volume added
   * (at the order's leverage) must cover the worst-case fee, and an order that grows the position must keep
   * position + same-side orders within the leverage tier's notional cap. Worked out in doubles when every
   * amount fits (the common case; see lockUnits), else in bigints: the same rules, the same answer.
   */
  marginRefusal(acc: Account, m: Market, o: OrderState, pos: Position | undefined, byCash: boolean, requestedQty: Units | null): string | null {
    const r = m.rules;
    const leverage = o.leverage;
    const increases = !reduces(acc, m.id, o.side, requestedQty);
    const feeRate = r.takerFee > r.makerFee ? r.takerFee : r.makerFee;
    const cap = increases ? notionalCap(r, leverage) : null;
    const sameSidePosition = pos !== undefined && pos.qty !== 0 && (pos.qty > 0) === o.isBid;

    // Volume of the order (quantity × price, or the cash amount) as whole units + remainder at 1e-16.
    if (byCash ? o.cashQuantity <= SUM_LIMIT : productParts(o.quantity, o.limitPrice) && productScratch.units <= SUM_LIMIT) {
      const units = byCash ? o.cashQuantity : productScratch.units;
      const frac = byCash ? 0 : productScratch.frac;
      const fee = increases ? rateCeilUnits(frac > 0 ? units + 1 : units, feeRate) : 0;
      const available = fee < 0 ? NaN : this.availableUnits(acc, m.id, o.isBid, units, frac, leverage);
      if (available === available) {
        if (available - fee < 0) return 'Insufficient available balance';
        if (cap === null) return null;
        const vol = acc.openVolume.get(m.id);
        const capUnits = smallMoney(cap);
        const posValue = sameSidePosition ? costUnits(pos) : 0;
        if (capUnits === capUnits && posValue === posValue && (vol === undefined || vol.exact)) {
          const sameUnits = vol === undefined ? 0 : o.isBid ? vol.buyUnits : vol.sellUnits;
          const sameFrac = vol === undefined ? 0 : o.isBid ? vol.buyFrac : vol.sellFrac;
          const orders = sameUnits + units;
          if (orders <= SUM_LIMIT) {
            // ⌊(same side + order) / 1e8⌋ at 1e-16 = the units plus the carry of the remainders.
            return posValue + orders + (sameFrac + frac >= 100_000_000 ? 1 : 0) > capUnits ? capRefusal(leverage) : null;
          }
        }
      }
    }

    const volumeRaw = byCash ? BigInt(o.cashQuantity) * SCALE_N : BigInt(o.quantity) * BigInt(o.limitPrice);
    const fee = increases ? applyRateCeil((volumeRaw + SCALE_N - 1n) / SCALE_N, feeRate) : 0n;
    if (this.available(acc, m.id, o.isBid ? volumeRaw : 0n, o.isBid ? 0n : volumeRaw, leverage) - fee < 0n) return 'Insufficient available balance';
    if (cap !== null) {
      const vol = acc.openVolume.get(m.id);
      const sameSideRaw = o.isBid ? vol?.buyRaw ?? 0n : vol?.sellRaw ?? 0n;
      const posValue = sameSidePosition ? pos.cost : 0n;
      if (posValue + (sameSideRaw + volumeRaw) / SCALE_N > cap) return capRefusal(leverage);
    }
    return null;
  }

  accountView(acc: Account): AvailableBalanceView {
    const positions: AvailableBalanceView['positions'] = [];
    const openOrders: AvailableBalanceView['openOrders'] = [];
    let negative = 0n;
    let totalLock = 0n;
    for (const [instrument, vol] of acc.openVolume) {
      const pos = acc.positions.get(instrument);
      const lev = acc.leverage.get(instrument) ?? 1;
      const { im, lock, buyVolume, sellVolume } = instrumentLock(pos, vol, lev);
      totalLock += lock;
      const levN = BigInt(lev);
      if (pos && pos.qty !== 0) {
        positions.push({ instrument, side: pos.qty > 0 ? 'BUY' : 'SELL', volume: pos.cost, initialMargin: im });
        const m = this.s.markets.get(instrument);
        const u = unrealizedPnL(pos, m ? m.valuationPrice : null);
        if (u < 0n) negative += u;
      }
      if (buyVolume > 0n) openOrders.push({ instrument, side: 'BUY', unFilledVolume: buyVolume, unFilledInitialMargin: (buyVolume + levN - 1n) / levN });
      if (sellVolume > 0n) openOrders.push({ instrument, side: 'SELL', unFilledVolume: sellVolume, unFilledInitialMargin: (sellVolume + levN - 1n) / levN });
    }
    const raw = acc.balance - acc.pendingWithdrawals + negative - totalLock;
    return {
      userId: acc.userId, balance: acc.balance, pendingWithdrawals: acc.pendingWithdrawals, positions, openOrders,
      negativeUnrealizedPnL: negative, totalLock, availableBalance: raw > 0n ? raw : 0n, marginCall: acc.marginCall,
      updatedAt: acc.updatedAt,
    };
  }

  /** Largest order volume (USDT notional) the user could open on each side now. */
  power(userId: number, instrument: string): { buy: bigint; sell: bigint } | undefined {
    const m = this.s.markets.get(instrument);
    if (!m) return undefined;
    const acc = this.s.accounts.get(userId);
    if (!acc) return { buy: 0n, sell: 0n };
    const lev = BigInt(acc.leverage.get(instrument) ?? 1);
    const avail = this.available(acc);
    const base = avail > 0n ? avail * lev : 0n;
    const pos = acc.positions.get(instrument);
    const closing = pos && pos.qty !== 0 ? pos.cost * 2n : 0n; // closing frees its margin and reopens the other way
    return { buy: base + (pos && pos.qty < 0 ? closing : 0n), sell: base + (pos && pos.qty > 0 ? closing : 0n) };
  }
}
