/** TpSl wire record: quantity/price travel as STRINGS (spec), zero quantity = whole position. */
import { Type, type Static } from '@sinclair/typebox';
import { formatUnits } from '../domain/fixed.js';
import { SIDES, TPSL_STATUSES, TPSL_TYPES } from '../domain/enums.js';
import type { TpSlView } from '../engine/records.js';
import { IsoTime, Nullable, StringEnum, iso } from './common.js';

export const TpSlRecord = Type.Object({
  id: Type.String(),
  instrument: Type.String(),
  type: StringEnum(TPSL_TYPES),
  side: StringEnum(SIDES),
  quantity: Type.String({ description: 'decimal; "0" means the full position' }),
  price: Type.String(),
  status: StringEnum(TPSL_STATUSES),
  triggerOrder: Nullable(Type.String()),
  triggeredQuantity: Type.String(),
  cancelledReason: Type.String(),
  createdAt: IsoTime,
  updatedAt: IsoTime,
}, { description: 'TpSl' });
export type TpSlRecord = Static<typeof TpSlRecord>;

export function toTpSl(t: TpSlView): TpSlRecord {
  return {
    id: t.id,
    instrument: t.instrument,
    type: t.type,
    side: t.side,
    quantity: formatUnits(t.quantity),
    price: formatUnits(t.price),
    status: t.status,
    triggerOrder: t.triggerOrder,
    triggeredQuantity: formatUnits(t.triggeredQuantity),
    cancelledReason: t.cancelledReason,
    createdAt: iso(t.createdAt),
    updatedAt: iso(t.updatedAt),
  };
}
