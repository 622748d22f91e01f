/** Order wire records (spec "Order" table, open order item, batch results, cancel results). */
import { Type, type Static } from '@sinclair/typebox';
import { ORDER_GROUPS, ORDER_STATUSES, ORDER_TYPES, SIDES } from '../domain/enums.js';
import type { BatchItemResult, OrderView, TpSlView } from '../engine/records.js';
import { COIN, IsoTime, Nullable, StringEnum, iso, isoOrNull, num, numOrNull } from './common.js';
import { TpSlRecord, toTpSl } from './tpsl.js';

export const FeeItem = Type.Object({ coin: Type.String(), quantity: Type.Number() });

const orderFields = {
  id: Type.String({ description: 'OrderIdOutput (v2 format)' }),
  user: Type.String({ description: "owner's exchange id" }),
  instrument: Type.String(),
  type: StringEnum(ORDER_TYPES),
  side: StringEnum(SIDES),
  status: StringEnum(ORDER_STATUSES),
  rejectedReason: Type.String(),
  quantity: Type.Number(),
  limitPrice: Type.Number(),
  stopPrice: Nullable(Type.Number()),
  group: StringEnum(ORDER_GROUPS),
  unFilledQuantity: Type.Number(),
  cashQuantity: Type.Number(),
  filledAvgPrice: Type.Number(),
  realizedPnL: Type.Number(),
  fee: Type.Array(FeeItem),
  triggeredAt: Nullable(IsoTime),
  exchangeRequestId: Type.Optional(Type.String()),
  createdAt: IsoTime,
  updatedAt: IsoTime,
};

export const OrderRecord = Type.Object(orderFields, { description: 'Order' });
export type OrderRecord = Static<typeof OrderRecord>;

/** Items of GET /api/order carry the order's TpSl list as well. */
export const OrderWithTpSlRecord = Type.Object({ ...orderFields, tpslList: Type.Array(TpSlRecord) });
export type OrderWithTpSlRecord = Static<typeof OrderWithTpSlRecord>;

/** GET /api/order/opened items: the exact subset the spec lists. */
export const OpenOrderRecord = Type.Object({
  id: orderFields.id,
  user: orderFields.user,
  instrument: orderFields.instrument,
  type: orderFields.type,
  side: orderFields.side,
  status: orderFields.status,
  quantity: orderFields.quantity,
  cashQuantity: orderFields.cashQuantity,
  stopPrice: orderFields.stopPrice,
  limitPrice: orderFields.limitPrice,
  unFilledQuantity: orderFields.unFilledQuantity,
  fee: orderFields.fee,
  triggeredAt: orderFields.triggeredAt,
  updatedAt: IsoTime,
  createdAt: IsoTime,
});
export type OpenOrderRecord = Static<typeof OpenOrderRecord>;

/** Batch result item (mass-limit create, batch replace): failReason only when success is false. */
export const BatchResultRecord = Type.Object({
  orderId: Type.String(),
  success: Type.Boolean(),
  failReason: Type.Optional(Type.String()),
});
export type BatchResultRecord = Static<typeof BatchResultRecord>;

/** LimitOrderCancelObject (mass-cancel-by-id): same form as a batch result. */
export const CancelResultRecord = BatchResultRecord;

function avgPrice(o: OrderView): number {
  if (o.filledQuantity <= 0) return 0;
  // filledValue is money (1e-8) of Σ qty×price; divide by quantity (1e-8) back into price units, exact bigint.
  const units = (o.filledValue * 100_000_000n) / BigInt(o.filledQuantity);
  return num(units);
}

export function toOrder(o: OrderView, exchangeRequestId?: string): OrderRecord {
  const rec: OrderRecord = {
    id: o.id,
    user: String(o.userId),
    instrument: o.instrument,
    type: o.type,
    side: o.side,
    status: o.status,
    rejectedReason: o.rejectedReason,
    quantity: num(o.quantity),
    limitPrice: num(o.limitPrice),
    stopPrice: numOrNull(o.stopPrice),
    group: o.group,
    unFilledQuantity: num(o.unFilledQuantity),
    cashQuantity: num(o.cashQuantity),
    filledAvgPrice: avgPrice(o),
    realizedPnL: num(o.realizedPnL),
    fee: [{ coin: COIN, quantity: num(o.fee) }],
    triggeredAt: isoOrNull(o.triggeredAt),
    createdAt: iso(o.createdAt),
    updatedAt: iso(o.updatedAt),
  };
  if (exchangeRequestId !== undefined) rec.exchangeRequestId = exchangeRequestId;
  return rec;
}

export function toOrderWithTpSl(o: OrderView, tpsls: TpSlView[]): OrderWithTpSlRecord {
  return { ...toOrder(o), tpslList: tpsls.map(toTpSl) };
}

export function toOpenOrder(o: OrderView): OpenOrderRecord {
  return {
    id: o.id,
    user: String(o.userId),
    instrument: o.instrument,
    type: o.type,
    side: o.side,
    status: o.status,
    quantity: num(o.quantity),
    cashQuantity: num(o.cashQuantity),
    stopPrice: numOrNull(o.stopPrice),
    limitPrice: num(o.limitPrice),
    unFilledQuantity: num(o.unFilledQuantity),
    fee: [{ coin: COIN, quantity: num(o.fee) }],
    triggeredAt: isoOrNull(o.triggeredAt),
    updatedAt: iso(o.updatedAt),
    createdAt: iso(o.createdAt),
  };
}

export function toBatchResult(r: BatchItemResult): BatchResultRecord {
  return r.success ? { orderId: r.orderId, success: true } : { orderId: r.orderId, success: false, failReason: r.failReason ?? 'Rejected' };
}
