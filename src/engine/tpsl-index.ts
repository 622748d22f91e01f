/**
 * The live TpSl (EngineState.tpsls) grouped the ways the engine looks them up: by user, by the order a TpSl
 * waits on (status waitOrder), and the active ones by instrument in a TriggerQueue by price. Derived, not
 * state: the engine rebuilds it from the state on restore.
 *
 * Without it every fill, every order that ended and every price tick scanned all TpSl of the venue
 * (the cost: docs/performance.md, Engine).
 *
 * Each group lists its TpSl in creation order, the order of EngineState.tpsls (a Set keeps insertion order
 * and deletes in O(1)), and a tick fires its TpSl in that order too (their trigger's seq), so events come
 * out in the same order as filtering the whole map did, and a restored engine behaves like the one that was
 * never stopped.
 */
import type { Units } from '../domain/fixed.js';
import type { OrderState } from './order.js';
import { tpslFiresRising, type TpSlState } from './tpsl.js';
import { TriggerQueue } from './trigger-queue.js';

const NONE: ReadonlySet<TpSlState> = new Set();

export class TpSlIndex {
  private readonly byUser = new Map<number, Set<TpSlState>>();
  private readonly waiting = new Map<OrderState, TpSlState[]>();
  private readonly waitingOn = new Map<TpSlState, OrderState>();
  /** Creation order of the live TpSl (the seq of their triggers). */
  private readonly createdSeq = new Map<TpSlState, number>();
  private seq = 0;
  private readonly triggers = new Map<string, TriggerQueue<TpSlState>>();

  /** Adds a live TpSl; `order`: the live order it waits on (status waitOrder), else null. */
  add(t: TpSlState, order: OrderState | null): void {
    groupOf(this.byUser, t.userId).add(t);
    this.createdSeq.set(t, ++this.seq);
    if (t.status === 'active') this.arm(t);
    if (order !== null) {
      const list = this.waiting.get(order);
      if (list === undefined) this.waiting.set(order, [t]);
      else list.push(t);
      this.waitingOn.set(t, order);
    }
  }

  /** The TpSl left the live set (EngineState.tpsls). */
  delete(t: TpSlState): void {
    ungroup(this.byUser, t.userId, t);
    this.createdSeq.delete(t);
    this.triggers.get(t.instrument)?.remove(t);
    const order = this.waitingOn.get(t);
    if (order === undefined) return;
    this.waitingOn.delete(t);
    const list = this.waiting.get(order)!;
    list.splice(list.indexOf(t), 1);
    if (list.length === 0) this.waiting.delete(order);
  }

  /**
   * The TpSl waiting on `o`, in creation order, which stop waiting: the caller gives each its new status
   * (active, or cancelled and deleted). Undefined when none waits on it (the common case: one Map lookup).
   */
  takeWaiting(o: OrderState): TpSlState[] | undefined {
    if (this.waiting.size === 0) return undefined;
    const list = this.waiting.get(o);
    if (list === undefined) return undefined;
    this.waiting.delete(o);
    for (const t of list) this.waitingOn.delete(t);
    return list;
  }

  /** `t` is active with its current type and price: (re)places its trigger. Call on each such change. */
  arm(t: TpSlState): void {
    let queue = this.triggers.get(t.instrument);
    if (queue === undefined) this.triggers.set(t.instrument, (queue = new TriggerQueue()));
    queue.set(t, t.price, tpslFiresRising(t), this.createdSeq.get(t)!);
  }

  /**
   * Takes the active TpSl on `instrument` that `mark` fires out of the trigger queue, in creation order.
   * They stay live until the caller fires (and deletes) them.
   */
  takeDue(instrument: string, mark: Units): TpSlState[] {
    return this.triggers.get(instrument)?.takeDue(mark) ?? [];
  }

  /** The user's live TpSl, in creation order. */
  ofUser(userId: number): ReadonlySet<TpSlState> {
    return this.byUser.get(userId) ?? NONE;
  }

  /** What differs from the live TpSl `live` (invariant check), or null. */
  problemWith(live: ReadonlyMap<string, TpSlState>): string | null {
    let inUsers = 0;
    for (const group of this.byUser.values()) {
      for (const t of group) {
        if (live.get(t.id) !== t) return `TpSl ${t.id} is indexed but not live`;
        inUsers++;
      }
    }
    if (inUsers !== live.size) return `TpSl index holds ${inUsers} of ${live.size} live TpSl`;
    let armed = 0;
    for (const queue of this.triggers.values()) armed += queue.size;
    let active = 0;
    let lastSeq = 0;
    for (const t of live.values()) {
      const seq = this.createdSeq.get(t);
      if (seq === undefined || seq <= lastSeq) return `TpSl ${t.id} is out of creation order`;
      lastSeq = seq;
      const key = this.triggers.get(t.instrument)?.keyOf(t);
      if (t.status === 'active') {
        active++;
        if (key === undefined || key.price !== t.price || key.rising !== tpslFiresRising(t) || key.seq !== seq) return `TpSl ${t.id} has no current trigger`;
      } else if (key !== undefined) return `TpSl ${t.id} (${t.status}) has a trigger`;
      const order = this.waitingOn.get(t);
      if ((t.status === 'waitOrder') !== (order !== undefined)) return `TpSl ${t.id} (${t.status}) is ${order ? '' : 'not '}indexed as waiting`;
      if (order !== undefined && (order.userId !== t.userId || order.key !== t.orderKey || !order.isLive)) return `TpSl ${t.id} waits on the wrong order`;
    }
    if (armed !== active) return `${armed} TpSl triggers for ${active} active TpSl`;
    return null;
  }
}

function groupOf<K>(groups: Map<K, Set<TpSlState>>, key: K): Set<TpSlState> {
  let group = groups.get(key);
  if (group === undefined) groups.set(key, (group = new Set()));
  return group;
}

function ungroup<K>(groups: Map<K, Set<TpSlState>>, key: K, t: TpSlState): void {
  const group = groups.get(key);
  if (group === undefined) return;
  group.delete(t);
  if (group.size === 0) groups.delete(key);
}
