/** Public statistics and yield records (shapes the spec leaves "not shown"). */
import { Type } from '@sinclair/typebox';
import { CHART_NAMES } from '../../statistics/charts.js';
import { IsoTime, Nullable, StringEnum } from '../../records/common.js';

export const TotalStatisticRecord = Type.Object({
  tradingVolume: Type.Number({ description: 'all-time traded notional (each trade once), usdt' }),
  feesVolume: Type.Number({ description: 'all-time fees charged on fills, usdt' }),
  reserveFund: Type.Number({ description: 'liquidation fees collected by the reserve fund (engine total), usdt' }),
  exchangeFees: Type.Number({ description: 'trading fees collected by the exchange (engine total), usdt' }),
  totalValueLocked: Type.Number({ description: 'Σ collateral balances now, usdt' }),
  trades: Type.Integer(),
  usersRegistered: Type.Integer(),
  depositors: Type.Integer({ description: 'users who ever deposited' }),
  updatedAt: IsoTime,
}, { description: 'TotalStatisticResponse' });

export const OnlineUsersRecord = Type.Object({
  count: Type.Integer({ description: 'open real-time (websocket) connections right now' }),
  updatedAt: IsoTime,
}, { description: 'OnlineUsersCountResponse' });

export const ChartRecord = Type.Object({
  name: StringEnum(CHART_NAMES),
  unit: StringEnum(['usdt', 'count'] as const),
  points: Type.Array(Type.Object({ date: IsoTime, value: Type.Number() })),
});

export const StatisticChartRecord = Type.Object({
  from: IsoTime,
  to: IsoTime,
  instrument: Nullable(Type.String({ description: 'narrows tradingVolume and feesVolume; the other series are exchange-wide' })),
  charts: Type.Array(ChartRecord),
}, { description: 'StatisticChartResponse: one point per UTC day in [from, to]' });

export const YieldAprRecord = Type.Object({
  days: Type.Integer(),
  apr: Type.Number({ description: 'yearly rate as a fraction (0.05 = 5 %): (fees + reserve-fund income) / average TVL × 365 / days' }),
  exchangeFees: Type.Number({ description: 'trading fees earned in the window, usdt' }),
  reserveFundIncome: Type.Number({ description: 'liquidation fees paid into the reserve fund in the window, usdt' }),
  averageTvl: Type.Number({ description: 'average of the end-of-day collateral locked, usdt' }),
  from: IsoTime,
  to: IsoTime,
}, { description: 'YieldAprObject' });

export const YieldStatusRecord = Type.Object({
  participating: Type.Boolean({ description: 'the user holds collateral, so shares in the revenue' }),
  currency: Type.String(),
  balance: Type.Number(),
  share: Type.Number({ description: 'balance / total value locked (fraction)' }),
  apr: Type.Number({ description: '7-day APR (fraction)' }),
  updatedAt: IsoTime,
}, { description: 'YieldStatusObject' });

export const UserYieldEarnedRecord = Type.Object({
  currency: Type.String(),
  earned: Type.Number({ description: 'pro-rata share of daily revenue accrued by the balance (accounting figure, not credited)' }),
  from: IsoTime,
  to: IsoTime,
  updatedAt: IsoTime,
}, { description: 'UserYieldEarned' });
