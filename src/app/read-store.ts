/**
 * Adapts the read model's queries (src/store, filter objects per user) to the gateway's ReadStore
 * interface (src/api/deps.ts). API time bounds are inclusive; the store's `before` is exclusive, hence +1.
 */
import type { FillQuery, OrderQuery, Page, ReadStore, TpSlQuery } from '../api/deps.js';
import type { FillView, OrderView, TpSlView, TradeView } from '../engine/records.js';
import type { StoreQueries } from '../store/index.js';

const plusOne = (t: number | undefined): number | undefined => (t === undefined ? undefined : t + 1);

/**
 * `caughtUp`: resolves when the read model holds every command applied so far; awaited before each read
 * so a client sees the effect of a command it was acknowledged (projection runs behind the replies).
 */
export function readStoreAdapter(q: StoreQueries, caughtUp: () => Promise<void> = async () => undefined): ReadStore {
  return {
    async listOrders(o: OrderQuery): Promise<Page<OrderView>> {
      await caughtUp();
      return q.listOrders(o.userId, {
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
      });
    },
    async getOrder(userId: number, orderId: string): Promise<OrderView | undefined> {
      await caughtUp();
      const page = await q.listOrders(userId, { id: orderId, limit: 1 });
      return page.list[0];
    },
    async listFills(f: FillQuery): Promise<Page<FillView>> {
      await caughtUp();
      if (!f.roles || f.roles.length === 0) {
        return q.listFills(f.userId, { instrument: f.instruments, after: f.after, before: f.before + 1, offset: f.offset, limit: f.limit });
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
    async orderFills(userId: number, orderId: string): Promise<FillView[]> {
      await caughtUp();
      return q.orderFills(userId, orderId);
    },
    async recentTrades(instrument: string, limit: number): Promise<TradeView[]> {
      await caughtUp();
      return q.recentTrades(instrument, limit);
    },
    async listTpsl(t: TpSlQuery): Promise<Page<TpSlView>> {
      await caughtUp();
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
