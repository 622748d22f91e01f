/**
 * Order entry: an order that passed the static checks (order-rules.ts) is created, its id used from then on,
 * and admitted through the trading rules (matcher halted, trading state, reduce-only, fat-finger band) and
 * the risk checks (risk-checks.ts); then it is armed (stop-limit) or executed (matching.ts). Refusals from
 * admission on are REJECTED orders. Batch creates and position closes come in here too.
 */
import { notional, notionalExact } from '../domain/fixed.js';
import type { OrderGroup } from '../domain/enums.js';
import type { Account } from './account.js';
import type { PlaceOrderInput } from './commands.js';
import type { CommandContext } from './command-context.js';
import { notionalCap } from './instrument-rules.js';
import type { Market } from './market.js';
import { OrderState } from './order.js';
import { capRefusal, outsideBand, validateOrder } from './order-rules.js';
import type { BatchItemResult } from './records.js';
import { fail, isPositiveUnits, type Draft } from './refusal.js';
import { reduces } from './risk-checks.js';
import type { Stages } from './stages.js';

export const MAX_BATCH_CREATE = 20;

export class OrderEntry {
  constructor(private readonly ctx: CommandContext, private readonly stages: Stages) {}

  placeCommand(userId: number, input: PlaceOrderInput): Draft {
    const m = input && typeof input === 'object' ? this.ctx.s.markets.get(input.instrument) : undefined;
    const refused = validateOrder(this.ctx.s, this.ctx.ts, userId, input, m);
    if (refused) return refused;
    const o = this.place(this.ctx.accountOf(userId), m!, input);
    return { ok: true, order: o };
  }

  placeBatch(userId: number, instrument: string, orders: PlaceOrderInput[]): Draft {
    const m = this.ctx.s.markets.get(instrument);
    if (!m) return fail(404, 'INSTRUMENT_NOT_FOUND', `Unknown instrument ${instrument}`);
    if (!Array.isArray(orders) || orders.length < 1 || orders.length > MAX_BATCH_CREATE) {
      return fail(400, 'INVALID_BATCH', `A batch holds 1 to ${MAX_BATCH_CREATE} orders`);
    }
    const batch: BatchItemResult[] = [];
    const placed: OrderState[] = [];
    for (const input of orders) {
      const orderId = input && typeof input.id === 'string' ? input.id : '';
      if (input && input.instrument !== instrument) {
        batch.push({ orderId, success: false, failReason: `Instrument must be ${instrument}` });
        continue;
      }
      if (input && input.type !== 'LIMIT') {
        batch.push({ orderId, success: false, failReason: 'Batch orders are limit orders' });
        continue;
      }
      const refused = validateOrder(this.ctx.s, this.ctx.ts, userId, input, m);
      if (refused) {
        batch.push({ orderId, success: false, failReason: refused.ok ? '' : refused.error.message });
        continue;
      }
      const o = this.place(this.ctx.accountOf(userId), m, input);
      placed.push(o);
      batch.push(o.status === 'REJECTED' ? { orderId, success: false, failReason: o.rejectedReason } : { orderId, success: true });
    }
    return { ok: true, batch, orders: placed };
  }

  /** Market order (IOC, reduce-only) against the user's position; quantity 0 = the whole position. */
  closePosition(userId: number, instrument: string, id: string, quantity: number, leverage: number): Draft {
    const m = this.ctx.s.markets.get(instrument);
    const acc = this.ctx.s.accounts.get(userId);
    const pos = acc?.positions.get(instrument);
    if (m && (!pos || pos.qty === 0)) return fail(409, 'NO_POSITION', `No open position on ${instrument}`);
    if (!(quantity === 0 || isPositiveUnits(quantity))) return fail(400, 'INVALID_QUANTITY', 'Invalid quantity');
    const size = pos ? Math.abs(pos.qty) : 0;
    const input: PlaceOrderInput = {
      id, instrument, side: pos && pos.qty > 0 ? 'SELL' : 'BUY', type: 'MARKET', timeInForce: 'IOC', leverage,
      quantity: quantity === 0 || quantity > size ? size : quantity, reduceOnly: true, group: 'manually',
    };
    const refused = validateOrder(this.ctx.s, this.ctx.ts, userId, input, m);
    if (refused) return refused;
    const o = this.place(acc!, m!, input);
    return { ok: true, order: o };
  }

  /** Creates the order and runs it (its id is used from now on); refusals from here on are REJECTED orders. */
  place(acc: Account, m: Market, input: PlaceOrderInput): OrderState {
    const o = this.admit(acc, m, input);
    this.stages.lifecycle.retireIfDone(acc, o);
    return o;
  }

  private admit(acc: Account, m: Market, input: PlaceOrderInput): OrderState {
    const ctx = this.ctx;
    const { lifecycle } = this.stages;
    const r = m.rules;
    const isMarket = input.type === 'MARKET';
    const byCash = isMarket && input.cashQuantity !== undefined;
    const reduceOnly = input.reduceOnly === true;
    const group: OrderGroup = input.group ?? 'manually';
    const o = new OrderState(
      input.id, acc.userId, m.id, input.type, input.side, input.timeInForce, input.postOnly === true, input.leverage,
      byCash ? 0 : input.quantity!, isMarket ? 0 : input.limitPrice!, input.type === 'STOP_LIMIT' ? input.stopPrice! : null,
      group, byCash ? input.cashQuantity! : 0, input.smp && input.smp.smpId !== '' ? input.smp.smpId : null, ctx.ts,
    );
    o.smp = input.smp?.smp === true;
    o.reduceOnly = reduceOnly;
    o.placedSeq = ++ctx.s.counters.placement;
    ctx.listTouched(o);
    if (input.tpsl) for (const t of input.tpsl) this.stages.tpsl.attachTpSl(acc, o, t);

    // ---- trading rules ----
    if (ctx.s.matcher.state !== 'active') return lifecycle.reject(o, 'Trading is halted');
    if (m.trading === 'none' || m.trading === 'restricted') return lifecycle.reject(o, `Trading is not allowed on ${m.id}`);
    const pos = acc.positions.get(m.id);
    if (reduceOnly) {
      if (!pos || pos.qty === 0 || (pos.qty > 0) === o.isBid) return lifecycle.reject(o, 'No position to reduce');
      const abs = Math.abs(pos.qty);
      if (!byCash && o.quantity > abs) {
        o.quantity = abs;
        o.remaining = abs;
      }
    }
    const requestedQty = byCash ? null : o.quantity;
    if (m.trading === 'onlyClose' && !reduces(acc, m.id, o.side, requestedQty)) {
      return lifecycle.reject(o, 'Only position-closing orders are allowed');
    }
    // A cash-sized order's quantity is only known while matching: in onlyClose it may close, never reverse.
    if (m.trading === 'onlyClose' && byCash) o.reduceOnly = true;
    const mark = m.markPrice;
    if (!isMarket && mark !== null && r.fatFinger > 0) {
      // band = mark × fraction, in price units. In safe integers when they are (every real price), else bigint.
      const band = notionalExact(r.fatFinger, mark); // (fraction, price): the split of the price keeps it exact
      const outside = band >= 0 && mark + band <= Number.MAX_SAFE_INTEGER
        ? o.limitPrice > mark + band || o.limitPrice < mark - band
        : outsideBand(o.limitPrice, mark, notional(mark, r.fatFinger));
      if (outside) return lifecycle.reject(o, 'Invalid price');
    }

    // ---- margin ----
    if (!reduceOnly) {
      const leverage = o.leverage;
      const refusal = this.stages.risk.marginRefusal(acc, m, o, pos, byCash, requestedQty);
      if (refusal !== null) return lifecycle.reject(o, refusal);
      if ((acc.leverage.get(m.id) ?? 1) !== leverage) {
        // The order's leverage becomes the instrument's: the open position must fit that tier too (as in position.leverage).
        const posCap = notionalCap(r, leverage);
        if (posCap !== null && pos && pos.qty !== 0 && pos.cost > posCap) {
          return lifecycle.reject(o, capRefusal(leverage));
        }
        acc.leverage.set(m.id, leverage);
        if (pos && pos.qty !== 0) ctx.touchPosition(acc, pos);
      }
    }

    if (o.type === 'STOP_LIMIT') return this.stages.stops.armStop(acc, m, o);
    return this.stages.matching.execute(acc, m, o);
  }
}
