/**
 * A market's untriggered STOP_LIMIT orders: in arrival order (a Set, which snapshots list and a cancel
 * leaves in O(1)), and by stop price (a TriggerQueue, derived, so a price tick finds the crossed ones
 * without scanning them all). The queue's seq follows the Set's insertion order, so the stops a tick
 * triggers come out in arrival order, as the scan gave them.
 */
import type { Units } from '../domain/fixed.js';
import type { OrderState } from './order.js';
import { TriggerQueue } from './trigger-queue.js';

export class StopOrders implements Iterable<OrderState> {
  private readonly armed = new Set<OrderState>();
  private readonly triggers = new TriggerQueue<OrderState>();
  private seq = 0;

  get size(): number {
    return this.armed.size;
  }

  [Symbol.iterator](): Iterator<OrderState> {
    return this.armed.values();
  }

  /** Arms `o` (its stopPrice and triggerUp set). */
  add(o: OrderState): void {
    this.armed.add(o);
    this.triggers.set(o, o.stopPrice!, o.triggerUp, ++this.seq);
  }

  delete(o: OrderState): void {
    if (!this.armed.delete(o)) return;
    this.triggers.remove(o);
  }

  /** `o`'s stopPrice or triggerUp changed (a replace): it keeps its place in arrival order. */
  retarget(o: OrderState): void {
    const key = this.triggers.keyOf(o);
    if (key !== undefined) this.triggers.set(o, o.stopPrice!, o.triggerUp, key.seq);
  }

  /**
   * Takes the stops `mark` has crossed (triggerUp: mark ≥ stopPrice, else mark ≤ stopPrice) out of the
   * trigger queue, in arrival order. They stay armed until the caller triggers (and deletes) them.
   */
  takeDue(mark: Units): OrderState[] {
    return this.triggers.takeDue(mark);
  }

  /** What differs between the armed stops and their triggers (invariant check), or null. */
  problem(): string | null {
    if (this.triggers.size !== this.armed.size) return `${this.triggers.size} stop triggers for ${this.armed.size} armed stops`;
    let lastSeq = 0;
    for (const o of this.armed) {
      const key = this.triggers.keyOf(o);
      if (key === undefined) return `stop ${o.id} has no trigger`;
      if (key.price !== o.stopPrice || key.rising !== o.triggerUp) return `stop ${o.id}'s trigger is stale`;
      if (key.seq <= lastSeq) return `stop ${o.id} is out of arrival order`;
      lastSeq = key.seq;
    }
    return null;
  }
}
