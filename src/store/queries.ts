/**
 * History queries over the read models: one Kysely implementation for SQLite and PostgreSQL. Every query
 * is scoped by userId (except public recent trades) and returns the engine's view types, so the API
 * reuses its one wire mapping. Paged lists return {list, count, next?}; see paging.ts for limits,
 * cursors and the half-open time windows.
 */
import type { Kysely, SelectQueryBuilder, Selectable } from 'kysely';
import type { FillView, FundingChangeView, OrderView, TpSlView, TradeView, TransferView } from '../engine/records.js';
import {
  fillView, fundingView, orderKeyOf, orderView, positionHistoryView, toNum, tpslView, tradeView, transferView,
} from './codec.js';
import { queryCandles, type Candle, type CandleQuery } from './candles.js';
import { groupStatusCondition, STOP_TYPES } from './order-status-groups.js';
import { FILL_ORDINALS, fillPartitions, FUNDING_ORDINALS, FUNDING_PARTITIONS, windowedCount } from './row-ordinals.js';
import { HistoryCounts, type CreatedWindow } from './history-counts.js';
import { clampLimit, keysetPage, scanCounter, toEpochMs, type KeysetSpec } from './paging.js';
import type {
  FillsTable, FundingChangesTable, OrdersTable, PositionHistoryTable, StoreDatabase, TpslTable, TransfersTable,
} from './schema.js';
import type {
  FillFilter, FundingBalanceView, FundingChangeFilter, OneOrMany, OrderFilter, OrderSort, Page,
  PositionHistoryFilter, PositionHistorySort, PositionHistoryView, TimeInput, TimeWindow, TpSlFilter, TransferFilter,
} from './types.js';
import { StoreQueryError } from './types.js';

/** A filter's values as a list; undefined = no filter. */
function many<T>(v: OneOrMany<T>): readonly T[] | undefined {
  if (v === null || v === undefined) return undefined;
  const list = Array.isArray(v) ? (v as readonly T[]) : [v as T];
  return list.length === 0 ? undefined : list;
}

// Kysely's builder generics do not survive generic helpers well; filters are applied on this loose type
// and every column name below is checked against the schema by the row mappers' types.
type Q = SelectQueryBuilder<any, any, {}>;

function whereIn(q: Q, column: string, values: readonly unknown[] | undefined): Q {
  if (!values) return q;
  return values.length === 1 ? q.where(column, '=', values[0]) : q.where(column, 'in', values);
}

/** A filter's values, in a canonical order (cache keys). */
function sorted<T>(values: readonly T[] | undefined): T[] | null {
  return values ? [...new Set(values)].sort() : null;
}

function createdWindow(f: TimeWindow): CreatedWindow {
  const w: CreatedWindow = {};
  if (f.after !== null && f.after !== undefined) w.after = toEpochMs(f.after);
  if (f.before !== null && f.before !== undefined) w.before = toEpochMs(f.before);
  return w;
}

function whereTime(q: Q, column: string, after: TimeInput | null | undefined, before: TimeInput | null | undefined): Q {
  if (after !== null && after !== undefined) q = q.where(column, '>=', toEpochMs(after));
  if (before !== null && before !== undefined) q = q.where(column, '<', toEpochMs(before));
  return q;
}

const ORDER_SORTS: Record<OrderSort, { column: 'created_at' | 'updated_at'; direction: 'asc' | 'desc' }> = {
  'created-at-asc': { column: 'created_at', direction: 'asc' },
  'created-at-desc': { column: 'created_at', direction: 'desc' },
  'updated-at-asc': { column: 'updated_at', direction: 'asc' },
  'updated-at-desc': { column: 'updated_at', direction: 'desc' },
};

const HISTORY_SORTS: Record<PositionHistorySort, { column: 'open_at' | 'close_at'; direction: 'asc' | 'desc' }> = {
  'open-at-asc': { column: 'open_at', direction: 'asc' },
  'open-at-desc': { column: 'open_at', direction: 'desc' },
  'close-at-asc': { column: 'close_at', direction: 'asc' },
  'close-at-desc': { column: 'close_at', direction: 'desc' },
};

/** Newest first, ties in journal order (reversed) — for append-only tables. */
function appendOnlySpec<R extends { seq: unknown; ev: unknown }>(timeColumn: string, timeOf: (r: R) => unknown): KeysetSpec<R> {
  return {
    sort: `${timeColumn}-desc`,
    columns: [timeColumn, 'seq', 'ev'],
    direction: 'desc',
    keyOf: (r) => [toNum(timeOf(r) as number), toNum(r.seq as number), toNum(r.ev as number)],
  };
}

export class StoreQueries {
  private readonly counts: HistoryCounts;

  constructor(private readonly db: Kysely<StoreDatabase>) {
    this.counts = new HistoryCounts(db);
  }

  private from(table: keyof StoreDatabase, userId: number): Q {
    return (this.db.selectFrom(table) as unknown as Q).where('user_id', '=', userId);
  }

  /** GET /api/order. Default sort created-at-desc; id ties break on the order id. */
  async listOrders(userId: number, f: OrderFilter = {}): Promise<Page<OrderView>> {
    const ids = many(f.id);
    const keys = ids && [...new Set(ids.map(orderKeyOf))].sort();
    const window = createdWindow(f);
    const group = f.groupStatus ? groupStatusCondition(f.groupStatus) : undefined;
    // The same conditions select the rows (orders) and their counters (order_counts, triggered as 0/1).
    const combo = (q: Q): Q => {
      q = whereIn(q, 'instrument', many(f.instrument));
      q = whereIn(q, 'status', many(f.status));
      if (f.side) q = q.where('side', '=', f.side);
      q = whereIn(q, 'order_group', many(f.group));
      q = whereIn(q, 'type', many(f.type));
      if (group) {
        q = whereIn(q, 'status', group.statuses);
        if (group.untriggeredStopsOnly) q = whereIn(q, 'type', STOP_TYPES);
      }
      return q;
    };
    // INACTIVE means untriggered; with triggered=yes both conditions apply and nothing matches.
    const mustBeTriggered = f.triggered === 'yes';
    const mustBeUntriggered = f.triggered === 'no' || group?.untriggeredStopsOnly === true;
    let q = combo(this.from('orders', userId));
    if (keys) q = whereIn(q, 'order_key', keys);
    if (mustBeTriggered) q = q.where('triggered_at', 'is not', null);
    if (mustBeUntriggered) q = q.where('triggered_at', 'is', null);
    q = whereTime(q, 'created_at', window.after, window.before);
    let counters = combo(this.counts.countersOf('order_counts', userId));
    if (mustBeTriggered) counters = counters.where('triggered', '=', 1);
    if (mustBeUntriggered) counters = counters.where('triggered', '=', 0);
    const sortName: OrderSort = f.sort ?? 'created-at-desc';
    const sort = ORDER_SORTS[sortName];
    if (!sort) throw new StoreQueryError(`unknown sort ${String(sortName)}`);
    const cacheKey = JSON.stringify([
      'orders', userId, keys, sorted(many(f.instrument)), sorted(many(f.status)), f.side ?? null, sorted(many(f.group)),
      sorted(many(f.type)), f.groupStatus ?? null, f.triggered ?? null, window.after ?? null, window.before ?? null,
    ]);
    const base = q;
    return keysetPage<Selectable<OrdersTable>, OrderView>(
      q,
      {
        sort: sortName,
        columns: [sort.column, 'id'],
        direction: sort.direction,
        keyOf: (r) => [toNum(r[sort.column]), r.id],
      },
      f,
      orderView,
      (carried) => this.counts.count(cacheKey, counters, window, !keys, carried, scanCounter(base)),
    );
  }

  /** GET /api/fill: newest first. */
  async listFills(userId: number, f: FillFilter = {}): Promise<Page<FillView>> {
    const instruments = many(f.instrument);
    const roles = many(f.role);
    const window = createdWindow(f);
    let q = whereIn(this.from('fills', userId), 'instrument', instruments);
    q = whereIn(q, 'role', roles);
    q = whereTime(q, 'created_at', window.after, window.before);
    const scan = scanCounter(q);
    const partitions = fillPartitions(instruments, roles);
    return keysetPage<Selectable<FillsTable>, FillView>(
      q,
      appendOnlySpec('created_at', (r) => r.created_at),
      f,
      fillView,
      // Any window, from the fills' ordinals (row-ordinals.ts): a few index seeks, never a scan of the window.
      async () => ({ count: (await windowedCount(this.db, FILL_ORDINALS, userId, partitions, window.after, window.before)) ?? await scan() }),
    );
  }

  /** GET /api/order/{id}/fill: every fill of one order (v1 or v2 id), oldest first. */
  async orderFills(userId: number, orderId: string): Promise<FillView[]> {
    const rows = await this.db
      .selectFrom('fills')
      .selectAll()
      .where('user_id', '=', userId)
      .where('order_key', '=', orderKeyOf(orderId))
      .orderBy('created_at', 'asc')
      .orderBy('seq', 'asc')
      .orderBy('ev', 'asc')
      .execute();
    return rows.map(fillView);
  }

  /** Public OHLCV candles of an instrument (candles.ts). */
  candles(q: CandleQuery): Promise<Candle[]> {
    return queryCandles(this.db, q);
  }

  /** Public recent trades of an instrument, newest first (limit default 100, max 500). */
  async recentTrades(instrument: string, limit?: number): Promise<TradeView[]> {
    const rows = await this.db
      .selectFrom('trades')
      .selectAll()
      .where('instrument', '=', instrument)
      .orderBy('created_at', 'desc')
      .orderBy('seq', 'desc')
      .orderBy('ev', 'desc')
      .limit(clampLimit(limit, 100))
      .execute();
    return rows.map(tradeView);
  }

  /** GET /api/user/funding-transfer: collateral movements, newest first. */
  async listFundingChanges(userId: number, f: FundingChangeFilter = {}): Promise<Page<FundingChangeView>> {
    const window = createdWindow(f);
    const q = whereTime(this.from('funding_changes', userId), 'updated_at', window.after, window.before);
    const scan = scanCounter(q);
    return keysetPage<Selectable<FundingChangesTable>, FundingChangeView>(
      q,
      appendOnlySpec('updated_at', (r) => r.updated_at),
      f,
      fundingView,
      // From the rows' ordinals (row-ordinals.ts): every fill moves collateral, so this list is as long as the fills.
      async () => ({ count: (await windowedCount(this.db, FUNDING_ORDINALS, userId, FUNDING_PARTITIONS, window.after, window.before)) ?? await scan() }),
    );
  }

  /** Alias named after the route. */
  fundingTransfer(userId: number, f: FundingChangeFilter = {}): Promise<Page<FundingChangeView>> {
    return this.listFundingChanges(userId, f);
  }

  /** GET /api/user/funding: latest balance per coin (from the last collateral movement). */
  async fundingBalances(userId: number): Promise<FundingBalanceView[]> {
    const latest = this.db
      .selectFrom('funding_changes')
      .select(['coin', (eb) => eb.fn.max('seq').as('seq')])
      .where('user_id', '=', userId)
      .groupBy('coin')
      .as('latest');
    const rows = await this.db
      .selectFrom('funding_changes as f')
      .innerJoin(latest, (j) => j.onRef('f.coin', '=', 'latest.coin').onRef('f.seq', '=', 'latest.seq'))
      .select(['f.coin', 'f.balance', 'f.updated_at', 'f.ev'])
      .where('f.user_id', '=', userId)
      .orderBy('f.coin')
      .orderBy('f.ev', 'desc')
      .execute();
    const out: FundingBalanceView[] = [];
    for (const r of rows) {
      // Several movements of one coin in the last batch: the highest ev is the latest.
      if (out.length > 0 && out[out.length - 1]!.coin === r.coin) continue;
      out.push({ coin: r.coin, balance: BigInt(r.balance), updatedAt: toNum(r.updated_at) });
    }
    return out;
  }

  /** GET /api/transfer: newest first. */
  async listTransfers(userId: number, f: TransferFilter = {}): Promise<Page<TransferView>> {
    let q = whereIn(this.from('transfers', userId), 'status', many(f.status));
    q = whereIn(q, 'type', many(f.type));
    q = whereTime(q, 'created_at', f.after, f.before);
    return keysetPage<Selectable<TransfersTable>, TransferView>(
      q,
      { sort: 'created-at-desc', columns: ['created_at', 'id'], direction: 'desc', keyOf: (r) => [toNum(r.created_at), r.id] },
      f,
      transferView,
    );
  }

  /** GET /api/tpsl: newest first. */
  async listTpsl(userId: number, f: TpSlFilter = {}): Promise<Page<TpSlView>> {
    let q = whereIn(this.from('tpsl', userId), 'instrument', many(f.instrument));
    q = whereIn(q, 'status', many(f.status));
    if (f.type) q = q.where('type', '=', f.type);
    q = whereIn(q, 'trigger_order', many(f.triggeredOrder));
    return keysetPage<Selectable<TpslTable>, TpSlView>(
      q,
      { sort: 'created-at-desc', columns: ['created_at', 'id'], direction: 'desc', keyOf: (r) => [toNum(r.created_at), r.id] },
      f,
      tpslView,
    );
  }

  /**
   * TpSl attached to these orders (tpslList of GET /api/order), keyed by the ids as given (v1 or v2);
   * every given id has an entry (possibly empty). Oldest first within an order.
   */
  async tpslForOrders(userId: number, orderIds: readonly string[]): Promise<Map<string, TpSlView[]>> {
    const result = new Map<string, TpSlView[]>();
    const idsByKey = new Map<string, string[]>();
    for (const id of orderIds) {
      result.set(id, []);
      const k = orderKeyOf(id);
      idsByKey.set(k, [...(idsByKey.get(k) ?? []), id]);
    }
    if (idsByKey.size === 0) return result;
    const rows = await this.db
      .selectFrom('tpsl')
      .selectAll()
      .where('user_id', '=', userId)
      .where('order_key', 'in', [...idsByKey.keys()])
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
    for (const r of rows) {
      const v = tpslView(r);
      for (const id of idsByKey.get(r.order_key ?? '') ?? []) result.get(id)!.push(v);
    }
    return result;
  }

  /** GET /api/position/history: closed lifetimes only; default sort open-at-desc. */
  async positionHistory(userId: number, f: PositionHistoryFilter = {}): Promise<Page<PositionHistoryView>> {
    let q = this.from('position_history', userId).where('close_at', 'is not', null);
    q = whereIn(q, 'instrument', many(f.instrument));
    q = whereIn(q, 'close_type', many(f.closeType));
    if (f.side) q = q.where('side', '=', f.side);
    q = whereTime(q, 'open_at', f.openAfter, f.openBefore);
    q = whereTime(q, 'close_at', f.closeAfter, f.closeBefore);
    const sortName: PositionHistorySort = f.sort ?? 'open-at-desc';
    const sort = HISTORY_SORTS[sortName];
    if (!sort) throw new StoreQueryError(`unknown sort ${String(sortName)}`);
    return keysetPage<Selectable<PositionHistoryTable>, PositionHistoryView>(
      q,
      { sort: sortName, columns: [sort.column, 'id'], direction: sort.direction, keyOf: (r) => [toNum(r[sort.column]!), r.id] },
      f,
      positionHistoryView,
    );
  }
}

