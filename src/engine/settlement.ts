/**
 * Settlement: one side of a trade moves the account's position (netting, realized PnL), charges the fee
 * (to the fee pool, or to the reserve fund for liquidations), updates the order's totals and emits the fill.
 * Also the risk engine's own orders: liquidation orders and auto-deleveraging trades (liquidation.ts decides,
 * these execute).
 */
import { addSafe, applyRateCeil, notionalExact, notionalFrom, rateCeilUnits, safeOf, type Money, type Units } from '../domain/fixed.js';
import type { FillRole, OrderGroup, Side } from '../domain/enums.js';
import { systemOrderId } from '../domain/order-id.js';
import { newPosition, openVolumeOf, type Account } from './account.js';
import { COIN, type CommandContext } from './command-context.js';
import type { Market } from './market.js';
import { OrderState } from './order.js';
import { applyFillSafe, fillScratch } from './position-math.js';
import { sequenceUuid } from './refusal.js';
import type { Stages } from './stages.js';

export class Settlement {
  constructor(private readonly ctx: CommandContext, private readonly stages: Stages) {}

  /**
   * One side of a trade: position, realized PnL, fee, order totals, events. `valueUnits`: the notional
   * `value` as a double, or −1 when it is not a safe integer.
   */
  settle(m: Market, acc: Account, o: OrderState, role: FillRole, q: Units, price: Units, value: Money, valueUnits: number, executionId: string): void {
    const ctx = this.ctx;
    const s = ctx.s;
    const r = m.rules;
    const liquidation = o.group === 'liquidation' || o.group === 'adl';
    const rate = o.group === 'liquidation' ? r.liquidationFee : o.group === 'adl' ? 0 : role === 'MAKER' ? r.makerFee : r.takerFee;
    // The fee as a safe integer when the notional is one (two per fill); bigints otherwise.
    const feeUnits = valueUnits >= 0 ? rateCeilUnits(valueUnits, rate) : -1;
    const fee = feeUnits === 0 ? 0n : feeUnits > 0 ? BigInt(feeUnits) : applyRateCeil(value, rate);
    const feeSafe = feeUnits >= 0 ? feeUnits : safeOf(fee);
    let pos = acc.positions.get(m.id);
    if (pos === undefined || pos.qty === 0) {
      const fresh = newPosition({
        id: sequenceUuid('00000001', ++s.counters.position), instrument: m.id, qty: 0, side: o.side, cost: 0n,
        realizedPnL: 0n, fee: 0n, fundingPaid: 0n, createdAt: ctx.ts, updatedAt: ctx.ts,
      });
      if (pos !== undefined && pos.touched === true) ctx.unlistTouchedPosition(pos);
      acc.positions.set(m.id, fresh);
      openVolumeOf(acc, m.id);
      pos = fresh;
      ctx.listTouchedPosition(acc, pos);
    } else {
      ctx.touchPosition(acc, pos);
    }
    const before = pos.qty;
    const valueSafe = valueUnits >= 0 ? valueUnits : NaN;
    applyFillSafe(pos, o.isBid, q, value, valueSafe);
    const realizedSafe = fillScratch.realizedSafe;
    const after = pos.qty;
    if (after === 0) m.holders.delete(acc);
    else if (before === 0) m.holders.add(acc);
    m.longInterest += (after > 0 ? after : 0) - (before > 0 ? before : 0);
    m.shortInterest += (after < 0 ? -after : 0) - (before < 0 ? -before : 0);
    // The account's, position's, order's and exchange's money in safe integers when every amount is one (the
    // common case: no bigint arithmetic on the fill path), else in bigints: the same sums either way.
    const balanceDelta = addSafe(realizedSafe, -feeSafe);
    let realized: Money;
    if (balanceDelta === balanceDelta && valueSafe === valueSafe) {
      realized = realizedSafe === 0 ? 0n : BigInt(realizedSafe);
      if (balanceDelta !== 0) acc.addBalance(balanceDelta);
      pos.addRealizedAndFee(realizedSafe, feeSafe);
      o.addFillSafe(valueSafe, realizedSafe, feeSafe);
      if (feeSafe !== 0) s.totals.addFeeSafe(feeSafe, liquidation);
    } else {
      realized = realizedSafe === realizedSafe ? BigInt(realizedSafe) : fillScratch.realized;
      acc.balance += realized - fee;
      pos.realizedPnL += realized;
      o.realizedPnL += realized;
      if (liquidation) s.totals.reserveFund += fee;
      else s.totals.fees += fee;
      pos.fee += fee;
      o.fee += fee;
      o.filledValue += value;
    }
    ctx.riskCandidates.add(acc);
    o.filledQuantity += q;
    ctx.touchOrder(o);
    ctx.events.push({
      type: 'fill',
      fill: { executionId, userId: acc.userId, orderId: o.id, instrument: m.id, side: o.side, role, quantity: q, price, fee, realizedPnL: realized, createdAt: ctx.ts },
    });
    if (fee !== 0n) {
      ctx.events.push({
        type: 'orderFee',
        fee: { id: `${executionId}-${role === 'MAKER' ? 'm' : 't'}`, userId: acc.userId, orderId: o.id, executionId, coin: COIN, quantity: fee, type: o.group === 'liquidation' ? 'liquidation' : o.group === 'adl' ? 'adl' : 'order', createdAt: ctx.ts },
      });
    }
    ctx.fundingChange(acc, realized, 'realized-pnl');
    if (fee !== 0n) ctx.fundingChange(acc, -fee, liquidation ? 'liquidation-fee' : 'fee');
    if (after !== 0) this.stages.tpsl.activateTpSlsOf(o);
    else this.stages.tpsl.endPositionTpSls(acc.userId, m.id, 'Position closed');
  }

  private newSystemOrder(acc: Account, m: Market, group: OrderGroup, side: Side, qty: Units, price: Units): OrderState {
    const ctx = this.ctx;
    const id = systemOrderId(ctx.ts, ++ctx.s.counters.systemOrder);
    const o = new OrderState(
      id, acc.userId, m.id, 'LIMIT', side, 'IOC', false, acc.leverage.get(m.id) ?? 1, qty, price, null, group, 0, null, ctx.ts,
    );
    o.reduceOnly = true;
    o.placedSeq = ++ctx.s.counters.placement;
    ctx.listTouched(o);
    return o;
  }

  /** Reduce-only IOC limit order closing `qty` of the account's position (trading-state rules do not apply). */
  systemOrder(acc: Account, m: Market, group: OrderGroup, qty: Units, limit: Units): OrderState {
    const pos = acc.positions.get(m.id)!;
    return this.stages.matching.execute(acc, m, this.newSystemOrder(acc, m, group, pos.qty > 0 ? 'SELL' : 'BUY', qty, limit));
  }

  /** Auto-deleveraging: both positions shrink by `qty` at `price`, off the book, fee-free (fill role NONE). */
  adlTrade(m: Market, acc: Account, counterparty: Account, qty: Units, price: Units): void {
    const pos = acc.positions.get(m.id)!;
    const side: Side = pos.qty > 0 ? 'SELL' : 'BUY';
    const mine = this.newSystemOrder(acc, m, 'adl', side, qty, price);
    const theirs = this.newSystemOrder(counterparty, m, 'adl', side === 'SELL' ? 'BUY' : 'SELL', qty, price);
    const valueUnits = notionalExact(qty, price);
    const value = notionalFrom(valueUnits, qty, price);
    const executionId = String(++this.ctx.s.counters.execution);
    this.settle(m, acc, mine, 'NONE', qty, price, value, valueUnits, executionId);
    this.settle(m, counterparty, theirs, 'NONE', qty, price, value, valueUnits, executionId);
    for (const o of [mine, theirs]) {
      o.remaining = 0;
      o.status = 'FILLED';
    }
  }
}
