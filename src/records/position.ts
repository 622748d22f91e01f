/** Position wire records. `fundingRate` carries the position's accumulated funding (engine fundingPaid). */
import { Type, type Static } from '@sinclair/typebox';
import { SIDES, type Side } from '../domain/enums.js';
import type { PositionView, TpSlView } from '../engine/records.js';
import { IsoTime, Nullable, StringEnum, iso, num, numOrNull } from './common.js';
import { TpSlRecord, toTpSl } from './tpsl.js';

const positionFields = {
  id: Type.String(),
  user: Type.String(),
  instrument: Type.String(),
  side: StringEnum(SIDES),
  quantity: Type.Number(),
  avgPrice: Type.Number(),
  fundingRate: Type.Number({ description: 'accumulated funding of the position (received +, paid −)' }),
  fee: Type.Number(),
  leverage: Type.Integer(),
  maintenanceMargin: Type.Number(),
  createdAt: IsoTime,
  updatedAt: IsoTime,
};

/** position-{id} channel payload. */
export const PositionRecord = Type.Object(positionFields, { description: 'Position' });
export type PositionRecord = Static<typeof PositionRecord>;

/** GET /api/position list item. */
export const PositionListItemRecord = Type.Object({
  ...positionFields,
  unRealizedPnL: Type.Number(),
  adlLevel: Type.Integer(),
  bankruptcyPrice: Nullable(Type.Number()),
  tpslList: Type.Array(TpSlRecord),
});
export type PositionListItemRecord = Static<typeof PositionListItemRecord>;

export const LeverageChangeRecord = Type.Object({
  instrument: Type.String(),
  side: StringEnum(SIDES),
  quantity: Type.Number(),
  avgPrice: Type.Number(),
  leverage: Type.Integer(),
  maintenanceMargin: Type.Number(),
});
export type LeverageChangeRecord = Static<typeof LeverageChangeRecord>;

export function toPosition(p: PositionView): PositionRecord {
  return {
    id: p.id,
    user: String(p.userId),
    instrument: p.instrument,
    side: p.side,
    quantity: num(p.quantity),
    avgPrice: num(p.avgPrice),
    fundingRate: num(p.fundingPaid),
    fee: num(p.fee),
    leverage: p.leverage,
    maintenanceMargin: num(p.maintenanceMargin),
    createdAt: iso(p.createdAt),
    updatedAt: iso(p.updatedAt),
  };
}

export function toPositionListItem(p: PositionView, tpsls: TpSlView[]): PositionListItemRecord {
  return {
    ...toPosition(p),
    unRealizedPnL: num(p.unRealizedPnL),
    adlLevel: p.adlLevel,
    bankruptcyPrice: numOrNull(p.bankruptcyPrice),
    tpslList: tpsls.map(toTpSl),
  };
}

export function toLeverageChange(p: PositionView): LeverageChangeRecord {
  return {
    instrument: p.instrument,
    side: p.side,
    quantity: num(p.quantity),
    avgPrice: num(p.avgPrice),
    leverage: p.leverage,
    maintenanceMargin: num(p.maintenanceMargin),
  };
}

/** Leverage set while flat: there is no position view, so answer with an empty position. */
export function flatLeverageChange(instrument: string, leverage: number, side: Side = 'BUY'): LeverageChangeRecord {
  return { instrument, side, quantity: 0, avgPrice: 0, leverage, maintenanceMargin: 0 };
}
