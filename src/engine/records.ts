/**
 * Views the engine hands out (in events and query results). They are immutable copies in engine units:
 * Units (number, 1e-8) for prices/quantities, Money (bigint, 1e-8) for amounts, epoch-ms numbers for
 * times. `src/records` turns them into wire shapes, once, for both REST and the real-time channels.
 */
import type { Money, Units } from '../domain/fixed.js';
import type {
  FillRole, MatcherState, OrderGroup, OrderStatus, OrderType, Side, TimeInForce, TpSlStatus, TpSlType,
  TransferStatus, TransferType,
} from '../domain/enums.js';

export interface OrderView {
  id: string;
  userId: number;
  instrument: string;
  type: OrderType;
  side: Side;
  status: OrderStatus;
  rejectedReason: string;
  timeInForce: TimeInForce;
  postOnly: boolean;
  leverage: number;
  quantity: Units;
  limitPrice: Units;
  stopPrice: Units | null;
  group: OrderGroup;
  unFilledQuantity: Units;
  cashQuantity: Units;
  /** Σ fill quantity × price (money units); filledAvgPrice = filledValue / filledQuantity. */
  filledQuantity: Units;
  filledValue: Money;
  realizedPnL: Money;
  fee: Money;
  triggeredAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface FillView {
  executionId: string;
  userId: number;
  orderId: string;
  instrument: string;
  side: Side;
  role: FillRole;
  quantity: Units;
  price: Units;
  fee: Money;
  realizedPnL: Money;
  createdAt: number;
}

/** Anonymized public trade (taker side). */
export interface TradeView {
  executionId: string;
  instrument: string;
  side: Side;
  quantity: Units;
  price: Units;
  createdAt: number;
}

export interface PositionView {
  id: string;
  userId: number;
  instrument: string;
  side: Side;
  /** Absolute size, Units (0 once closed; a closed position is still reported once). */
  quantity: Units;
  /** Entry cost basis (money units, ≥ 0): avgPrice = costBasis / quantity. */
  costBasis: Money;
  avgPrice: Units;
  leverage: number;
  maintenanceMargin: Money;
  /** Accumulated funding paid(−)/received(+), money units. */
  fundingPaid: Money;
  fee: Money;
  realizedPnL: Money;
  unRealizedPnL: Money;
  markPrice: Units;
  bankruptcyPrice: Units | null;
  adlLevel: number;
  createdAt: number;
  updatedAt: number;
}

export interface AvailableBalanceView {
  userId: number;
  /** Collateral balance ("funding"): deposits − withdrawals + realized PnL − fees ± funding. */
  balance: Money;
  pendingWithdrawals: Money;
  positions: Array<{ instrument: string; side: Side; volume: Money; initialMargin: Money }>;
  openOrders: Array<{ instrument: string; side: Side; unFilledVolume: Money; unFilledInitialMargin: Money }>;
  negativeUnrealizedPnL: Money;
  totalLock: Money;
  availableBalance: Money;
  marginCall: boolean;
  updatedAt: number;
}

export interface TpSlView {
  id: string;
  userId: number;
  instrument: string;
  type: TpSlType;
  side: Side;
  quantity: Units;
  price: Units;
  status: TpSlStatus;
  /** Order this TpSl waits on (attached at creation), if any. */
  orderId: string | null;
  triggerOrder: string | null;
  triggeredQuantity: Units;
  cancelledReason: string;
  createdAt: number;
  updatedAt: number;
}

export interface TransferView {
  id: string;
  userId: number;
  type: TransferType;
  coin: string;
  amount: Money;
  fee: Money;
  status: TransferStatus;
  createdAt: number;
  updatedAt: number;
  /** Withdrawals: the address the chain adapter pays out to. */
  recipient?: string;
}

export interface InstrumentStateView {
  id: string;
  lastPrice: Units | null;
  markPrice: Units | null;
  indexPrice: Units | null;
  openInterest: Units;
  trading: string;
  updatedAt: number;
  /** Last settled funding rate (1e-8 fraction, signed) and when (null = never). */
  fundingRate?: Money;
  fundingRateAt?: number | null;
}

export interface MatcherView {
  state: MatcherState | string;
  updatedAt: number;
}

export interface DepthLevel {
  price: Units;
  quantity: Units;
}

export interface DepthView {
  instrument: string;
  /** Time of the book's last change (ms); strictly increases per instrument. */
  t: number;
  /** Both ascending by price: best ask first, best bid last (wire contract). */
  asks: DepthLevel[];
  bids: DepthLevel[];
}

/** Collateral movement of one user ("user funding" in the spec), one per change. */
export interface FundingChangeView {
  userId: number;
  coin: string;
  /** Signed delta, money units. */
  quantity: Money;
  balance: Money;
  reason: 'deposit' | 'withdraw' | 'realized-pnl' | 'fee' | 'funding' | 'liquidation-fee' | 'withdraw-refund' | 'reserve-fund';
  updatedAt: number;
}

export interface OrderFeeView {
  id: string;
  userId: number;
  orderId: string;
  executionId: string;
  coin: string;
  quantity: Money;
  type: 'order' | 'liquidation' | 'adl';
  createdAt: number;
}

export type EngineEvent =
  | { type: 'order'; order: OrderView }
  | { type: 'fill'; fill: FillView }
  | { type: 'trade'; trade: TradeView }
  | { type: 'position'; position: PositionView }
  | { type: 'funding'; funding: FundingChangeView }
  | { type: 'orderFee'; fee: OrderFeeView }
  | { type: 'book'; instrument: string; t: number }
  | { type: 'instrument'; instrument: InstrumentStateView }
  | { type: 'matcher'; matcher: MatcherView }
  | { type: 'transfer'; transfer: TransferView }
  | { type: 'account'; userId: number; marginCall: boolean; updatedAt: number }
  | { type: 'tpsl'; tpsl: TpSlView }
  | { type: 'price'; instrument: string; indexPrice: Units; markPrice: Units; ts: number }
  /** A funding settlement: the rate applied (1e-8 fraction, signed). */
  | { type: 'fundingRate'; instrument: string; rate: Money; createdAt: number };

/** Refusal: the command changed nothing. `status` is the HTTP status the gateway should use. */
export interface CommandError {
  status: 400 | 403 | 404 | 409 | 422;
  code: string;
  message: string;
}

export interface BatchItemResult {
  orderId: string;
  success: boolean;
  failReason?: string;
}

/** `O` is OrderView on the wire; inside the engine a reply names OrderState objects until the command ends. */
export type Reply<O = OrderView> =
  | { ok: true; order?: O; orders?: O[]; batch?: BatchItemResult[]; position?: PositionView; transfer?: TransferView; tpsl?: TpSlView }
  | { ok: false; error: CommandError };

export interface CommandResult {
  reply: Reply;
  events: EngineEvent[];
  /** A refusal that changed nothing, applied with `retractRefusal`: it used no seq and is not to be journaled. */
  retracted?: true;
}
