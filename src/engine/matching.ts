/**
 * Matching: a LIMIT or MARKET order (or a triggered stop, or a liquidation's order) runs against the opposite
 * side of the book in price-time priority, within its limit (a market order within mark ± slippageLimit),
 * with self-match prevention, post-only and FOK checks; each trade is settled on both sides
 * (settlement.ts), and the remainder rests (GTC/DAY) or expires (IOC/FOK/market).
 */
import { notional, notionalExact, notionalFrom, SCALE_N, type Money, type Units } from '../domain/fixed.js';
import type { Account } from './account.js';
import type { CommandContext } from './command-context.js';
import type { Market } from './market.js';
import type { OrderState } from './order.js';
import type { Stages } from './stages.js';

export class Matching {
  constructor(private readonly ctx: CommandContext, private readonly stages: Stages) {}

  /** Runs a LIMIT or MARKET order (or a triggered stop) against the book and rests/ends the remainder. */
  execute(acc: Account, m: Market, o: OrderState): OrderState {
    const lifecycle = this.stages.lifecycle;
    const isMarket = o.type === 'MARKET';
    const byCash = isMarket && o.cashQuantity > 0 && o.quantity === 0;
    let limit: Units | null = isMarket ? null : o.limitPrice;
    if (isMarket && m.markPrice !== null && m.rules.slippageLimit > 0) {
      const exact = notionalExact(m.rules.slippageLimit, m.markPrice); // (fraction, price): stays exact in doubles
      const band = exact >= 0 ? exact : Number(notionalFrom(exact, m.markPrice, m.rules.slippageLimit));
      limit = o.isBid ? m.markPrice + band : Math.max(m.markPrice - band, 1);
    }
    const opposite = m.book.side(!o.isBid).best();
    const crosses = opposite !== undefined && (limit === null || (o.isBid ? opposite.price <= limit : opposite.price >= limit));
    if (o.postOnly && crosses) return lifecycle.reject(o, 'Post-only order would take liquidity');
    if (o.timeInForce === 'FOK' && !this.canFillCompletely(m, o, limit, byCash)) {
      return lifecycle.finishOrder(o, 'EXPIRED', 'Fill-or-kill order could not be filled completely');
    }
    if (crosses) this.match(acc, m, o, limit, byCash);
    if (byCash) {
      o.quantity = o.filledQuantity;
      o.remaining = 0;
    }
    if (o.remaining === 0 && o.filledQuantity > 0 && (!byCash || o.status !== 'EXPIRED')) {
      if (byCash) return lifecycle.finishOrder(o, o.filledQuantity > 0 ? 'FILLED' : 'EXPIRED', '');
      this.stages.tpsl.endTpSlsOf(o); // TpSl still waiting on it resolve as for a filled maker (none were activated if its fills closed the position)
      return o; // FILLED by the last fill
    }
    if (isMarket || o.timeInForce === 'IOC' || o.timeInForce === 'FOK') {
      return lifecycle.finishOrder(o, 'EXPIRED', o.filledQuantity > 0 ? 'Unfilled remainder expired' : 'No liquidity within the price limit');
    }
    lifecycle.rest(acc, m, o);
    return o;
  }

  /** FOK pre-check: the liquidity within `limit` (not counting self-match-prevented makers) covers the order. */
  private canFillCompletely(m: Market, o: OrderState, limit: Units | null, byCash: boolean): boolean {
    const side = m.book.side(!o.isBid);
    let qtyLeft = o.quantity;
    let cashLeft = BigInt(o.cashQuantity);
    const inc = m.rules.quantityIncrement;
    // Best level first, only as far as needed (`levels` would list the whole side).
    for (let level = side.best(); level !== undefined; level = side.worse(level)) {
      if (limit !== null && (o.isBid ? level.price > limit : level.price < limit)) return false;
      for (let n = level.head as OrderState | null; n !== null; n = n.next as OrderState | null) {
        if (selfMatch(o, n)) continue;
        if (byCash) {
          let q = Number((cashLeft * SCALE_N) / BigInt(level.price));
          q -= q % inc;
          if (q <= 0) return true;
          const take = q < n.remaining ? q : n.remaining;
          cashLeft -= notional(take, level.price);
          if (take < n.remaining) return true;
        } else {
          qtyLeft -= n.remaining;
          if (qtyLeft <= 0) return true;
        }
      }
    }
    return false;
  }

  /** Price-time priority matching of `taker` against the opposite side, down to `limit` (null = none). */
  private match(acc: Account, m: Market, taker: OrderState, limit: Units | null, byCash: boolean): void {
    const side = m.book.side(!taker.isBid);
    const inc = m.rules.quantityIncrement;
    let cashLeft = BigInt(taker.cashQuantity);
    for (;;) {
      const level = side.best();
      if (level === undefined) break;
      if (limit !== null && (taker.isBid ? level.price > limit : level.price < limit)) break;
      let maker = level.head as OrderState | null;
      let stop = false;
      while (maker !== null) {
        const next = maker.next as OrderState | null;
        if (selfMatch(taker, maker)) {
          this.stages.lifecycle.cancelLive(maker, 'CANCELLED', 'Self-match prevention');
          maker = next;
          continue;
        }
        let q: Units;
        if (byCash) {
          let affordable = Number((cashLeft * SCALE_N) / BigInt(level.price));
          affordable -= affordable % inc;
          if (taker.reduceOnly) {
            const p = acc.positions.get(m.id); // reduce-only by cash: never more than what is left of the position
            if (p === undefined || affordable > Math.abs(p.qty)) affordable = p ? Math.abs(p.qty) : 0;
          }
          if (affordable <= 0) { stop = true; break; }
          q = affordable < maker.remaining ? affordable : maker.remaining;
        } else {
          q = taker.remaining < maker.remaining ? taker.remaining : maker.remaining;
        }
        const value = this.fill(m, maker, taker, acc, q, level.price, byCash);
        if (byCash) cashLeft -= value;
        if (!byCash && taker.remaining === 0) { stop = true; break; }
        maker = next;
      }
      if (stop) break;
      if (taker.reduceOnly) {
        const pos = acc.positions.get(m.id);
        if (!pos || pos.qty === 0) break;
      }
    }
  }

  /** One trade between a resting maker and the taker at `price`. Returns the notional. */
  private fill(m: Market, maker: OrderState, taker: OrderState, takerAcc: Account, q: Units, price: Units, byCash: boolean): Money {
    const ctx = this.ctx;
    const { lifecycle, settlement } = this.stages;
    const valueUnits = notionalExact(q, price); // −1 when not a safe integer
    const value = notionalFrom(valueUnits, q, price);
    const book = m.book.side(maker.isBid);
    const makerAcc = ctx.accountOf(maker.userId);
    lifecycle.reserve(makerAcc, maker, q, price, -1);
    if (q === maker.remaining) {
      book.remove(maker);
      maker.remaining = 0;
    } else {
      book.reduce(maker, q);
    }
    if (!byCash) taker.remaining -= q;
    const executionId = String(++ctx.s.counters.execution);
    settlement.settle(m, makerAcc, maker, 'MAKER', q, price, value, valueUnits, executionId);
    settlement.settle(m, takerAcc, taker, 'TAKER', q, price, value, valueUnits, executionId);
    if (maker.remaining === 0) {
      maker.status = 'FILLED';
      lifecycle.unlist(makerAcc, maker);
      this.stages.tpsl.endTpSlsOf(maker);
    } else {
      maker.status = 'PARTIALLY_FILLED';
    }
    taker.status = !byCash && taker.remaining === 0 ? 'FILLED' : 'PARTIALLY_FILLED';
    m.lastPrice = price;
    ctx.touchBook(m);
    ctx.touchMarket(m);
    ctx.events.push({ type: 'trade', trade: { executionId, instrument: m.id, side: taker.side, quantity: q, price, createdAt: ctx.ts } });
    return value;
  }
}

function selfMatch(taker: OrderState, maker: OrderState): boolean {
  if (!taker.smp) return false;
  return maker.userId === taker.userId || (taker.smpId !== null && maker.smpId === taker.smpId);
}
