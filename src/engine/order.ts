/** Mutable engine-side order: also the order book's node (intrusive links). */
import { addSafe, safeOf, type Money, type Units } from '../domain/fixed.js';
import {
  ORDER_GROUPS, ORDER_STATUSES, ORDER_TYPES, SIDES, TIME_IN_FORCE, type OrderGroup, type OrderStatus, type OrderType, type Side,
  type TimeInForce,
} from '../domain/enums.js';
import { canonicalOrderKey } from '../domain/order-id.js';
import type { BookOrder, PriceLevel } from './order-book.js';
import type { OrderView } from './records.js';

/** Orders in these states are finished: nothing changes them any more. */
export function isFinal(status: OrderStatus): boolean {
  return status === 'FILLED' || status === 'CANCELLED' || status === 'REJECTED' || status === 'EXPIRED' || status === 'ERROR';
}

/**
 * Fields a resting order that nothing has happened to does not use, kept out of the order object: such an order
 * (most of the book) shares the frozen defaults and pays one pointer (heap per resting order is a benchmark
 * target). The first fill, change or rare setting gives the order its own copy.
 */
class OrderExtras {
  stopPrice: Units | null = null;
  triggeredAt: number | null = null;
  /** STOP_LIMIT: trigger when the mark rises to (true) or falls to (false) stopPrice. */
  triggerUp = false;
  /** Self-match prevention is on for this order (as taker it never trades against `smpId` peers or its own user). */
  smp = false;
  smpId: string | null = null;
  /** MARKET orders sized by notional (USDT Units); 0 otherwise. */
  cashQuantity: Units = 0;
  /** DAY orders: epoch ms at which they expire (next UTC midnight after creation); 0 = never. */
  expiresAt = 0;
  /** Why the order ended (or was rejected); '' while it is live. */
  rejectedReason = '';
  /** Last change, epoch ms; 0 = never changed (it is then createdAt). */
  updatedAt = 0;
  filledQuantity: Units = 0;
  /**
   * Money totals of the fills. Each is a safe integer (NaN where it may not be one) with its bigint made when
   * asked (null until then) or holding the exact value: a fill adds to them without bigint arithmetic.
   */
  valueSafe = 0;
  valueBig: Money | null = 0n;
  realizedSafe = 0;
  realizedBig: Money | null = 0n;
  feeSafe = 0;
  feeBig: Money | null = 0n;
  /** The leverage or instrument when it does not fit in `flags` (LEVERAGE_IN_EXTRAS, INSTRUMENT_IN_EXTRAS). */
  leverage = 0;
  instrument = '';
}
const NO_EXTRAS: Readonly<OrderExtras> = Object.freeze(new OrderExtras());

/**
 * `flags` packs the booleans and the enumerations of an order into one integer (index into the enum's list):
 * five string fields fewer per resting order (heap per resting order is a benchmark target).
 */
const POST_ONLY = 1;
const REDUCE_ONLY = 2;
const SELL = 1 << 2;
const TIF_SHIFT = 3; // 2 bits
const TYPE_SHIFT = 5; // 2 bits
const GROUP_SHIFT = 7; // 3 bits
const STATUS_SHIFT = 10; // 4 bits
const STATUS_MASK = 0b1111 << STATUS_SHIFT;
/** Listed in the engine's changed orders of the command being applied (always clear between commands). */
const TOUCHED = 1 << 14;
/** Leverage, 9 bits (1 to 300 today); the all-ones value says it is in the extras. */
const LEVERAGE_SHIFT = 15;
const LEVERAGE_IN_EXTRAS = 0b1_1111_1111;
/**
 * Instrument as its number in INSTRUMENT_NAMES, 7 bits (bits 24 to 30: `flags` stays below 2^31, a small
 * integer on 64-bit V8); the all-ones value says it is in the extras (more instruments than that).
 */
const INSTRUMENT_SHIFT = 24;
const INSTRUMENT_IN_EXTRAS = 0b111_1111;

/** Every instrument id an order has named in this process, by number: ids only, shared by all engines. */
const INSTRUMENT_NAMES: string[] = [];
const INSTRUMENT_NUMBERS = new Map<string, number>();

function instrumentNumber(instrument: string): number {
  let n = INSTRUMENT_NUMBERS.get(instrument);
  if (n === undefined) {
    if (INSTRUMENT_NAMES.length >= INSTRUMENT_IN_EXTRAS) return INSTRUMENT_IN_EXTRAS;
    n = INSTRUMENT_NAMES.push(instrument) - 1;
    INSTRUMENT_NUMBERS.set(instrument, n);
  }
  return n;
}

function unknown(what: string, value: unknown): never {
  throw new Error(`unknown ${what} ${String(value)}`);
}

// Index of each value in its enumeration's list (enums.ts), as switches: set on every order and status change,
// and a switch compiles to a few comparisons where indexOf was a builtin call.
function tifIndex(v: TimeInForce): number {
  switch (v) { case 'GTC': return 0; case 'DAY': return 1; case 'IOC': return 2; case 'FOK': return 3; default: return unknown('time in force', v); }
}
function typeIndex(v: OrderType): number {
  switch (v) { case 'LIMIT': return 0; case 'MARKET': return 1; case 'STOP': return 2; case 'STOP_LIMIT': return 3; default: return unknown('order type', v); }
}
function groupIndex(v: OrderGroup): number {
  switch (v) {
    case 'manually': return 0; case 'tpsl': return 1; case 'take-profit': return 2; case 'stop-loss': return 3;
    case 'liquidation': return 4; case 'adl': return 5; case 'otc': return 6; case 'otc-hidden': return 7;
    default: return unknown('order group', v);
  }
}
function statusIndex(v: OrderStatus): number {
  switch (v) {
    case 'INTENTION': return 0; case 'NEW': return 1; case 'PARTIALLY_FILLED': return 2; case 'FILLED': return 3; case 'CANCELLED': return 4;
    case 'REJECTED': return 5; case 'EXPIRED': return 6; case 'REPLACED': return 7; case 'ERROR': return 8;
    default: return unknown('order status', v);
  }
}
// The switches must agree with the lists the getters index.
for (const [list, index] of [[TIME_IN_FORCE, tifIndex], [ORDER_TYPES, typeIndex], [ORDER_GROUPS, groupIndex], [ORDER_STATUSES, statusIndex]] as const) {
  (list as readonly string[]).forEach((v, i) => {
    if ((index as (v: string) => number)(v) !== i) throw new Error(`enum index of ${v} is not ${i}`);
  });
}

export class OrderState implements BookOrder {
  price: Units;
  remaining: Units;
  prev: BookOrder | null = null;
  next: BookOrder | null = null;
  level: PriceLevel | null = null;
  /** Links of the account's live-order list (AccountOrders). */
  accountPrev: OrderState | null = null;
  accountNext: OrderState | null = null;
  /** Arrival number (counters.placement) when it last entered the book or the stop list. */
  placedSeq = 0;
  /** Packed booleans, enumerations, leverage and instrument (see POST_ONLY … INSTRUMENT_SHIFT). */
  private flags: number;
  /** Shared frozen defaults until the order is filled, changed or given a rare field. */
  private extras: OrderExtras = NO_EXTRAS;

  constructor(
    readonly id: string,
    readonly userId: number,
    instrument: string,
    type: OrderType,
    side: Side,
    timeInForce: TimeInForce,
    postOnly: boolean,
    leverage: number,
    public quantity: Units,
    public limitPrice: Units,
    stopPrice: Units | null,
    group: OrderGroup,
    cashQuantity: Units,
    smpId: string | null,
    readonly createdAt: number,
  ) {
    this.price = limitPrice;
    this.remaining = quantity;
    const instrumentNo = instrumentNumber(instrument);
    const leverageFits = Number.isInteger(leverage) && leverage >= 0 && leverage < LEVERAGE_IN_EXTRAS;
    this.flags = (side === 'SELL' ? SELL : 0)
      | (tifIndex(timeInForce) << TIF_SHIFT)
      | (typeIndex(type) << TYPE_SHIFT)
      | (groupIndex(group) << GROUP_SHIFT)
      | (statusIndex('NEW') << STATUS_SHIFT)
      | (postOnly ? POST_ONLY : 0)
      | ((leverageFits ? leverage : LEVERAGE_IN_EXTRAS) << LEVERAGE_SHIFT)
      | (instrumentNo << INSTRUMENT_SHIFT);
    if (!leverageFits) this.writable().leverage = leverage;
    if (instrumentNo === INSTRUMENT_IN_EXTRAS) this.writable().instrument = instrument;
    if (stopPrice !== null) this.writable().stopPrice = stopPrice;
    if (cashQuantity !== 0) this.writable().cashQuantity = cashQuantity;
    if (smpId !== null) this.writable().smpId = smpId;
  }

  get instrument(): string {
    const n = this.flags >>> INSTRUMENT_SHIFT;
    return n === INSTRUMENT_IN_EXTRAS ? this.extras.instrument : INSTRUMENT_NAMES[n];
  }

  get leverage(): number {
    const l = (this.flags >>> LEVERAGE_SHIFT) & LEVERAGE_IN_EXTRAS;
    return l === LEVERAGE_IN_EXTRAS ? this.extras.leverage : l;
  }

  get updatedAt(): number {
    const t = this.extras.updatedAt;
    return t === 0 ? this.createdAt : t;
  }
  set updatedAt(v: number) { if (v !== this.updatedAt) this.writable().updatedAt = v; }

  get filledQuantity(): Units { return this.extras.filledQuantity; }
  set filledQuantity(v: Units) { if (v !== this.extras.filledQuantity) this.writable().filledQuantity = v; }

  get filledValue(): Money { const f = this.extras; return f.valueBig ?? (f.valueBig = BigInt(f.valueSafe)); }
  set filledValue(v: Money) {
    if (v === this.filledValue) return;
    const f = this.writable();
    f.valueBig = v;
    f.valueSafe = safeOf(v);
  }
  get realizedPnL(): Money { const f = this.extras; return f.realizedBig ?? (f.realizedBig = BigInt(f.realizedSafe)); }
  set realizedPnL(v: Money) {
    if (v === this.realizedPnL) return;
    const f = this.writable();
    f.realizedBig = v;
    f.realizedSafe = safeOf(v);
  }
  get fee(): Money { const f = this.extras; return f.feeBig ?? (f.feeBig = BigInt(f.feeSafe)); }
  set fee(v: Money) {
    if (v === this.fee) return;
    const f = this.writable();
    f.feeBig = v;
    f.feeSafe = safeOf(v);
  }

  /**
   * filledValue += value, realizedPnL += realized, fee += fee for safe integers: in numbers while each sum
   * stays a safe integer, else that total in bigints.
   */
  addFillSafe(value: number, realized: number, fee: number): void {
    const f = this.writable();
    const v = addSafe(f.valueSafe, value);
    if (v === v) {
      f.valueSafe = v;
      f.valueBig = null;
    } else {
      this.filledValue = this.filledValue + BigInt(value);
    }
    if (realized !== 0) {
      const r = addSafe(f.realizedSafe, realized);
      if (r === r) {
        f.realizedSafe = r;
        f.realizedBig = null;
      } else {
        this.realizedPnL = this.realizedPnL + BigInt(realized);
      }
    }
    if (fee !== 0) {
      const e = addSafe(f.feeSafe, fee);
      if (e === e) {
        f.feeSafe = e;
        f.feeBig = null;
      } else {
        this.fee = this.fee + BigInt(fee);
      }
    }
  }
  get rejectedReason(): string { return this.extras.rejectedReason; }
  set rejectedReason(v: string) { if (v !== this.extras.rejectedReason) this.writable().rejectedReason = v; }

  private writable(): OrderExtras {
    if (this.extras === NO_EXTRAS) this.extras = new OrderExtras();
    return this.extras;
  }

  get postOnly(): boolean { return (this.flags & POST_ONLY) !== 0; }
  set postOnly(v: boolean) { this.flags = v ? this.flags | POST_ONLY : this.flags & ~POST_ONLY; }
  /** Only reduces the position (position close, TP/SL, liquidation). */
  get touched(): boolean { return (this.flags & TOUCHED) !== 0; }
  set touched(v: boolean) { this.flags = v ? this.flags | TOUCHED : this.flags & ~TOUCHED; }
  get reduceOnly(): boolean { return (this.flags & REDUCE_ONLY) !== 0; }
  set reduceOnly(v: boolean) { this.flags = v ? this.flags | REDUCE_ONLY : this.flags & ~REDUCE_ONLY; }

  get stopPrice(): Units | null { return this.extras.stopPrice; }
  set stopPrice(v: Units | null) { if (v !== this.extras.stopPrice) this.writable().stopPrice = v; }
  get triggeredAt(): number | null { return this.extras.triggeredAt; }
  set triggeredAt(v: number | null) { if (v !== this.extras.triggeredAt) this.writable().triggeredAt = v; }
  get triggerUp(): boolean { return this.extras.triggerUp; }
  set triggerUp(v: boolean) { if (v !== this.extras.triggerUp) this.writable().triggerUp = v; }
  get smp(): boolean { return this.extras.smp; }
  set smp(v: boolean) { if (v !== this.extras.smp) this.writable().smp = v; }
  get smpId(): string | null { return this.extras.smpId; }
  get cashQuantity(): Units { return this.extras.cashQuantity; }
  set cashQuantity(v: Units) { if (v !== this.extras.cashQuantity) this.writable().cashQuantity = v; }
  get expiresAt(): number { return this.extras.expiresAt; }
  set expiresAt(v: number) { if (v !== this.extras.expiresAt) this.writable().expiresAt = v; }

  /** Canonical key of the id (computed when asked: only TpSl links use it, and a resting order saves the field). */
  get key(): string {
    return canonicalOrderKey(this.id)!;
  }

  get side(): Side { return SIDES[(this.flags & SELL) === 0 ? 0 : 1]; }
  get timeInForce(): TimeInForce { return TIME_IN_FORCE[(this.flags >> TIF_SHIFT) & 0b11]; }
  get type(): OrderType { return ORDER_TYPES[(this.flags >> TYPE_SHIFT) & 0b11]; }
  get group(): OrderGroup { return ORDER_GROUPS[(this.flags >> GROUP_SHIFT) & 0b111]; }
  get status(): OrderStatus { return ORDER_STATUSES[(this.flags & STATUS_MASK) >> STATUS_SHIFT]; }
  set status(v: OrderStatus) { this.flags = (this.flags & ~STATUS_MASK) | (statusIndex(v) << STATUS_SHIFT); }

  get isBid(): boolean {
    return (this.flags & SELL) === 0;
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
