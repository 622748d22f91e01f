/**
 * An order's life outside matching: resting in the book with its margin reserved, listed on its account and
 * under its id, ending (rejected, expired, cancelled, filled) with its TpSl, and DAY expiry at UTC midnight.
 * Also the daily forgetting of order ids too old to be used again.
 */
import type { Units } from '../domain/fixed.js';
import { dayNumber, ORDER_ID_EPOCH_MS, orderIdDay } from '../domain/order-id.js';
import { openVolumeOf, type Account } from './account.js';
import type { CommandContext } from './command-context.js';
import type { Market } from './market.js';
import type { OrderState } from './order.js';
import type { Stages } from './stages.js';

const DAY_MS = 86_400_000;

export class OrderLifecycle {
  /** DAY orders in expiry order (derived from the live orders). */
  private dayOrders: OrderState[] = [];

  constructor(private readonly ctx: CommandContext, private readonly stages: Stages) {
    for (const acc of ctx.s.accounts.values()) {
      for (const o of acc.orders.values()) if (o.expiresAt > 0) this.dayOrders.push(o);
    }
    this.dayOrders.sort((a, b) => a.expiresAt - b.expiresAt || a.placedSeq - b.placedSeq);
  }

  /** DAY orders expire at the first command at or after the UTC midnight following their creation. */
  expireDayOrders(): void {
    const list = this.dayOrders;
    const now = this.ctx.ts;
    if (list.length === 0 || list[0].expiresAt > now) return;
    let i = 0;
    while (i < list.length && list[i].expiresAt <= now) i++;
    // Expire in a canonical order, not the list's (a restored engine rebuilds the list sorted differently),
    // so the events are the same with or without a snapshot restore in between.
    const due = list.splice(0, i).filter((o) => o.isLive);
    due.sort((a, b) => a.createdAt - b.createdAt || a.userId - b.userId || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    for (const o of due) this.cancelLive(o, 'EXPIRED', 'Day order expired');
  }

  /** Used order ids older than the id window can never be used again (the window refuses them): forget them. */
  pruneUsedIds(): void {
    const s = this.ctx.s;
    const today = dayNumber(this.ctx.ts);
    if (today <= s.prunedDay) return;
    s.prunedDay = today;
    s.orderIds.prune(today - 1);
  }

  /** A DAY order (resting or armed stop) expires at the next UTC midnight after its creation. */
  scheduleExpiry(o: OrderState): void {
    if (o.timeInForce === 'DAY' && o.expiresAt === 0) {
      o.expiresAt = ORDER_ID_EPOCH_MS + (dayNumber(o.createdAt) + 1) * DAY_MS;
      this.dayOrders.push(o);
    }
  }

  /** Adds (sign 1) or releases (sign −1) quantity × price on the order's side of the account's open volume. */
  reserve(acc: Account, o: OrderState, quantity: Units, price: Units, sign: 1 | -1): void {
    openVolumeOf(acc, o.instrument).change(o.isBid, quantity, price, sign);
  }

  /** The order is live (resting or an armed stop): its account lists it and its id leads to it. */
  list(acc: Account, o: OrderState): void {
    acc.orders.add(o);
    this.ctx.s.orderIds.setLive(acc.userId, o.id, orderIdDay(o.id), o);
  }

  /** The order stops being live (for good, unless it is listed again at once): its id stays used. */
  unlist(acc: Account, o: OrderState): void {
    acc.orders.delete(o);
    this.ctx.s.orderIds.retire(acc.userId, o.id, orderIdDay(o.id));
  }

  /** After running an order that was not listed: it rested (listed) or it is done (its id is now used). */
  retireIfDone(acc: Account, o: OrderState): void {
    if (!acc.orders.has(o)) this.ctx.s.orderIds.retire(acc.userId, o.id, orderIdDay(o.id));
  }

  /** Puts the order's remainder in the book and reserves its margin. */
  rest(acc: Account, m: Market, o: OrderState): void {
    m.book.side(o.isBid).add(o);
    this.reserve(acc, o, o.remaining, o.price, 1);
    this.list(acc, o);
    this.scheduleExpiry(o);
    this.ctx.touchBook(m);
  }

  reject(o: OrderState, reason: string): OrderState {
    o.status = 'REJECTED';
    o.rejectedReason = reason;
    o.remaining = 0;
    this.stages.tpsl.endTpSlsOf(o);
    return o;
  }

  /** Ends an order that is not (or no longer) resting: status + reason; attached TpSl end with it. */
  finishOrder(o: OrderState, status: 'EXPIRED' | 'CANCELLED' | 'FILLED', reason: string): OrderState {
    o.status = status;
    o.rejectedReason = reason;
    o.remaining = 0;
    this.ctx.touchOrder(o);
    this.stages.tpsl.endTpSlsOf(o);
    return o;
  }

  /** Takes a live order (resting or armed stop) out and releases its margin. */
  cancelLive(o: OrderState, status: 'CANCELLED' | 'EXPIRED', reason: string, acc = this.ctx.accountOf(o.userId)): void {
    const m = this.ctx.s.markets.get(o.instrument)!;
    if (o.level !== null) {
      m.book.side(o.isBid).remove(o);
      this.ctx.touchBook(m);
    } else {
      m.stops.delete(o);
    }
    this.reserve(acc, o, o.remaining, o.price, -1);
    this.unlist(acc, o);
    this.finishOrder(o, status, reason);
  }
}
