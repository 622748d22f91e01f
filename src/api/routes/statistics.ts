/**
 * Public statistics (totals, online users, daily charts) and yield (APR from what fees and the reserve
 * fund earned; a user's share of it). Figures come from the read models (src/store/exchange-statistics.ts) and the
 * engine's ledger; see src/statistics/yield.ts for the formulas.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AccountServices } from '../../accounts/index.js';
import { mulDivHalfUp, SCALE_N } from '../../domain/fixed.js';
import { COIN, ErrorBody, StringEnum, iso, num } from '../../records/common.js';
import {
  OnlineUsersRecord, StatisticChartRecord, TotalStatisticRecord, UserYieldEarnedRecord, YieldAprRecord, YieldStatusRecord,
} from '../records/statistics.js';
import { CHART_NAMES, chartPoints, type ChartName } from '../../statistics/charts.js';
import { accruedShare, aprOf } from '../../statistics/yield.js';
import { DAY_MS } from '../../store/exchange-statistics.js';
import { userOf } from '../authenticate.js';
import type { RouteContext } from '../context.js';
import { badRequest } from '../errors.js';
import { Instrument, TimeParam } from '../schemas.js';

const errors = { '4xx': ErrorBody };
const AprQuery = Type.Object({ days: Type.Optional(Type.Integer({ minimum: 1, maximum: 365, default: 7 })) });
const ChartQuery = Type.Object({
  from: TimeParam,
  to: TimeParam,
  instrument: Type.Optional(Instrument),
  name: Type.Optional(StringEnum(CHART_NAMES, { description: 'one series; all when absent' })),
});
/** Longest chart range, in days. */
const MAX_CHART_DAYS = 366;
/** Accrued yield looks back at most this far. */
const EARNED_MAX_DAYS = 365;

function parseTime(name: string, v: string): number {
  const ms = /^\d{1,15}$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(ms)) throw badRequest('INVALID_TIME', `${name} must be an ISO 8601 time or epoch milliseconds`);
  return ms;
}

/** The engine ledger walks every account: public callers get it at most once per this many ms. */
const LEDGER_CACHE_MS = 1000;

/** 1e-8 rate → JSON fraction. */
const rate = (r: bigint) => num(r);

export function statisticsRoutes(ctx: RouteContext, accounts: AccountServices) {
  const { statistics } = accounts;
  const today = () => Math.floor(ctx.clock() / DAY_MS);
  const windowDays = (days: number) => statistics.daysBetween(today() - days + 1, today());
  let ledgerCache: { at: number; value: ReturnType<NonNullable<RouteContext['engine']['ledger']>> | undefined } | undefined;
  const ledger = () => {
    const now = ctx.clock();
    if (!ledgerCache || now - ledgerCache.at >= LEDGER_CACHE_MS) ledgerCache = { at: now, value: ctx.engine.ledger?.() };
    return ledgerCache.value;
  };

  return async function plugin(app: FastifyInstance) {
    app.get('/api/public/yield/apr', {
      schema: { tags: ['yield'], summary: 'Yearly rate earned by locked collateral over the last `days` UTC days', querystring: AprQuery, response: { 200: YieldAprRecord, ...errors } },
    }, async (req) => {
      const days = (req.query as Static<typeof AprQuery>).days ?? 7;
      const r = aprOf(await windowDays(days));
      return {
        days, apr: rate(r.apr), exchangeFees: num(r.exchangeFees), reserveFundIncome: num(r.reserveIncome), averageTvl: num(r.averageTvl),
        from: iso((today() - days + 1) * DAY_MS), to: iso(ctx.clock()),
      };
    });

    app.get('/api/user/yield/status', {
      config: { auth: true, scope: 'read' },
      schema: { tags: ['yield'], summary: 'Your participation in the yield: balance, share of TVL, 7-day APR', response: { 200: YieldStatusRecord, ...errors } },
    }, async (req) => {
      const user = userOf(req);
      const balance = ctx.engine.account(user.exchangeId).balance;
      const { totalValueLocked } = await statistics.totals();
      const share = totalValueLocked > 0n && balance > 0n ? mulDivHalfUp(balance, SCALE_N, totalValueLocked) : 0n;
      const { apr } = aprOf(await windowDays(7));
      return { participating: balance > 0n, currency: COIN, balance: num(balance), share: rate(share), apr: rate(apr), updatedAt: iso(ctx.clock()) };
    });

    app.get('/api/user/yield/earned', {
      config: { auth: true, scope: 'read' },
      schema: { tags: ['yield'], summary: 'Yield your balance accrued over the last 365 days', response: { 200: UserYieldEarnedRecord, ...errors } },
    }, async (req) => {
      const user = userOf(req);
      const to = today();
      const from = to - EARNED_MAX_DAYS + 1;
      const [days, balances] = await Promise.all([statistics.daysBetween(from, to), accounts.userHistory.dailyBalances(user.exchangeId, from, to)]);
      const earned = accruedShare(days, balances.map((b) => b.balance));
      return { currency: COIN, earned: num(earned), from: iso(from * DAY_MS), to: iso(ctx.clock()), updatedAt: iso(ctx.clock()) };
    });

    app.get('/api/public/statistics/total', {
      schema: { tags: ['statistics'], summary: 'Exchange totals', response: { 200: TotalStatisticRecord, ...errors } },
    }, async () => {
      const t = await statistics.totals();
      const l = ledger();
      return {
        tradingVolume: num(t.tradingVolume),
        feesVolume: num(t.feesVolume),
        reserveFund: num(l?.reserveFund ?? t.reserveIncome),
        exchangeFees: num(l?.fees ?? t.exchangeFees),
        totalValueLocked: num(l?.balances ?? t.totalValueLocked),
        trades: t.trades,
        usersRegistered: await accounts.profiles.userCount(),
        depositors: t.depositors,
        updatedAt: iso(ctx.clock()),
      };
    });

    app.get('/api/public/statistics/online-users', {
      schema: { tags: ['statistics'], summary: 'Live count of real-time connections', response: { 200: OnlineUsersRecord, ...errors } },
    }, async () => ({ count: accounts.onlineConnections(), updatedAt: iso(ctx.clock()) }));

    app.get('/api/public/statistics/charts', {
      schema: { tags: ['statistics'], summary: 'Daily statistics series over [from, to]', querystring: ChartQuery, response: { 200: StatisticChartRecord, ...errors } },
    }, async (req) => {
      const q = req.query as Static<typeof ChartQuery>;
      const from = parseTime('from', q.from);
      const to = parseTime('to', q.to);
      if (from > to) throw badRequest('INVALID_RANGE', 'from must not be after to');
      const fromDay = Math.floor(from / DAY_MS);
      const toDay = Math.floor(to / DAY_MS);
      if (toDay - fromDay + 1 > MAX_CHART_DAYS) throw badRequest('INVALID_RANGE', `The range may span at most ${MAX_CHART_DAYS} days`);
      if (q.instrument !== undefined && !ctx.engine.instrumentConfig(q.instrument)) throw badRequest('UNKNOWN_INSTRUMENT', `Unknown instrument ${q.instrument}`);
      const days = await statistics.daysBetween(fromDay, toDay);
      const needSignUps = q.name === undefined || q.name === 'userRegistred';
      const signUps = needSignUps ? await accounts.profiles.signUpTimes(fromDay * DAY_MS, (toDay + 1) * DAY_MS) : [];
      const names: readonly ChartName[] = q.name ? [q.name] : CHART_NAMES;
      return {
        from: iso(fromDay * DAY_MS),
        to: iso((toDay + 1) * DAY_MS - 1),
        instrument: q.instrument ?? null,
        charts: names.map((name) => {
          const points = chartPoints(name, days, signUps, q.instrument);
          return {
            name,
            unit: name === 'userRegistred' || name === 'activeDepositors' ? 'count' as const : 'usdt' as const,
            points: points.map((p) => ({ date: iso(p.date), value: p.kind === 'money' ? num(p.value) : Number(p.value) })),
          };
        }),
      };
    });
  };
}
