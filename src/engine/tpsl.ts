/** Take-profit / stop-loss triggers kept by the engine (live ones only; history lives in the read model). */
import type { Units } from '../domain/fixed.js';
import type { TpSlView } from './records.js';

/** The engine's TpSl: its public view plus the key of the order it waits on (status waitOrder), else null. */
export interface TpSlState extends TpSlView {
  orderKey: string | null;
}

export function tpslView(t: TpSlState): TpSlView {
  const { orderKey: _internal, ...view } = t;
  return view;
}

/**
 * Whether the mark has crossed the trigger. A SELL TpSl closes a long: take-profit fires at mark ≥ price,
 * stop-loss at mark ≤ price. A BUY TpSl closes a short: take-profit at mark ≤ price, stop-loss at mark ≥ price.
 */
export function tpslFires(t: TpSlState, mark: Units): boolean {
  return tpslFiresRising(t) ? mark >= t.price : mark <= t.price;
}

/** Whether the TpSl fires on a rising mark (mark ≥ price: SELL take-profit, BUY stop-loss) rather than a falling one. */
export function tpslFiresRising(t: Pick<TpSlState, 'side' | 'type'>): boolean {
  return (t.side === 'SELL') === (t.type === 'take-profit');
}

/** A TpSl still able to fire or to become active. */
export function isLiveTpSl(t: TpSlState): boolean {
  return t.status === 'waitOrder' || t.status === 'active';
}
