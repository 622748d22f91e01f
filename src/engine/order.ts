/** Mutable engine-side order: also the order book's node (intrusive links). */
import type { Money, Units } from '../domain/fixed.js';
import type { OrderGroup, OrderStatus, OrderType, Side, TimeInForce } from '../domain/enums.js';
import type { BookOrder, PriceLevel } from './order-book.js';
import type { OrderView } from './records.js';

/** Orders in these states are finished: nothing changes them any more. */
export function isFinal(status: OrderStatus): boolean {
  return status === 'FILLED' || status === 'CANCELLED' || status === 'REJECTED' || status === 'EXPIRED' || status === 'ERROR';
}

export class OrderState implements BookOrder {
  price: Units;
  remaining: Units;
  prev: BookOrder | null = null;
  next: BookOrder | null = null;
  level: PriceLevel | null = null;
  status: OrderStatus = 'NEW';
  rejectedReason = '';
  filledQuantity: Units = 0;
  filledValue: Money = 0n;
  realizedPnL: Money = 0n;
  fee: Money = 0n;
  triggeredAt: number | null = null;
  updatedAt: number;
  /** STOP_LIMIT: trigger when the mark rises to (true) or falls to (false) stopPrice. */
  triggerUp = false;
  /** Self-match prevention is on for this order (as taker it never trades against `smpId` peers or its own user). */
  smp = false;
  /** Only reduces the position (position close, TP/SL, liquidation). */
  reduceOnly = false;
  /** DAY orders: epoch ms at which they expire (next UTC midnight after creation); 0 = never. */
  expiresAt = 0;
  /** Arrival number (counters.placement) when it last entered the book or the stop list. */
  placedSeq = 0;

  constructor(
    readonly id: string,
    readonly key: string,
    readonly userId: number,
    readonly instrument: string,
    readonly type: OrderType,
    readonly side: Side,
    readonly timeInForce: TimeInForce,
    public postOnly: boolean,
    public leverage: number,
    public quantity: Units,
    public limitPrice: Units,
    public stopPrice: Units | null,
    readonly group: OrderGroup,
    public cashQuantity: Units,
    readonly smpId: string | null,
    readonly createdAt: number,
  ) {
    this.price = limitPrice;
    this.remaining = quantity;
    this.updatedAt = createdAt;
  }

  get isBid(): boolean {
    return this.side === 'BUY';
  }

  /** Resting in the book or waiting for its stop trigger. */
  get isLive(): boolean {
    return !isFinal(this.status);
  }

  view(): OrderView {
    return {
      id: this.id, userId: this.userId, instrument: this.instrument, type: this.type, side: this.side,
      status: this.status, rejectedReason: this.rejectedReason, timeInForce: this.timeInForce, postOnly: this.postOnly,
      leverage: this.leverage, quantity: this.quantity, limitPrice: this.limitPrice, stopPrice: this.stopPrice,
      group: this.group,
      // A finished order reports what was never filled (quantity − filled); a live one, what still rests.
      unFilledQuantity: isFinal(this.status) ? this.quantity - this.filledQuantity : this.remaining,
      cashQuantity: this.cashQuantity,
      filledQuantity: this.filledQuantity, filledValue: this.filledValue, realizedPnL: this.realizedPnL, fee: this.fee,
      triggeredAt: this.triggeredAt, createdAt: this.createdAt, updatedAt: this.updatedAt,
    };
  }
}
