/**
 * Exact per-user row counters for the orders history table.
 * (`fill_counts` is history: migration 0006 replaced it with per-fill ordinals, row-ordinals.ts.)
 *
 * `order_counts` has one row per (user, instrument, status, side, type, group, triggered) combination:
 * `n` rows, the [min, max] created_at they span, and a `version` that grows on every row entering or
 * leaving the combination. Every order filter the routes accept is a condition on those columns plus the
 * immutable created_at and id, so:
 * - a filter without a time window (or one covering [min, max] of the matching combinations) is counted
 *   by summing a handful of counter rows instead of scanning the user's history;
 * - Σ version over the matching combinations changes whenever the filter's row set may have changed,
 *   which makes it a sound key for caching any other count (history-counts.ts).
 *
 * Who keeps them, always in the transaction that writes the rows:
 * - PostgreSQL: one statement-level trigger per write with transition tables (one grouped upsert per
 *   statement, not one per row);
 * - SQLite: the projector (projector.ts), which reads each order's previous row anyway to write only what
 *   changed, and merges one delta per combination per transaction (`orderCountsMergeSql`). SQLite has row
 *   triggers only, an upsert per order written plus a statement journal per write: too costly
 *   (docs/performance.md). Anything else writing orders into a SQLite read model calls `recountOrders` afterwards.
 * min/max only widen: a row leaving a combination leaves them as outer bounds, which keeps the "window
 * covers everything" test conservative.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { StoreDialectKind } from './types.js';

const ORDER_KEY = ['user_id', 'instrument', 'status', 'side', 'type', 'order_group', 'triggered'] as const;
const FILL_KEY = ['user_id', 'instrument'] as const;

async function createCounterTables(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('order_counts')
    .ifNotExists()
    .addColumn('user_id', 'bigint', (c) => c.notNull())
    .addColumn('instrument', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('side', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('order_group', 'text', (c) => c.notNull())
    .addColumn('triggered', 'integer', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addColumn('min_created', 'bigint', (c) => c.notNull())
    .addColumn('max_created', 'bigint', (c) => c.notNull())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('order_counts_pk', [...ORDER_KEY])
    .execute();
  await db.schema
    .createTable('fill_counts')
    .ifNotExists()
    .addColumn('user_id', 'bigint', (c) => c.notNull())
    .addColumn('instrument', 'text', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addColumn('min_created', 'bigint', (c) => c.notNull())
    .addColumn('max_created', 'bigint', (c) => c.notNull())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('fill_counts_pk', [...FILL_KEY])
    .execute();
}

/** `insert into <table> … on conflict (key) do update` adding the excluded deltas; `alias` names the target. */
function mergeClause(table: string, key: readonly string[], least: string, greatest: string): string {
  return `on conflict (${key.join(', ')}) do update set n = ${table}.n + excluded.n, ` +
    `min_created = ${least}(${table}.min_created, excluded.min_created), ` +
    `max_created = ${greatest}(${table}.max_created, excluded.max_created), ` +
    `version = ${table}.version + excluded.version`;
}

const ORDER_COLS = ORDER_KEY.join(', ');
const ORDER_DATA = 'user_id, instrument, status, side, type, order_group';

function sqliteStatements(): string[] {
  const orderMerge = mergeClause('order_counts', ORDER_KEY, 'min', 'max');
  const fillMerge = mergeClause('fill_counts', FILL_KEY, 'min', 'max');
  const orderValues = (row: 'new' | 'old', d: number) =>
    `values (${row}.user_id, ${row}.instrument, ${row}.status, ${row}.side, ${row}.type, ${row}.order_group, ` +
    `${row}.triggered_at is not null, ${d}, ${row}.created_at, ${row}.created_at, 1)`;
  const orderInsert = (row: 'new' | 'old', d: number) =>
    `insert into order_counts (${ORDER_COLS}, n, min_created, max_created, version) ${orderValues(row, d)} ${orderMerge};`;
  const fillInsert = (row: 'new' | 'old', d: number) =>
    `insert into fill_counts (user_id, instrument, n, min_created, max_created, version) ` +
    `values (${row}.user_id, ${row}.instrument, ${d}, ${row}.created_at, ${row}.created_at, 1) ${fillMerge};`;
  const moved = ['instrument', 'status', 'side', 'type', 'order_group'].map((c) => `old.${c} is not new.${c}`)
    .concat('(old.triggered_at is null) <> (new.triggered_at is null)')
    .join(' or ');
  return [
    `create trigger if not exists order_counts_ins after insert on orders begin ${orderInsert('new', 1)} end`,
    `create trigger if not exists order_counts_upd after update of instrument, status, side, type, order_group, triggered_at on orders ` +
      `when ${moved} begin ${orderInsert('old', -1)} ${orderInsert('new', 1)} end`,
    `create trigger if not exists order_counts_del after delete on orders begin ${orderInsert('old', -1)} end`,
    `create trigger if not exists fill_counts_ins after insert on fills begin ${fillInsert('new', 1)} end`,
    `create trigger if not exists fill_counts_del after delete on fills begin ${fillInsert('old', -1)} end`,
  ];
}

function postgresStatements(): string[] {
  const orderMerge = mergeClause('order_counts', ORDER_KEY, 'least', 'greatest');
  const fillMerge = mergeClause('fill_counts', FILL_KEY, 'least', 'greatest');
  // rows(user_id, instrument, status, side, type, order_group, triggered, d, created_at) → one grouped upsert.
  const orderUpsert = (rows: string) =>
    `insert into order_counts (${ORDER_COLS}, n, min_created, max_created, version) ` +
    `select ${ORDER_COLS}, sum(d), min(created_at), max(created_at), count(*) from (${rows}) r ` +
    `group by ${ORDER_COLS} ${orderMerge};`;
  const orderRows = (t: string, d: number) =>
    `select ${ORDER_DATA}, (triggered_at is not null)::int as triggered, ${d} as d, created_at from ${t}`;
  const fillUpsert = (t: string, d: number) =>
    `insert into fill_counts (user_id, instrument, n, min_created, max_created, version) ` +
    `select user_id, instrument, ${d} * count(*), min(created_at), max(created_at), count(*) from ${t} ` +
    `group by user_id, instrument ${fillMerge};`;
  const fn = (name: string, body: string) =>
    `create or replace function ${name}() returns trigger language plpgsql as $$ begin ${body} return null; end $$`;
  const trigger = (name: string, event: string, table: string, referencing: string) =>
    `create trigger ${name} after ${event} on ${table} referencing ${referencing} for each statement execute function ${name}()`;
  const movedCols = ['instrument', 'status', 'side', 'type', 'order_group'];
  const movedRows =
    `select o.user_id, o.id, ${movedCols.map((c) => `o.${c} as o_${c}, n.${c} as n_${c}`).join(', ')}, ` +
    `(o.triggered_at is not null)::int as o_triggered, (n.triggered_at is not null)::int as n_triggered, n.created_at ` +
    `from old_rows o join new_rows n on n.user_id = o.user_id and n.id = o.id ` +
    `where (${movedCols.map((c) => `o.${c}`).join(', ')}, o.triggered_at is null) is distinct from ` +
    `(${movedCols.map((c) => `n.${c}`).join(', ')}, n.triggered_at is null)`;
  const side = (p: 'o' | 'n', d: number) =>
    `select user_id, ${movedCols.map((c) => `${p}_${c} as ${c}`).join(', ')}, ${p}_triggered as triggered, ${d} as d, created_at from moved`;
  return [
    fn('order_counts_ins', orderUpsert(orderRows('new_rows', 1))),
    trigger('order_counts_ins', 'insert', 'orders', 'new table as new_rows'),
    fn('order_counts_upd', orderUpsert(`with moved as (${movedRows}) ${side('o', -1)} union all ${side('n', 1)}`)),
    trigger('order_counts_upd', 'update', 'orders', 'old table as old_rows new table as new_rows'),
    fn('order_counts_del', orderUpsert(orderRows('old_rows', -1))),
    trigger('order_counts_del', 'delete', 'orders', 'old table as old_rows'),
    fn('fill_counts_ins', fillUpsert('new_rows', 1)),
    trigger('fill_counts_ins', 'insert', 'fills', 'new table as new_rows'),
    fn('fill_counts_del', fillUpsert('old_rows', -1)),
    trigger('fill_counts_del', 'delete', 'fills', 'old table as old_rows'),
  ];
}

/** `insert … select` of every combination's counters from the orders table (the rows already there). */
function orderCountsBackfillSql(kind: StoreDialectKind): string {
  const triggered = kind === 'postgres' ? '(triggered_at is not null)::int' : '(triggered_at is not null)';
  return `insert into order_counts (${ORDER_COLS}, n, min_created, max_created, version) ` +
    `select ${ORDER_DATA}, ${triggered}, count(*), min(created_at), max(created_at), count(*) from orders group by ${ORDER_DATA}, ${triggered}`;
}

/**
 * Recomputes `order_counts` from the orders table: for SQLite writers other than the projector (bulk
 * seeding, repairs). Every version restarts at the row count, which differs from any version seen before
 * only by chance: call it with no reader relying on cached counts (a restart seals new cursors anyway).
 */
export async function recountOrders(db: Kysely<any>, kind: StoreDialectKind): Promise<void> {
  await sql.raw('delete from order_counts').execute(db);
  await sql.raw(orderCountsBackfillSql(kind)).execute(db);
}

/** The combination columns of order_counts, in its key order. */
export const ORDER_COUNT_KEY = ORDER_KEY;

/**
 * SQLite: adds one delta to a combination's counters (parameters: the ORDER_COUNT_KEY values, then
 * n, min_created, max_created, version deltas); the same merge the triggers ran.
 */
export function orderCountsMergeSql(): string {
  return `insert into order_counts (${ORDER_COLS}, n, min_created, max_created, version) values (${[...ORDER_KEY, 1, 2, 3, 4].map(() => '?').join(', ')}) ` +
    mergeClause('order_counts', ORDER_KEY, 'min', 'max');
}

/** Migration 0007: SQLite's order counter triggers go; the projector keeps the counters (see above). */
export function projectorOrderCountsMigration(kind: StoreDialectKind): Migration {
  return {
    async up(db: Kysely<any>) {
      if (kind !== 'sqlite') return;
      for (const name of ['order_counts_ins', 'order_counts_upd', 'order_counts_del']) await sql.raw(`drop trigger if exists ${name}`).execute(db);
    },
  };
}

/** Migration: counter tables, backfill from the rows already there, then the triggers (same transaction on PG). */
export function countTriggersMigration(kind: StoreDialectKind): Migration {
  return {
    async up(db: Kysely<any>) {
      await createCounterTables(db);
      await sql.raw(orderCountsBackfillSql(kind)).execute(db);
      await sql.raw(
        'insert into fill_counts (user_id, instrument, n, min_created, max_created, version) ' +
        'select user_id, instrument, count(*), min(created_at), max(created_at), count(*) from fills group by user_id, instrument',
      ).execute(db);
      for (const s of kind === 'postgres' ? postgresStatements() : sqliteStatements()) await sql.raw(s).execute(db);
    },
  };
}
