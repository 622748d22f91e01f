/** Fill and trade wire records. */
import { Type, type Static } from '@sinclair/typebox';
import { FILL_ROLES, SIDES } from '../domain/enums.js';
import type { FillView, TradeView } from '../engine/records.js';
import { IsoTime, StringEnum, iso, num } from './common.js';

/** GET /api/fill list item. */
export const FillRecord = Type.Object({
  id: Type.String({ description: 'execution id' }),
  order: Type.String(),
  instrument: Type.String(),
  fillQuantity: Type.Number(),
  fillPrice: Type.Number(),
  fillRole: StringEnum(FILL_ROLES),
  createdAt: IsoTime,
}, { description: 'Fill' });
export type FillRecord = Static<typeof FillRecord>;

export function toFill(f: FillView): FillRecord {
  return {
    id: f.executionId,
    order: f.orderId,
    instrument: f.instrument,
    fillQuantity: num(f.quantity),
    fillPrice: num(f.price),
    fillRole: f.role,
    createdAt: iso(f.createdAt),
  };
}

/** Order fill (GET /api/order/{orderId}/fill items and the orderFills-{id} channel). */
export const OrderFillRecord = Type.Object({
  executionId: Type.String(),
  instrument: Type.String(),
  side: StringEnum(SIDES),
  fillQuantity: Type.Number(),
  fillPrice: Type.Number(),
  createdAt: IsoTime,
  makerTakerFlag: StringEnum(FILL_ROLES),
  orderId: Type.String(),
}, { description: 'Order fill' });
export type OrderFillRecord = Static<typeof OrderFillRecord>;

export function toOrderFill(f: FillView): OrderFillRecord {
  return {
    executionId: f.executionId,
    instrument: f.instrument,
    side: f.side,
    fillQuantity: num(f.quantity),
    fillPrice: num(f.price),
    createdAt: iso(f.createdAt),
    makerTakerFlag: f.role,
    orderId: f.orderId,
  };
}

/** Anonymized public trade (GET recent-trades, recent-trade-{instrument} channel). */
export const RecentTradeRecord = Type.Object({
  executionId: Type.String(),
  instrument: Type.String(),
  side: StringEnum(SIDES),
  fillQuantity: Type.Number(),
  fillPrice: Type.Number(),
  createdAt: IsoTime,
}, { description: 'Recent trade' });
export type RecentTradeRecord = Static<typeof RecentTradeRecord>;

export function toRecentTrade(t: TradeView): RecentTradeRecord {
  return {
    executionId: t.executionId,
    instrument: t.instrument,
    side: t.side,
    fillQuantity: num(t.quantity),
    fillPrice: num(t.price),
    createdAt: iso(t.createdAt),
  };
}

/** trade-{instrument} channel payload. */
export const TradeEventRecord = Type.Object({
  instrument: Type.String(),
  side: StringEnum(SIDES),
  fillQuantity: Type.Number(),
  fillPrice: Type.Number(),
  createdAt: IsoTime,
});
export type TradeEventRecord = Static<typeof TradeEventRecord>;

export function toTradeEvent(t: TradeView): TradeEventRecord {
  return { instrument: t.instrument, side: t.side, fillQuantity: num(t.quantity), fillPrice: num(t.price), createdAt: iso(t.createdAt) };
}
