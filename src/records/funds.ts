/** Money-movement and balance records: transfers, user funding, fee events, balances, power. */
import { Type, type Static } from '@sinclair/typebox';
import { formatUnits, type Money } from '../domain/fixed.js';
import { SIDES, TRANSFER_STATUSES, TRANSFER_TYPES } from '../domain/enums.js';
import type { AvailableBalanceView, FundingChangeView, OrderFeeView, TransferView } from '../engine/records.js';
import { COIN, IsoTime, StringEnum, iso, num } from './common.js';

export const TransferRecord = Type.Object({
  id: Type.String(),
  user: Type.String(),
  type: StringEnum(TRANSFER_TYPES),
  coin: Type.String(),
  amount: Type.Number(),
  fee: Type.Number(),
  status: StringEnum(TRANSFER_STATUSES),
  createdAt: IsoTime,
  updatedAt: IsoTime,
}, { description: 'Transfer' });
export type TransferRecord = Static<typeof TransferRecord>;

export function toTransfer(t: TransferView): TransferRecord {
  return {
    id: t.id, user: String(t.userId), type: t.type, coin: t.coin, amount: num(t.amount), fee: num(t.fee),
    status: t.status, createdAt: iso(t.createdAt), updatedAt: iso(t.updatedAt),
  };
}

/** transfer-update-{id} channel: Transfer + exchangeId. */
export function toTransferEvent(t: TransferView): TransferRecord & { exchangeId: number } {
  return { ...toTransfer(t), exchangeId: t.userId };
}

/** GET /api/user/funding item: the user's collateral balance per coin. */
export const UserFundingRecord = Type.Object({ coin: Type.String(), quantity: Type.Number(), updatedAt: IsoTime });
export type UserFundingRecord = Static<typeof UserFundingRecord>;

export function toUserFunding(balance: Money, updatedAt: number): UserFundingRecord {
  return { coin: COIN, quantity: num(balance), updatedAt: iso(updatedAt) };
}

/** funding-{id} channel payload: quantity is a STRING (the new balance). */
export const FundingEventRecord = Type.Object({ user: Type.String(), coin: Type.String(), quantity: Type.String(), updatedAt: IsoTime });
export type FundingEventRecord = Static<typeof FundingEventRecord>;

export function toFundingEvent(f: FundingChangeView): FundingEventRecord {
  return { user: String(f.userId), coin: f.coin, quantity: formatUnits(f.balance), updatedAt: iso(f.updatedAt) };
}

/** order-fee-{id} channel payload. */
export const OrderFeeEventRecord = Type.Object({
  id: Type.String(),
  user: Type.String(),
  order: Type.String(),
  fill: Type.String(),
  coin: Type.String(),
  quantity: Type.String(),
  createdAt: IsoTime,
  type: StringEnum(['order', 'liquidation', 'adl'] as const),
});
export type OrderFeeEventRecord = Static<typeof OrderFeeEventRecord>;

export function toOrderFeeEvent(f: OrderFeeView): OrderFeeEventRecord {
  return {
    id: f.id, user: String(f.userId), order: f.orderId, fill: f.executionId, coin: f.coin,
    quantity: formatUnits(f.quantity), createdAt: iso(f.createdAt), type: f.type,
  };
}

/**
 * GET /api/market/available-balance. Per-item volumes are strings and the totals numbers, as the public
 * client's types read them; the deprecated `positions`/`openOrders` maps are kept for older clients.
 */
export const AvailableBalanceRecord = Type.Object({
  currency: Type.String(),
  funding: Type.Object({ currency: Type.String(), balance: Type.Number() }),
  position: Type.Array(Type.Object({
    instrument: Type.String(), side: StringEnum(SIDES), volume: Type.String(), initialMargin: Type.String(),
  })),
  openOrder: Type.Array(Type.Object({
    instrument: Type.String(), side: StringEnum(SIDES), unFilledVolume: Type.String(), unFilledInitialMargin: Type.String(),
  })),
  availableBalance: Type.Number(),
  updatedAt: IsoTime,
  positions: Type.Record(Type.String(), Type.Number(), { description: 'deprecated: volume per instrument' }),
  openOrders: Type.Record(Type.String(), Type.Number(), { description: 'deprecated: unfilled volume per instrument' }),
}, { description: 'Available balance' });
export type AvailableBalanceRecord = Static<typeof AvailableBalanceRecord>;

export function toAvailableBalance(a: AvailableBalanceView): AvailableBalanceRecord {
  const positions: Record<string, number> = {};
  const openOrders: Record<string, bigint> = {};
  for (const p of a.positions) positions[p.instrument] = num(p.volume);
  for (const o of a.openOrders) openOrders[o.instrument] = (openOrders[o.instrument] ?? 0n) + o.unFilledVolume;
  return {
    currency: COIN,
    funding: { currency: COIN, balance: num(a.balance) },
    position: a.positions.map((p) => ({
      instrument: p.instrument, side: p.side, volume: formatUnits(p.volume), initialMargin: formatUnits(p.initialMargin),
    })),
    openOrder: a.openOrders.map((o) => ({
      instrument: o.instrument, side: o.side, unFilledVolume: formatUnits(o.unFilledVolume), unFilledInitialMargin: formatUnits(o.unFilledInitialMargin),
    })),
    availableBalance: num(a.availableBalance),
    updatedAt: iso(a.updatedAt),
    positions,
    openOrders: Object.fromEntries(Object.entries(openOrders).map(([k, v]) => [k, num(v)])),
  };
}

/** GET /api/market/power. */
export const PowerRecord = Type.Object({
  buy: Type.Object({ power: Type.Number() }),
  sell: Type.Object({ power: Type.Number() }),
});
export type PowerRecord = Static<typeof PowerRecord>;

export function toPower(p: { buy: bigint; sell: bigint }): PowerRecord {
  return { buy: { power: num(p.buy) }, sell: { power: num(p.sell) } };
}

/** GET /auth/user/balance (and deprecated GET /api/user/balance) item. */
export const BalanceItemRecord = Type.Object({
  currency: Type.String(),
  balance: Type.Number(),
  availableBalance: Type.Number(),
  balanceUSD: Type.Number({ description: 'collateral is USD-pegged: equals balance' }),
}, { description: 'BalanceItem' });
export type BalanceItemRecord = Static<typeof BalanceItemRecord>;

export function toBalanceItems(a: AvailableBalanceView): BalanceItemRecord[] {
  return [{ currency: COIN, balance: num(a.balance), availableBalance: num(a.availableBalance), balanceUSD: num(a.balance) }];
}
