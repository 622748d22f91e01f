/**
 * Stop-limit orders: an untriggered stop reserves margin like a resting order and waits, in its market's
 * trigger queue (stop-orders.ts), for the mark to cross its stop price; then it runs as a limit order.
 */
import type { Account } from './account.js';
import type { CommandContext } from './command-context.js';
import type { Market } from './market.js';
import type { OrderState } from './order.js';
import type { Stages } from './stages.js';

export class StopTriggers {
  constructor(private readonly ctx: CommandContext, private readonly stages: Stages) {}

  armStop(acc: Account, m: Market, o: OrderState): OrderState {
    const lifecycle = this.stages.lifecycle;
    const ref = m.markPrice ?? m.lastPrice;
    const stop = o.stopPrice!;
    o.triggerUp = ref === null ? o.isBid : stop > ref;
    lifecycle.reserve(acc, o, o.remaining, o.price, 1);
    lifecycle.list(acc, o);
    m.stops.add(o);
    // A DAY stop expires at the next UTC midnight whether or not it has triggered by then.
    lifecycle.scheduleExpiry(o);
    if (ref !== null && ref === stop) this.triggerStop(acc, m, o);
    return o;
  }

  triggerStop(acc: Account, m: Market, o: OrderState): void {
    const ctx = this.ctx;
    const lifecycle = this.stages.lifecycle;
    m.stops.delete(o);
    lifecycle.reserve(acc, o, o.remaining, o.price, -1);
    lifecycle.unlist(acc, o); // listed again if it rests
    o.triggeredAt = ctx.ts;
    o.placedSeq = ++ctx.s.counters.placement;
    ctx.touchOrder(o);
    if (ctx.s.matcher.state !== 'active' || m.trading === 'none' || m.trading === 'restricted') {
      lifecycle.finishOrder(o, 'CANCELLED', 'Trading halted when the stop triggered');
    } else {
      this.stages.matching.execute(acc, m, o);
    }
    lifecycle.retireIfDone(acc, o);
  }

  /** Stops and TpSl whose trigger the mark has crossed, in arrival order. */
  runTriggers(m: Market): void {
    const mark = m.markPrice;
    if (mark === null) return;
    for (const o of m.stops.takeDue(mark)) if (o.isLive && o.triggeredAt === null) this.triggerStop(this.ctx.accountOf(o.userId), m, o);
    this.stages.tpsl.fireDue(m.id, mark);
  }
}
