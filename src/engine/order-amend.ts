/**
 * Changing live orders: replace (new size and price; a pure size decrease keeps time priority, anything
 * else re-queues and may trade), batch replace, cancel, cancel all of an instrument, cancel by id list.
 */
import type { Account } from './account.js';
import type { ReplaceInput } from './commands.js';
import type { CommandContext } from './command-context.js';
import { isMultiple } from './instrument-rules.js';
import type { OrderState } from './order.js';
import { validPrice } from './order-rules.js';
import type { BatchItemResult } from './records.js';
import { fail, isPositiveUnits, type Draft } from './refusal.js';
import { SIGNED_KINDS, signatureRefusal, spendSignature } from './spent-signatures.js';
import type { Stages } from './stages.js';
import { orderIdDigits } from '../domain/order-id.js';

export const MAX_BATCH_REPLACE = 50;

export class OrderAmend {
  constructor(private readonly ctx: CommandContext, private readonly stages: Stages) {}

  /** The user's live order with this id, or the refusal (409 ORDER_NOT_OPEN for one that has ended). */
  liveOrder(userId: number, orderId: string): { acc: Account; o: OrderState } | Draft {
    const digits = typeof orderId === 'string' ? orderIdDigits(orderId) : null;
    if (digits === null) return fail(400, 'INVALID_ORDER_ID', 'Invalid order id');
    const o = this.ctx.s.orderIds.lookup(userId, digits);
    const acc = this.ctx.s.accounts.get(userId);
    if (!acc || !o) {
      if (o === null) return fail(409, 'ORDER_NOT_OPEN', 'Order is not open');
      return fail(404, 'ORDER_NOT_FOUND', 'Order not found');
    }
    return { acc, o };
  }

  replaceCommand(userId: number, input: ReplaceInput): Draft {
    const r = this.replace(userId, input, null);
    return r.ok ? { ok: true, order: r.order } : r;
  }

  replaceBatch(userId: number, instrument: string, items: ReplaceInput[]): Draft {
    if (!this.ctx.s.markets.has(instrument)) return fail(404, 'INSTRUMENT_NOT_FOUND', `Unknown instrument ${instrument}`);
    if (!Array.isArray(items) || items.length < 1 || items.length > MAX_BATCH_REPLACE) {
      return fail(400, 'INVALID_BATCH', `A batch replace holds 1 to ${MAX_BATCH_REPLACE} items`);
    }
    const batch: BatchItemResult[] = [];
    for (const item of items) {
      const orderId = item && typeof item.orderId === 'string' ? item.orderId : '';
      const r = this.replace(userId, item, instrument);
      batch.push(r.ok ? { orderId, success: true } : { orderId, success: false, failReason: r.error.message });
    }
    return { ok: true, batch };
  }

  /** A replace whose signature (if it carries a digest) is spent, while the order stays open, when it succeeds. */
  private replace(userId: number, input: ReplaceInput, instrument: string | null): Draft {
    if (!input || typeof input !== 'object') return fail(400, 'INVALID_REPLACE', 'Invalid replace');
    const spent = this.ctx.s.spent;
    const used = signatureRefusal(spent, userId, SIGNED_KINDS.replace, input.digest);
    if (used) return { ok: false, error: used };
    const r = this.replaceOrder(userId, input, instrument);
    if (r.ok && r.order !== undefined) spendSignature(spent, userId, SIGNED_KINDS.replace, input.digest, r.order.key);
    return r;
  }

  /**
   * New total quantity and price for a live LIMIT (or STOP_LIMIT, with stopPrice) order. A pure size
   * decrease keeps time priority; a price change or an increase re-queues it (and may trade).
   */
  private replaceOrder(userId: number, input: ReplaceInput, instrument: string | null): Draft {
    const ctx = this.ctx;
    const { lifecycle, risk } = this.stages;
    const found = this.liveOrder(userId, input.orderId);
    if ('ok' in found) return found;
    const { acc, o } = found;
    if (instrument !== null && o.instrument !== instrument) return fail(400, 'INVALID_INSTRUMENT', `Order ${o.id} is not on ${instrument}`);
    const m = ctx.s.markets.get(o.instrument)!;
    const r = m.rules;
    const isStop = o.type === 'STOP_LIMIT';
    if (o.type !== 'LIMIT' && !isStop) return fail(400, 'INVALID_ORDER_TYPE', 'Only limit and stop-limit orders can be replaced');
    if (isStop !== (input.stopPrice !== undefined)) {
      return fail(400, 'INVALID_REPLACE', isStop ? 'A stop-limit replace needs stopPrice' : 'stopPrice applies to stop-limit orders only');
    }
    if (isStop && o.triggeredAt !== null) return fail(400, 'INVALID_REPLACE', 'A triggered stop-limit order is replaced as a limit order');
    const q = input.quantity;
    if (!isPositiveUnits(q) || !isMultiple(q, r.quantityIncrement) || q > r.maxQuantity) return fail(400, 'INVALID_QUANTITY', 'Invalid quantity');
    if (q <= o.filledQuantity) return fail(400, 'INVALID_QUANTITY', 'Quantity must exceed the filled quantity');
    const price = input.limitPrice;
    if (!validPrice(r, price)) return fail(400, 'INVALID_PRICE', 'Invalid price');
    if (isStop && !validPrice(r, input.stopPrice)) return fail(400, 'INVALID_PRICE', 'Invalid stop price');
    if (ctx.s.matcher.state !== 'active') return fail(409, 'TRADING_HALTED', 'Trading is halted');
    if (m.trading === 'none' || m.trading === 'restricted') return fail(409, 'TRADING_NOT_ALLOWED', `Trading is not allowed on ${m.id}`);
    const postOnly = input.postOnly ?? o.postOnly;
    const newRemaining = q - o.filledQuantity;
    const oldRaw = BigInt(o.remaining) * BigInt(o.price);
    const newRaw = BigInt(newRemaining) * BigInt(price);
    if (m.trading === 'onlyClose' && newRaw > oldRaw) return fail(409, 'ONLY_CLOSE', 'Only position-closing orders are allowed');
    if (!isStop && postOnly) {
      const best = m.book.side(!o.isBid).best();
      if (best !== undefined && (o.isBid ? best.price <= price : best.price >= price)) {
        return fail(409, 'POST_ONLY', 'Post-only order would take liquidity');
      }
    }
    if (newRaw > oldRaw) {
      const delta = newRaw - oldRaw;
      if (risk.available(acc, m.id, o.isBid ? delta : 0n, o.isBid ? 0n : delta, acc.leverage.get(m.id) ?? 1) < 0n) return fail(422, 'INSUFFICIENT_BALANCE', 'Insufficient available balance');
    }
    if (input.smp !== undefined && input.smp !== null) {
      o.smp = input.smp.smp === true;
    }
    // ---- apply ----
    lifecycle.reserve(acc, o, o.remaining, o.price, -1);
    lifecycle.reserve(acc, o, newRemaining, price, 1);
    o.postOnly = postOnly;
    o.quantity = q;
    o.limitPrice = price;
    ctx.touchOrder(o);
    if (isStop) {
      o.remaining = newRemaining;
      o.price = price;
      o.stopPrice = input.stopPrice!;
      const ref = m.markPrice ?? m.lastPrice;
      o.triggerUp = ref === null ? o.isBid : o.stopPrice > ref;
      m.stops.retarget(o);
      if (ref !== null && ref === o.stopPrice) this.stages.stops.triggerStop(acc, m, o);
      return { ok: true, order: o };
    }
    const side = m.book.side(o.isBid);
    if (price === o.price && newRemaining <= o.remaining) {
      if (newRemaining < o.remaining) {
        side.reduce(o, o.remaining - newRemaining);
        ctx.touchBook(m);
      }
      return { ok: true, order: o };
    }
    // Re-queue at the back (new price or more size): leave the book, then trade/rest like a new order.
    side.remove(o);
    lifecycle.reserve(acc, o, newRemaining, price, -1);
    lifecycle.unlist(acc, o); // listed again if it rests
    o.price = price;
    o.remaining = newRemaining;
    o.placedSeq = ++ctx.s.counters.placement;
    ctx.touchBook(m);
    this.stages.matching.execute(acc, m, o);
    lifecycle.retireIfDone(acc, o);
    return { ok: true, order: o };
  }

  cancelCommand(userId: number, orderId: string): Draft {
    const found = this.liveOrder(userId, orderId);
    if ('ok' in found) {
      // Cancel after the order finished (e.g. FILLED): no error, nothing changes (spec).
      if (!found.ok && found.error.code === 'ORDER_NOT_OPEN') return { ok: true };
      return found;
    }
    this.stages.lifecycle.cancelLive(found.o, 'CANCELLED', 'Cancelled by user', found.acc);
    return { ok: true, order: found.o };
  }

  cancelAll(userId: number, instrument: string): Draft {
    if (!this.ctx.s.markets.has(instrument)) return fail(404, 'INSTRUMENT_NOT_FOUND', `Unknown instrument ${instrument}`);
    const acc = this.ctx.s.accounts.get(userId);
    const cancelled: OrderState[] = [];
    if (acc) {
      for (const o of acc.orders.values()) {
        if (o.instrument !== instrument) continue;
        this.stages.lifecycle.cancelLive(o, 'CANCELLED', 'Cancelled by user (mass cancel)');
        cancelled.push(o);
      }
    }
    return { ok: true, orders: cancelled };
  }

  cancelMany(userId: number, orderIds: string[]): Draft {
    if (!Array.isArray(orderIds) || orderIds.length < 1 || orderIds.length > 500) return fail(400, 'INVALID_BATCH', 'orderIds must hold 1 to 500 ids');
    const batch: BatchItemResult[] = [];
    for (const orderId of orderIds) {
      const found = this.liveOrder(userId, orderId);
      if ('ok' in found) {
        const notOpen = !found.ok && found.error.code === 'ORDER_NOT_OPEN';
        batch.push({ orderId: String(orderId), success: false, failReason: notOpen ? 'Order is not open' : found.ok ? 'Order not found' : found.error.message });
        continue;
      }
      this.stages.lifecycle.cancelLive(found.o, 'CANCELLED', 'Cancelled by user');
      batch.push({ orderId, success: true });
    }
    return { ok: true, batch };
  }
}
