/** Take-profit / stop-loss triggers kept by the engine (live ones only; history lives in the read model). */
import type { Units } from '../domain/fixed.js';
import type { Side, TpSlStatus, TpSlType } from '../domain/enums.js';
import type { TpSlView } from './records.js';

export interface TpSlState {
  id: string;
  userId: number;
  instrument: string;
  type: TpSlType;
  /** Side of the closing order: SELL closes a long, BUY closes a short. */
  side: Side;
  /** Units; 0 = the whole position. */
  quantity: Units;
  price: Units;
  status: TpSlStatus;
  /** Canonical key of the order this TpSl waits on (status waitOrder), else null. */
  orderKey: string | null;
  orderId: string | null;
  triggerOrder: string | null;
  triggeredQuantity: Units;
  cancelledReason: string;
  createdAt: number;
  updatedAt: number;
}

export function tpslView(t: TpSlState): TpSlView {
  return {
    id: t.id, userId: t.userId, instrument: t.instrument, type: t.type, side: t.side, quantity: t.quantity, price: t.price,
    status: t.status, orderId: t.orderId, triggerOrder: t.triggerOrder, triggeredQuantity: t.triggeredQuantity,
    cancelledReason: t.cancelledReason, createdAt: t.createdAt, updatedAt: t.updatedAt,
  };
}

/**
 * Whether the mark has crossed the trigger. A SELL TpSl closes a long: take-profit fires at mark ≥ price,
 * stop-loss at mark ≤ price. A BUY TpSl closes a short: take-profit at mark ≤ price, stop-loss at mark ≥ price.
 */
export function tpslFires(t: TpSlState, mark: Units): boolean {
  const above = mark >= t.price;
  const below = mark <= t.price;
  if (t.side === 'SELL') return t.type === 'take-profit' ? above : below;
  return t.type === 'take-profit' ? below : above;
}

/** A TpSl still able to fire or to become active. */
export function isLiveTpSl(t: TpSlState): boolean {
  return t.status === 'waitOrder' || t.status === 'active';
}
