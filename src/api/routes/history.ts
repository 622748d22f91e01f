/**
 * History and statistics read from the read model: GET /api/position/history, /api/user/funding-transfer,
 * /api/user/balance/chart, /api/user/statistics. Without a read model they answer 503.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ErrorBody, Nullable, Paged, StringEnum } from '../../records/common.js';
import {
  BalanceChartRecord, FundingTransferRecord, PositionHistoryRecord, UserStatisticsRecord,
  toBalanceChart, toFundingTransfer, toPositionHistory, toUserStatistics,
} from '../records/history.js';
import { CLOSE_TYPES, nextPeriod, periodStart, type ChartGroup } from '../../store/index.js';
import { userOf } from '../authenticate.js';
import type { RouteContext } from '../context.js';
import type { HistoryReader } from '../ports.js';
import { ApiError, badRequest } from '../errors.js';
import { Instrument, Limit, Offset, OneOrMany, SideSchema, TimeParam, many } from '../schemas.js';
import { parseTime } from './order-queries.js';

const errors = { '4xx': ErrorBody };
const GROUPS = ['hour', 'day', 'week', 'month', 'year'] as const;
const Next = Type.String({ maxLength: 256, description: 'cursor from the previous page' });

const PositionHistoryQuery = Type.Object({
  fields: Type.Optional(OneOrMany(StringEnum(['fill'] as const, { description: 'deprecated; accepted and ignored' }))),
  instrument: Type.Optional(Nullable(OneOrMany(Instrument))),
  closeType: Type.Optional(Nullable(OneOrMany(StringEnum(CLOSE_TYPES)))),
  side: Type.Optional(SideSchema),
  openAfter: Type.Optional(TimeParam),
  openBefore: Type.Optional(TimeParam),
  closeAfter: Type.Optional(TimeParam),
  closeBefore: Type.Optional(TimeParam),
  sort: Type.Optional(StringEnum(['open-at-asc', 'open-at-desc', 'close-at-asc', 'close-at-desc'] as const, { default: 'open-at-desc' })),
  offset: Type.Optional(Offset),
  limit: Type.Optional(Limit),
  next: Type.Optional(Next),
});

const FundingTransferQuery = Type.Object({
  after: Type.Optional(TimeParam),
  before: Type.Optional(TimeParam),
  offset: Type.Optional(Offset),
  limit: Type.Optional(Limit),
  next: Type.Optional(Next),
});

const ChartQuery = Type.Object({
  after: Type.Optional(TimeParam),
  before: Type.Optional(TimeParam),
  group: Type.Optional(StringEnum(GROUPS, { default: 'month' })),
  sort: Type.Optional(StringEnum(['date-asc', 'date-desc'] as const, { default: 'date-desc' })),
});
const StatisticsQuery = Type.Object({
  after: Type.Optional(TimeParam),
  before: Type.Optional(TimeParam),
  group: Type.Optional(Nullable(StringEnum(['day', 'week', 'month', 'year'] as const, { default: 'month' }))),
});

/** Periods shown when the client gives no `after`: enough for a useful chart without a huge window. */
const DEFAULT_PERIODS: Record<ChartGroup, number> = { hour: 24, day: 30, week: 12, month: 12, year: 5 };

/**
 * Window of a chart request: `before` defaults to the end of the current period, `after` to
 * DEFAULT_PERIODS periods earlier. Both must be sensible or the answer is 400.
 */
export function chartWindow(group: ChartGroup, afterText: string | undefined, beforeText: string | undefined, now: number) {
  const before = parseTime('before', beforeText) ?? nextPeriod(periodStart(now, group), group);
  let after = parseTime('after', afterText);
  if (after === undefined) {
    after = periodStart(before - 1, group);
    for (let i = 1; i < DEFAULT_PERIODS[group]; i++) after = periodStart(after - 1, group);
  }
  if (before <= after) throw badRequest('INVALID_TIME', 'before must be later than after');
  return { after, before };
}

function requireStore<K extends keyof HistoryReader>(ctx: RouteContext, method: K): NonNullable<HistoryReader[K]> {
  const fn = ctx.readStore?.[method];
  if (!fn) throw new ApiError(503, 'HISTORY_UNAVAILABLE', 'History is not available on this server');
  return (fn as (...a: unknown[]) => unknown).bind(ctx.readStore) as NonNullable<HistoryReader[K]>;
}

export function historyRoutes(ctx: RouteContext) {
  return async function plugin(app: FastifyInstance) {
    app.get('/api/position/history', {
      config: { auth: true, scope: 'read' },
      schema: {
        tags: ['positions'], summary: 'Closed positions (one item per position lifetime)', querystring: PositionHistoryQuery,
        response: { 200: Paged(PositionHistoryRecord), ...errors },
      },
    }, async (req) => {
      const q = req.query as Static<typeof PositionHistoryQuery>;
      const page = await requireStore(ctx, 'positionHistory')({
        userId: userOf(req).exchangeId,
        instruments: q.instrument === null ? undefined : many(q.instrument),
        closeTypes: q.closeType === null ? undefined : many(q.closeType),
        side: q.side,
        openAfter: parseTime('openAfter', q.openAfter),
        openBefore: parseTime('openBefore', q.openBefore),
        closeAfter: parseTime('closeAfter', q.closeAfter),
        closeBefore: parseTime('closeBefore', q.closeBefore),
        sort: q.sort ?? 'open-at-desc',
        offset: q.offset ?? 0,
        limit: q.limit ?? 50,
        next: q.next,
      });
      return { list: page.list.map(toPositionHistory), count: page.count, ...(page.next !== undefined && { next: page.next }) };
    });

    app.get('/api/user/funding-transfer', {
      config: { auth: true, scope: 'read' },
      schema: {
        tags: ['funds'], summary: 'Your collateral movements (deposits, withdrawals, PnL, fees, funding), newest first',
        querystring: FundingTransferQuery, response: { 200: Paged(FundingTransferRecord), ...errors },
      },
    }, async (req) => {
      const q = req.query as Static<typeof FundingTransferQuery>;
      const page = await requireStore(ctx, 'fundingTransfers')({
        userId: userOf(req).exchangeId,
        after: parseTime('after', q.after),
        before: parseTime('before', q.before),
        offset: q.offset ?? 0,
        limit: q.limit ?? 50,
        next: q.next,
      });
      return { list: page.list.map(toFundingTransfer), count: page.count, ...(page.next !== undefined && { next: page.next }) };
    });

    app.get('/api/user/balance/chart', {
      config: { auth: true, scope: 'read' },
      schema: {
        tags: ['funds'], querystring: ChartQuery, response: { 200: BalanceChartRecord, ...errors },
        summary: 'Collateral balance per UTC period; default window: the last 24 hours / 30 days / 12 weeks / 12 months / 5 years',
      },
    }, async (req) => {
      const q = req.query as Static<typeof ChartQuery>;
      const group = q.group ?? 'month';
      const w = chartWindow(group, q.after, q.before, ctx.clock());
      const points = await requireStore(ctx, 'balanceChart')({ userId: userOf(req).exchangeId, group, ...w });
      if ((q.sort ?? 'date-desc') === 'date-desc') points.reverse();
      return toBalanceChart(group, points);
    });

    app.get('/api/user/statistics', {
      config: { auth: true, scope: 'read' },
      schema: {
        tags: ['user'], querystring: StatisticsQuery, response: { 200: UserStatisticsRecord, ...errors },
        summary: 'Your trading statistics (fills, volume, fees, realized PnL) for the window and per UTC period, newest first',
      },
    }, async (req) => {
      const q = req.query as Static<typeof StatisticsQuery>;
      const group = q.group ?? 'month';
      const w = chartWindow(group, q.after, q.before, ctx.clock());
      const points = await requireStore(ctx, 'statistics')({ userId: userOf(req).exchangeId, group, ...w });
      return toUserStatistics(group, points.reverse());
    });
  };
}
