/**
 * Adapts the read model's queries (src/store, filter objects per user) to the gateway's HistoryReader
 * port (src/api/ports.ts). API time bounds are inclusive; the store's `before` is exclusive, hence +1.
 */
import type { ChartQuery, FillQuery, FundingTransferQuery, HistoryReader, OrderQuery, PositionHistoryQuery, TpSlQuery } from '../api/ports.js';
import { ApiError, badRequest } from '../api/errors.js';
import type { FillView, OrderView, TpSlView, TradeView } from '../engine/records.js';
import type { ExchangeStatistics } from '../store/exchange-statistics.js';
import { StoreQueryError, type StoreQueries, type StoreStatistics } from '../store/index.js';
import type { Page } from '../store/types.js';
import type { CandleQuery } from '../store/candles.js';
import type { AccountServices } from '../accounts/index.js';
import { ReadModelBehindError } from './projector-feed.js';

const plusOne = (t: number | undefined): number | undefined => (t === undefined ? undefined : t + 1);

export interface HistoryReaderOptions {
  /** Bucketed charts and statistics (absent: those routes answer that they are unavailable). */
  stats?: StoreStatistics;
  /**
   * Resolves when the read model holds every command applied so far; awaited before each read so a client
   * sees the effect of a command it was acknowledged (projection runs behind the replies). Rejects with
   * ReadModelBehindError when it cannot (projection failing or too slow): the read is refused with 503
   * READ_MODEL_BEHIND rather than answered from stale rows.
   */
  caughtUp?: () => Promise<void>;
  /** Rolling 24 h instrument statistics for `fields=metrics` (absent: zeros). */
  exchangeStats?: ExchangeStatistics;
}

/** Waits for the projection, then runs the read; a filter the store refuses (bad cursor, window too long…) is a 400. */
async function readAfter<T>(caughtUp: () => Promise<void>, run: () => Promise<T>): Promise<T> {
  try {
    await caughtUp();
  } catch (e) {
    if (e instanceof ReadModelBehindError) throw new ApiError(503, 'READ_MODEL_BEHIND', e.message);
    throw e;
  }
  try {
    return await run();
  } catch (e) {
    if (e instanceof StoreQueryError) throw badRequest('INVALID_QUERY', e.message);
    throw e;
  }
}

/**
 * The account routes' history reads (public profile, balance statistics) behind the same wait, so a profile
 * read after a close shows it in every figure, not in one query of three (the cluster's projector lags more).
 */
export function projectedAccountReads(
  userHistory: AccountServices['userHistory'], queries: AccountServices['queries'], caughtUp: () => Promise<void>,
): Pick<AccountServices, 'userHistory' | 'queries'> {
  return {
    userHistory: {
      tradingSummary: (userId) => readAfter(caughtUp, () => userHistory.tradingSummary(userId)),
      dailyBalances: (userId, fromDay, toDay) => readAfter(caughtUp, () => userHistory.dailyBalances(userId, fromDay, toDay)),
    },
    queries: { positionHistory: (userId, filter) => readAfter(caughtUp, () => queries.positionHistory(userId, filter)) },
  };
}

export function historyReader(q: StoreQueries, options: HistoryReaderOptions = {}): HistoryReader {
  const { stats, exchangeStats } = options;
  const caughtUp = options.caughtUp ?? (async () => undefined);
  const read = <T>(run: () => Promise<T>): Promise<T> => readAfter(caughtUp, run);
  return {
    fundingTransfers: (f: FundingTransferQuery) => read(() => q.fundingTransfer(f.userId, {
      after: f.after, before: plusOne(f.before), offset: f.offset, limit: f.limit, next: f.next,
    })),
    positionHistory: (f: PositionHistoryQuery) => read(() => q.positionHistory(f.userId, {
      instrument: f.instruments, closeType: f.closeTypes, side: f.side,
      openAfter: f.openAfter, openBefore: plusOne(f.openBefore), closeAfter: f.closeAfter, closeBefore: plusOne(f.closeBefore),
      sort: f.sort, offset: f.offset, limit: f.limit, next: f.next,
    })),
    tpslForOrders: (userId: number, ids: readonly string[]) => read(() => q.tpslForOrders(userId, ids)),
    ...(exchangeStats && {
      instrumentStats: (instrument: string) => read(async () => {
        await exchangeStats.refresh();
        return exchangeStats.instrumentStats(instrument);
      }),
    }),
    ...(stats && {
      balanceChart: (c: ChartQuery) => read(() => stats.balanceChart(c.userId, c)),
      statistics: (c: ChartQuery) => read(() => stats.statistics(c.userId, c)),
    }),
    listOrders(o: OrderQuery): Promise<Page<OrderView>> {
      return read(() => q.listOrders(o.userId, {
        id: o.ids,
        instrument: o.instruments,
        status: o.statuses,
        side: o.side,
        groupStatus: o.groupStatus,
        group: o.groups,
        type: o.types,
        triggered: o.triggered === undefined ? undefined : o.triggered ? 'yes' : 'no',
        after: o.after,
        before: plusOne(o.before),
        sort: o.sort,
        offset: o.offset,
        limit: o.limit,
        next: o.next,
      }));
    },
    getOrder(userId: number, orderId: string): Promise<OrderView | undefined> {
      return read(async () => (await q.listOrders(userId, { id: orderId, limit: 1 })).list[0]);
    },
    listFills(f: FillQuery): Promise<Page<FillView>> {
      return read(() => q.listFills(f.userId, {
        instrument: f.instruments, role: f.roles, after: f.after, before: f.before + 1, offset: f.offset, limit: f.limit, next: f.next,
      }));
    },
    orderFills(userId: number, orderId: string): Promise<FillView[]> {
      return read(() => q.orderFills(userId, orderId));
    },
    candles: (c: CandleQuery) => read(() => q.candles(c)),
    recentTrades(instrument: string, limit: number): Promise<TradeView[]> {
      return read(() => q.recentTrades(instrument, limit));
    },
    listTpsl(t: TpSlQuery): Promise<Page<TpSlView>> {
      return read(() => q.listTpsl(t.userId, {
        instrument: t.instruments,
        status: t.statuses,
        type: t.type,
        triggeredOrder: t.triggeredOrders,
        offset: t.offset,
        limit: t.limit,
      }));
    },
  };
}
