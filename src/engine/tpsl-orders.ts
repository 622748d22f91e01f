/**
 * Take-profit / stop-loss: created on a position or attached to an order (waiting for it to fill), armed in
 * the instrument's trigger queue (tpsl-index.ts) while active, fired by a mark crossing its price as a
 * reduce-only market order of group `tpsl`, and ended with the order or position it belongs to.
 */
import { systemOrderId } from '../domain/order-id.js';
import type { Side } from '../domain/enums.js';
import type { Account } from './account.js';
import type { TpSlInput } from './commands.js';
import type { CommandContext } from './command-context.js';
import type { OrderState } from './order.js';
import { validateTpSlInput } from './order-rules.js';
import { fail, sequenceUuid, validUser, type Draft } from './refusal.js';
import { SIGNED_KINDS, signatureRefusal, spendSignature } from './spent-signatures.js';
import type { Stages } from './stages.js';
import { isLiveTpSl, tpslFires, tpslView, type TpSlState } from './tpsl.js';

export class TpSlOrders {
  constructor(private readonly ctx: CommandContext, private readonly stages: Stages) {}

  /** A new live TpSl; `waitsOn`: the order it waits on (status waitOrder), else null. */
  private newTpSl(
    userId: number, instrument: string, input: TpSlInput, orderId: string | null, waitsOn: OrderState | null, status: TpSlState['status'],
  ): TpSlState {
    const ctx = this.ctx;
    const t: TpSlState = {
      id: sequenceUuid('00000002', ++ctx.s.counters.tpsl), userId, instrument, type: input.type, side: input.side,
      quantity: input.quantity, price: input.price, status, orderKey: waitsOn === null ? null : waitsOn.key, orderId, triggerOrder: null,
      triggeredQuantity: 0, cancelledReason: '', createdAt: ctx.ts, updatedAt: ctx.ts,
    };
    ctx.s.tpsls.set(t.id, t);
    ctx.tpslIndex.add(t, status === 'waitOrder' ? waitsOn : null);
    ctx.listTouchedTpSl(t);
    return t;
  }

  /** The TpSl is no longer live (done or cancelled). */
  private dropTpSl(t: TpSlState): void {
    this.ctx.s.tpsls.delete(t.id);
    this.ctx.tpslIndex.delete(t);
  }

  private cancel(t: TpSlState, reason: string): void {
    t.status = 'cancelled';
    t.cancelledReason = reason;
    this.dropTpSl(t);
    this.ctx.touchTpSl(t);
  }

  attachTpSl(acc: Account, o: OrderState, input: TpSlInput): void {
    this.newTpSl(acc.userId, o.instrument, input, o.id, o, 'waitOrder');
  }

  /** The order filled (some): its waiting TpSl become active. */
  activateTpSlsOf(o: OrderState): void {
    const waiting = this.ctx.tpslIndex.takeWaiting(o);
    if (waiting === undefined) return;
    for (const t of waiting) {
      t.status = 'active';
      this.ctx.tpslIndex.arm(t);
      this.ctx.touchTpSl(t);
    }
  }

  /** The order ended: TpSl still waiting on it are cancelled (it never opened a position). */
  endTpSlsOf(o: OrderState): void {
    const waiting = this.ctx.tpslIndex.takeWaiting(o);
    if (waiting === undefined) return;
    for (const t of waiting) {
      if (o.filledQuantity > 0) {
        t.status = 'active';
        this.ctx.tpslIndex.arm(t);
      } else {
        t.status = 'cancelled';
        t.cancelledReason = `Order ${o.status.toLowerCase()} without a fill`;
        this.dropTpSl(t);
      }
      this.ctx.touchTpSl(t);
    }
  }

  endPositionTpSls(userId: number, instrument: string, reason: string): void {
    const live = this.ctx.tpslIndex.ofUser(userId);
    if (live.size === 0) return;
    for (const t of [...live]) if (t.status === 'active' && t.instrument === instrument) this.cancel(t, reason);
  }

  /** Cancels every live TpSl of the user (waiting or active). */
  cancelUserTpSls(userId: number, reason: string): void {
    for (const t of [...this.ctx.tpslIndex.ofUser(userId)]) if (isLiveTpSl(t)) this.cancel(t, reason);
  }

  /** Fires the active TpSl of the instrument whose price the mark has crossed, in creation order. */
  fireDue(instrument: string, mark: number): void {
    for (const t of this.ctx.tpslIndex.takeDue(instrument, mark)) if (t.status === 'active') this.fireTpSl(t);
  }

  /** Trigger: a reduce-only market order of group `tpsl` closes (part of) the position. */
  private fireTpSl(t: TpSlState): void {
    const ctx = this.ctx;
    const acc = ctx.accountOf(t.userId);
    const m = ctx.s.markets.get(t.instrument)!;
    const pos = acc.positions.get(t.instrument);
    // The spec's TpSl states go triggered (the order is being created) → done (it exists). Both happen in
    // this command; `triggered` is published on its own so a client following the channel sees it, and
    // the final state (at the flush) gets a later updatedAt than it.
    t.status = 'triggered';
    t.updatedAt = ctx.nextTime(t.updatedAt);
    ctx.events.push({ type: 'tpsl', tpsl: tpslView(t) });
    t.updatedAt = ctx.nextTime(t.updatedAt); // the final state, flushed at the end of the command
    ctx.listTouchedTpSl(t);
    if (!pos || pos.qty === 0 || (pos.qty > 0) === (t.side === 'BUY')) {
      t.status = 'cancelled';
      t.cancelledReason = 'No position to close';
      this.dropTpSl(t);
      return;
    }
    const size = Math.abs(pos.qty);
    const qty = t.quantity === 0 || t.quantity > size ? size : t.quantity;
    const id = systemOrderId(ctx.ts, ++ctx.s.counters.systemOrder);
    const o = this.stages.entry.place(acc, m, {
      id, instrument: t.instrument, side: t.side, type: 'MARKET', timeInForce: 'IOC', leverage: acc.leverage.get(t.instrument) ?? 1,
      quantity: qty, reduceOnly: true, group: 'tpsl',
    });
    t.triggerOrder = o.id;
    t.triggeredQuantity = o.filledQuantity;
    t.status = 'done';
    this.dropTpSl(t);
  }

  createTpSl(userId: number, instrument: string, type: TpSlState['type'], side: Side, quantity: number, price: number, orderId: string | null): Draft {
    const s = this.ctx.s;
    const m = s.markets.get(instrument);
    if (!validUser(userId)) return fail(400, 'INVALID_USER', 'Invalid user');
    if (!m) return fail(404, 'INSTRUMENT_NOT_FOUND', `Unknown instrument ${instrument}`);
    const bad = validateTpSlInput(m.rules, type, side, quantity, price);
    if (bad) return bad;
    const acc = s.accounts.get(userId);
    const input: TpSlInput = { type, side, quantity, price };
    if (orderId !== null && orderId !== undefined) {
      const found = this.stages.amend.liveOrder(userId, orderId);
      if ('ok' in found) return found;
      if (found.o.instrument !== instrument) return fail(400, 'INVALID_INSTRUMENT', `Order ${orderId} is not on ${instrument}`);
      if (found.o.side === side) return fail(400, 'INVALID_TPSL', 'A TpSl must be on the side opposite to its order');
      const t = this.newTpSl(userId, instrument, input, found.o.id, found.o, found.o.filledQuantity > 0 ? 'active' : 'waitOrder');
      return { ok: true, tpsl: tpslView(t) };
    }
    const pos = acc?.positions.get(instrument);
    if (!pos || pos.qty === 0) return fail(409, 'NO_POSITION', `No open position on ${instrument}`);
    if ((pos.qty > 0) === (side === 'BUY')) return fail(400, 'INVALID_TPSL', 'A TpSl side must close the position (SELL for a long, BUY for a short)');
    const mark = m.markPrice;
    if (mark !== null && tpslFires({ ...input, status: 'active' } as TpSlState, mark)) {
      return fail(400, 'INVALID_TPSL', `${type === 'take-profit' ? 'Take-profit' : 'Stop-loss'} price is already crossed by the mark price`);
    }
    const t = this.newTpSl(userId, instrument, input, null, null, 'active');
    return { ok: true, tpsl: tpslView(t) };
  }

  /** A TpSl create or modify whose signature (if it carries a digest) is spent for good when it succeeds. */
  signed(userId: number, digest: string | undefined, run: () => Draft): Draft {
    const spent = this.ctx.s.spent;
    const used = signatureRefusal(spent, userId, SIGNED_KINDS.tpsl, digest);
    if (used) return { ok: false, error: used };
    const r = run();
    if (r.ok) spendSignature(spent, userId, SIGNED_KINDS.tpsl, digest);
    return r;
  }

  private findTpSl(userId: number, instrument: string, id: string): TpSlState | Draft {
    const t = this.ctx.s.tpsls.get(id);
    if (!t || t.userId !== userId || t.instrument !== instrument || !isLiveTpSl(t)) return fail(404, 'TPSL_NOT_FOUND', `TpSl ${id} not found`);
    return t;
  }

  modifyTpSl(userId: number, instrument: string, id: string, type: TpSlState['type'], side: Side, quantity: number, price: number): Draft {
    const t = this.findTpSl(userId, instrument, id);
    if ('ok' in t) return t;
    const bad = validateTpSlInput(this.ctx.s.markets.get(instrument)!.rules, type, side, quantity, price);
    if (bad) return bad;
    if (side !== t.side) return fail(400, 'INVALID_TPSL', 'The side of a TpSl cannot change');
    t.type = type;
    t.quantity = quantity;
    t.price = price;
    if (t.status === 'active') this.ctx.tpslIndex.arm(t);
    this.ctx.touchTpSl(t);
    return { ok: true, tpsl: tpslView(t) };
  }

  cancelTpSl(userId: number, instrument: string, id: string): Draft {
    const t = this.findTpSl(userId, instrument, id);
    if ('ok' in t) return t;
    this.cancel(t, 'Cancelled by user');
    return { ok: true, tpsl: tpslView(t) };
  }
}
