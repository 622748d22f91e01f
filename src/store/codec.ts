/**
 * Rows ↔ engine views. Drivers return integers as number, bigint (SQLite safeIntegers) or string
 * (pg int8, count(*)), so every integer read is converted here, exactly: Units/times must be safe
 * integers, Money stays bigint end to end. Money is written as bigint (both drivers bind it exactly).
 */
import { canonicalOrderKey } from '../domain/order-id.js';
import type {
  FillView, FundingChangeView, OrderFeeView, OrderView, TpSlView, TradeView, TransferView,
} from '../engine/records.js';
import type { Selectable } from 'kysely';
import type {
  FillsTable, FundingChangesTable, OrderFeesTable, OrdersTable, PositionHistoryTable, TpslTable, TradesTable,
  TransfersTable,
} from './schema.js';
import type { CloseType, PositionHistoryView } from './types.js';

type IntLike = number | bigint | string;

/** A safe-integer number (Units, times, ids); throws rather than rounding silently. */
export function toNum(v: IntLike): number {
  const n = typeof v === 'number' ? v : Number(v);
  if (!Number.isSafeInteger(n)) throw new Error(`read-store: integer out of safe range: ${String(v)}`);
  return n;
}

export function toNumOrNull(v: IntLike | null): number | null {
  return v === null ? null : toNum(v);
}

export function toMoney(v: IntLike): bigint {
  return typeof v === 'bigint' ? v : BigInt(v);
}

/** Key used for v1/v2 order-id lookups; unparseable ids keep their own text so they still round-trip. */
export function orderKeyOf(id: string): string {
  return canonicalOrderKey(id) ?? id;
}

// ---- views → rows (projector) ----

export function orderRow(o: OrderView, seq: number) {
  return {
    user_id: o.userId,
    id: o.id,
    order_key: orderKeyOf(o.id),
    instrument: o.instrument,
    type: o.type,
    side: o.side,
    status: o.status,
    rejected_reason: o.rejectedReason,
    time_in_force: o.timeInForce,
    post_only: o.postOnly ? 1 : 0,
    leverage: o.leverage,
    quantity: o.quantity,
    limit_price: o.limitPrice,
    stop_price: o.stopPrice,
    order_group: o.group,
    unfilled_quantity: o.unFilledQuantity,
    cash_quantity: o.cashQuantity,
    filled_quantity: o.filledQuantity,
    filled_value: o.filledValue,
    realized_pnl: o.realizedPnL,
    fee: o.fee,
    triggered_at: o.triggeredAt,
    created_at: o.createdAt,
    updated_at: o.updatedAt,
    seq,
  };
}

export function fillRow(f: FillView, seq: number, ev: number) {
  return {
    execution_id: f.executionId,
    order_id: f.orderId,
    order_key: orderKeyOf(f.orderId),
    user_id: f.userId,
    instrument: f.instrument,
    side: f.side,
    role: f.role,
    quantity: f.quantity,
    price: f.price,
    fee: f.fee,
    realized_pnl: f.realizedPnL,
    created_at: f.createdAt,
    seq,
    ev,
  };
}

export function tradeRow(t: TradeView, seq: number, ev: number) {
  return {
    execution_id: t.executionId,
    instrument: t.instrument,
    side: t.side,
    quantity: t.quantity,
    price: t.price,
    created_at: t.createdAt,
    seq,
    ev,
  };
}

export function fundingRow(f: FundingChangeView, seq: number, ev: number) {
  return {
    seq,
    ev,
    user_id: f.userId,
    coin: f.coin,
    quantity: f.quantity,
    balance: f.balance,
    reason: f.reason,
    updated_at: f.updatedAt,
  };
}

export function orderFeeRow(f: OrderFeeView, seq: number, ev: number) {
  return {
    id: f.id,
    user_id: f.userId,
    order_id: f.orderId,
    execution_id: f.executionId,
    coin: f.coin,
    quantity: f.quantity,
    type: f.type,
    created_at: f.createdAt,
    seq,
    ev,
  };
}

export function transferRow(t: TransferView, seq: number) {
  return {
    id: t.id,
    user_id: t.userId,
    type: t.type,
    coin: t.coin,
    amount: t.amount,
    fee: t.fee,
    status: t.status,
    created_at: t.createdAt,
    updated_at: t.updatedAt,
    seq,
  };
}

export function tpslRow(t: TpSlView, seq: number) {
  return {
    user_id: t.userId,
    id: t.id,
    instrument: t.instrument,
    type: t.type,
    side: t.side,
    quantity: t.quantity,
    price: t.price,
    status: t.status,
    order_id: t.orderId,
    order_key: t.orderId === null ? null : orderKeyOf(t.orderId),
    trigger_order: t.triggerOrder,
    triggered_quantity: t.triggeredQuantity,
    cancelled_reason: t.cancelledReason,
    created_at: t.createdAt,
    updated_at: t.updatedAt,
    seq,
  };
}

// ---- rows → views (queries) ----

export function orderView(r: Selectable<OrdersTable>): OrderView {
  return {
    id: r.id,
    userId: toNum(r.user_id),
    instrument: r.instrument,
    type: r.type as OrderView['type'],
    side: r.side as OrderView['side'],
    status: r.status as OrderView['status'],
    rejectedReason: r.rejected_reason,
    timeInForce: r.time_in_force as OrderView['timeInForce'],
    postOnly: toNum(r.post_only) !== 0,
    leverage: toNum(r.leverage),
    quantity: toNum(r.quantity),
    limitPrice: toNum(r.limit_price),
    stopPrice: toNumOrNull(r.stop_price),
    group: r.order_group as OrderView['group'],
    unFilledQuantity: toNum(r.unfilled_quantity),
    cashQuantity: toNum(r.cash_quantity),
    filledQuantity: toNum(r.filled_quantity),
    filledValue: toMoney(r.filled_value),
    realizedPnL: toMoney(r.realized_pnl),
    fee: toMoney(r.fee),
    triggeredAt: toNumOrNull(r.triggered_at),
    createdAt: toNum(r.created_at),
    updatedAt: toNum(r.updated_at),
  };
}

export function fillView(r: Selectable<FillsTable>): FillView {
  return {
    executionId: r.execution_id,
    userId: toNum(r.user_id),
    orderId: r.order_id,
    instrument: r.instrument,
    side: r.side as FillView['side'],
    role: r.role as FillView['role'],
    quantity: toNum(r.quantity),
    price: toNum(r.price),
    fee: toMoney(r.fee),
    realizedPnL: toMoney(r.realized_pnl),
    createdAt: toNum(r.created_at),
  };
}

export function tradeView(r: Selectable<TradesTable>): TradeView {
  return {
    executionId: r.execution_id,
    instrument: r.instrument,
    side: r.side as TradeView['side'],
    quantity: toNum(r.quantity),
    price: toNum(r.price),
    createdAt: toNum(r.created_at),
  };
}

export function fundingView(r: Selectable<FundingChangesTable>): FundingChangeView {
  return {
    userId: toNum(r.user_id),
    coin: r.coin,
    quantity: toMoney(r.quantity),
    balance: toMoney(r.balance),
    reason: r.reason as FundingChangeView['reason'],
    updatedAt: toNum(r.updated_at),
  };
}

export function orderFeeView(r: Selectable<OrderFeesTable>): OrderFeeView {
  return {
    id: r.id,
    userId: toNum(r.user_id),
    orderId: r.order_id,
    executionId: r.execution_id,
    coin: r.coin,
    quantity: toMoney(r.quantity),
    type: r.type as OrderFeeView['type'],
    createdAt: toNum(r.created_at),
  };
}

export function transferView(r: Selectable<TransfersTable>): TransferView {
  return {
    id: r.id,
    userId: toNum(r.user_id),
    type: r.type as TransferView['type'],
    coin: r.coin,
    amount: toMoney(r.amount),
    fee: toMoney(r.fee),
    status: r.status as TransferView['status'],
    createdAt: toNum(r.created_at),
    updatedAt: toNum(r.updated_at),
  };
}

export function tpslView(r: Selectable<TpslTable>): TpSlView {
  return {
    id: r.id,
    userId: toNum(r.user_id),
    instrument: r.instrument,
    type: r.type as TpSlView['type'],
    side: r.side as TpSlView['side'],
    quantity: toNum(r.quantity),
    price: toNum(r.price),
    status: r.status as TpSlView['status'],
    orderId: r.order_id,
    triggerOrder: r.trigger_order,
    triggeredQuantity: toNum(r.triggered_quantity),
    cancelledReason: r.cancelled_reason,
    createdAt: toNum(r.created_at),
    updatedAt: toNum(r.updated_at),
  };
}

const SCALE = 100_000_000n;

/** value (money, 1e-8) / quantity (Units) → price in Units, rounded half-up; 0 when quantity is 0. */
export function avgPrice(value: bigint, quantity: bigint): number {
  if (quantity === 0n) return 0;
  const p = value * SCALE;
  const q = p / quantity;
  const r = p % quantity;
  return toNum(r * 2n >= quantity ? q + 1n : q);
}

export function positionHistoryView(r: Selectable<PositionHistoryTable>): PositionHistoryView {
  return {
    id: r.id,
    userId: toNum(r.user_id),
    instrument: r.instrument,
    positionId: r.position_id,
    side: r.side as PositionHistoryView['side'],
    openAt: toNum(r.open_at),
    closeAt: toNum(r.close_at ?? 0),
    maxQuantity: toNum(r.max_quantity),
    avgEntryPrice: avgPrice(toMoney(r.entry_value), toMoney(r.entry_quantity)),
    avgExitPrice: avgPrice(toMoney(r.exit_value), toMoney(r.exit_quantity)),
    realizedPnL: toMoney(r.realized_pnl),
    fee: toMoney(r.fee),
    fundingPaid: toMoney(r.funding_paid),
    closeType: (r.close_type ?? 'manually') as CloseType,
  };
}
