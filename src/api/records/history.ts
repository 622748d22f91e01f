/**
 * History and statistics records whose shapes the spec leaves open (FundingTransferObject,
 * PositionHistoryFillObject, BalanceChart, UserStatisticsResponse). Designed here, documented in OpenAPI.
 */
import { Type, type Static } from '@sinclair/typebox';
import { SIDES } from '../../domain/enums.js';
import type { FundingChangeView } from '../../engine/records.js';
import type { BalancePoint, ChartGroup, PositionHistoryView, StatisticsPoint } from '../../store/index.js';
import { IsoTime, StringEnum, iso, num } from '../../records/common.js';

export const FUNDING_REASONS = ['deposit', 'withdraw', 'realized-pnl', 'fee', 'funding', 'liquidation-fee', 'withdraw-refund', 'reserve-fund'] as const;

/** GET /api/user/funding-transfer item: one collateral movement. */
export const FundingTransferRecord = Type.Object({
  user: Type.String(),
  coin: Type.String(),
  quantity: Type.Number({ description: 'signed change' }),
  balance: Type.Number({ description: 'balance after the change' }),
  type: StringEnum(FUNDING_REASONS),
  createdAt: IsoTime,
  updatedAt: IsoTime,
}, { description: 'FundingTransferObject' });
export type FundingTransferRecord = Static<typeof FundingTransferRecord>;

export function toFundingTransfer(f: FundingChangeView): FundingTransferRecord {
  return {
    user: String(f.userId), coin: f.coin, quantity: num(f.quantity), balance: num(f.balance), type: f.reason,
    createdAt: iso(f.updatedAt), updatedAt: iso(f.updatedAt),
  };
}

/** GET /api/position/history item: one closed position lifetime. */
export const PositionHistoryRecord = Type.Object({
  id: Type.String(),
  user: Type.String(),
  instrument: Type.String(),
  positionId: Type.String(),
  side: StringEnum(SIDES),
  quantity: Type.Number({ description: 'largest size held during the lifetime' }),
  avgPrice: Type.Number({ description: 'average entry price' }),
  closePrice: Type.Number({ description: 'average exit price' }),
  realizedPnL: Type.Number(),
  fee: Type.Number(),
  fundingPaid: Type.Number(),
  closeType: StringEnum(['manually', 'liquidation', 'adl', 'tpsl'] as const),
  openAt: IsoTime,
  closeAt: IsoTime,
  createdAt: IsoTime,
  updatedAt: IsoTime,
}, { description: 'PositionHistoryFillObject' });
export type PositionHistoryRecord = Static<typeof PositionHistoryRecord>;

export function toPositionHistory(p: PositionHistoryView): PositionHistoryRecord {
  return {
    id: p.id, user: String(p.userId), instrument: p.instrument, positionId: p.positionId, side: p.side,
    quantity: num(p.maxQuantity), avgPrice: num(p.avgEntryPrice), closePrice: num(p.avgExitPrice),
    realizedPnL: num(p.realizedPnL), fee: num(p.fee), fundingPaid: num(p.fundingPaid), closeType: p.closeType,
    openAt: iso(p.openAt), closeAt: iso(p.closeAt), createdAt: iso(p.openAt), updatedAt: iso(p.closeAt),
  };
}

export const BalanceChartRecord = Type.Object({
  group: StringEnum(['hour', 'day', 'week', 'month', 'year'] as const),
  list: Type.Array(Type.Object({
    date: IsoTime,
    balance: Type.Number({ description: 'collateral balance at the end of the period' }),
    change: Type.Number({ description: 'net collateral movement within the period' }),
  })),
}, { description: 'BalanceChart: one point per UTC period (hour … year)' });
export type BalanceChartRecord = Static<typeof BalanceChartRecord>;

export function toBalanceChart(group: ChartGroup, points: BalancePoint[]): BalanceChartRecord {
  return { group, list: points.map((p) => ({ date: iso(p.start), balance: num(p.balance), change: num(p.change) })) };
}

const StatsValues = {
  fills: Type.Integer(),
  volume: Type.Number({ description: 'Σ fill quantity × price (USDT)' }),
  fee: Type.Number(),
  realizedPnL: Type.Number(),
};
export const UserStatisticsRecord = Type.Object({
  group: StringEnum(['hour', 'day', 'week', 'month', 'year'] as const),
  total: Type.Object(StatsValues),
  list: Type.Array(Type.Object({ date: IsoTime, ...StatsValues })),
}, { description: 'UserStatisticsResponse: trading totals of the window and per UTC period' });
export type UserStatisticsRecord = Static<typeof UserStatisticsRecord>;

export function toUserStatistics(group: ChartGroup, points: StatisticsPoint[]): UserStatisticsRecord {
  let fills = 0;
  let volume = 0n;
  let fee = 0n;
  let pnl = 0n;
  for (const p of points) {
    fills += p.fills;
    volume += p.volume;
    fee += p.fee;
    pnl += p.realizedPnL;
  }
  return {
    group,
    total: { fills, volume: num(volume), fee: num(fee), realizedPnL: num(pnl) },
    list: points.map((p) => ({ date: iso(p.start), fills: p.fills, volume: num(p.volume), fee: num(p.fee), realizedPnL: num(p.realizedPnL) })),
  };
}
