/**
 * Adapts the read model's queries (src/store, filter objects per user) to the gateway's ReadStore
 * interface (src/api/deps.ts). API time bounds are inclusive; the store's `before` is exclusive, hence +1.
 */
import type { ChartQuery, FillQuery, FundingTransferQuery, OrderQuery, Page, PositionHistoryQuery, ReadStore, TpSlQuery } from '../api/deps.js';
import { badRequest } from '../api/errors.js';
import type { FillView, OrderView, TpSlView, TradeView } from '../engine/records.js';
import { StoreQueryError, type StoreQueries, type StoreStatistics } from '../store/index.js';

const plusOne = (t: number | undefined): number | undefined => (t === undefined ? undefined : t + 1);

/** A filter the store refuses (bad cursor, window too long…) is the client's mistake: 400. */
async function guard<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof StoreQueryError) throw badRequest('INVALID_QUERY', e.message);
    throw e;
  }
}

export function readStoreAdapter(q: StoreQueries, stats?: StoreStatistics): ReadStore {
  return {
    fundingTransfers: (f: FundingTransferQuery) => guard(() => q.fundingTransfer(f.userId, {
      after: f.after, before: plusOne(f.before), offset: f.offset, limit: f.limit, next: f.next,
    })),
    positionHistory: (f: PositionHistoryQuery) => guard(() => q.positionHistory(f.userId, {
      instrument: f.instruments, closeType: f.closeTypes, side: f.side,
      openAfter: f.openAfter, openBefore: plusOne(f.openBefore), closeAfter: f.closeAfter, closeBefore: plusOne(f.closeBefore),
      sort: f.sort, offset: f.offset, limit: f.limit, next: f.next,
    })),
    tpslForOrders: (userId: number, ids: readonly string[]) => q.tpslForOrders(userId, ids),
    ...(stats && {
      balanceChart: (c: ChartQuery) => guard(() => stats.balanceChart(c.userId, c)),
      statistics: (c: ChartQuery) => guard(() => stats.statistics(c.userId, c)),
    }),
    listOrders(o: OrderQuery): Promise<Page<OrderView>> {
      return guard(() => q.listOrders(o.userId, {
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
    async getOrder(userId: number, orderId: string): Promise<OrderView | undefined> {
      const page = await q.listOrders(userId, { id: orderId, limit: 1 });
      return page.list[0];
    },
    async listFills(f: FillQuery): Promise<Page<FillView>> {
      if (!f.roles || f.roles.length === 0) {
        return guard(() => q.listFills(f.userId, { instrument: f.instruments, after: f.after, before: f.before + 1, offset: f.offset, limit: f.limit, next: f.next }));
      }
      // The store does not filter by role: page over the matching window and filter here.
      const roles = new Set(f.roles);
      const all: FillView[] = [];
      let next: string | undefined;
      do {
        const page = await q.listFills(f.userId, { instrument: f.instruments, after: f.after, before: f.before + 1, limit: 500, next });
        for (const x of page.list) if (roles.has(x.role)) all.push(x);
        next = page.next;
      } while (next);
      return { list: all.slice(f.offset, f.offset + f.limit), count: all.length };
    },
    orderFills(userId: number, orderId: string): Promise<FillView[]> {
      return q.orderFills(userId, orderId);
    },
    recentTrades(instrument: string, limit: number): Promise<TradeView[]> {
      return q.recentTrades(instrument, limit);
    },
    listTpsl(t: TpSlQuery): Promise<Page<TpSlView>> {
      return q.listTpsl(t.userId, {
        instrument: t.instruments,
        status: t.statuses,
        type: t.type,
        triggeredOrder: t.triggeredOrders,
        offset: t.offset,
        limit: t.limit,
      });
    },
  };
}
