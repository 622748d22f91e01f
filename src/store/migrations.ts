/**
 * Schema migrations for both dialects, run by Kysely's Migrator (idempotent: applied ones are recorded
 * in `kysely_migration`, and running again is a no-op). Append new migrations; never edit applied ones.
 */
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { countTriggersMigration, projectorOrderCountsMigration } from './count-triggers.js';
import { fillHourCountsMigration } from './fill-hour-counts.js';
import { historyOrdinalsMigration } from './row-ordinals.js';
import type { StoreDialectKind } from './types.js';

/**
 * Keys that take part in ORDER BY / keyset comparisons must order by code unit on both databases
 * (SQLite's default BINARY does; PostgreSQL's locale collation would not), so the PG side says "C".
 */
function keyText(kind: StoreDialectKind) {
  return kind === 'postgres' ? sql`text collate "C"` : sql`text`;
}

function initial(kind: StoreDialectKind): Migration {
  const key = keyText(kind);
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('orders')
        .ifNotExists()
        .addColumn('user_id', 'bigint', (c) => c.notNull())
        .addColumn('id', key, (c) => c.notNull())
        .addColumn('order_key', key, (c) => c.notNull())
        .addColumn('instrument', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('side', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('rejected_reason', 'text', (c) => c.notNull())
        .addColumn('time_in_force', 'text', (c) => c.notNull())
        .addColumn('post_only', 'integer', (c) => c.notNull())
        .addColumn('leverage', 'integer', (c) => c.notNull())
        .addColumn('quantity', 'bigint', (c) => c.notNull())
        .addColumn('limit_price', 'bigint', (c) => c.notNull())
        .addColumn('stop_price', 'bigint')
        .addColumn('order_group', 'text', (c) => c.notNull())
        .addColumn('unfilled_quantity', 'bigint', (c) => c.notNull())
        .addColumn('cash_quantity', 'bigint', (c) => c.notNull())
        .addColumn('filled_quantity', 'bigint', (c) => c.notNull())
        .addColumn('filled_value', 'bigint', (c) => c.notNull())
        .addColumn('realized_pnl', 'bigint', (c) => c.notNull())
        .addColumn('fee', 'bigint', (c) => c.notNull())
        .addColumn('triggered_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('orders_pk', ['user_id', 'id'])
        .execute();
      // Keyset paging walks these (sort key + id tiebreak); filters are checked on the rows walked.
      await db.schema.createIndex('orders_user_created').ifNotExists().on('orders').columns(['user_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('orders_user_updated').ifNotExists().on('orders').columns(['user_id', 'updated_at', 'id']).execute();
      await db.schema.createIndex('orders_user_key').ifNotExists().on('orders').columns(['user_id', 'order_key']).execute();
      await db.schema
        .createIndex('orders_user_instrument_created')
        .ifNotExists()
        .on('orders')
        .columns(['user_id', 'instrument', 'created_at', 'id'])
        .execute();
      await db.schema
        .createIndex('orders_user_status_created')
        .ifNotExists()
        .on('orders')
        .columns(['user_id', 'status', 'created_at', 'id'])
        .execute();

      await db.schema
        .createTable('fills')
        .ifNotExists()
        .addColumn('execution_id', key, (c) => c.notNull())
        .addColumn('order_id', key, (c) => c.notNull())
        .addColumn('order_key', key, (c) => c.notNull())
        .addColumn('user_id', 'bigint', (c) => c.notNull())
        .addColumn('instrument', 'text', (c) => c.notNull())
        .addColumn('side', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('quantity', 'bigint', (c) => c.notNull())
        .addColumn('price', 'bigint', (c) => c.notNull())
        .addColumn('fee', 'bigint', (c) => c.notNull())
        .addColumn('realized_pnl', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addColumn('ev', 'integer', (c) => c.notNull())
        // Maker and taker of one execution share the execution id; the order tells them apart.
        .addPrimaryKeyConstraint('fills_pk', ['execution_id', 'order_id'])
        .execute();
      await db.schema.createIndex('fills_user_created').ifNotExists().on('fills').columns(['user_id', 'created_at', 'seq', 'ev']).execute();
      await db.schema.createIndex('fills_user_order').ifNotExists().on('fills').columns(['user_id', 'order_key']).execute();

      await db.schema
        .createTable('trades')
        .ifNotExists()
        .addColumn('execution_id', key, (c) => c.primaryKey())
        .addColumn('instrument', 'text', (c) => c.notNull())
        .addColumn('side', 'text', (c) => c.notNull())
        .addColumn('quantity', 'bigint', (c) => c.notNull())
        .addColumn('price', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addColumn('ev', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('trades_instrument_created').ifNotExists().on('trades').columns(['instrument', 'created_at', 'seq', 'ev']).execute();

      await db.schema
        .createTable('funding_changes')
        .ifNotExists()
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addColumn('ev', 'integer', (c) => c.notNull())
        .addColumn('user_id', 'bigint', (c) => c.notNull())
        .addColumn('coin', 'text', (c) => c.notNull())
        .addColumn('quantity', 'bigint', (c) => c.notNull())
        .addColumn('balance', 'bigint', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('funding_changes_pk', ['seq', 'ev'])
        .execute();
      await db.schema
        .createIndex('funding_changes_user_updated')
        .ifNotExists()
        .on('funding_changes')
        .columns(['user_id', 'updated_at', 'seq', 'ev'])
        .execute();

      await db.schema
        .createTable('order_fees')
        .ifNotExists()
        .addColumn('id', key, (c) => c.primaryKey())
        .addColumn('user_id', 'bigint', (c) => c.notNull())
        .addColumn('order_id', key, (c) => c.notNull())
        .addColumn('execution_id', key, (c) => c.notNull())
        .addColumn('coin', 'text', (c) => c.notNull())
        .addColumn('quantity', 'bigint', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addColumn('ev', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('order_fees_user_created').ifNotExists().on('order_fees').columns(['user_id', 'created_at', 'seq', 'ev']).execute();

      await db.schema
        .createTable('transfers')
        .ifNotExists()
        .addColumn('id', key, (c) => c.primaryKey())
        .addColumn('user_id', 'bigint', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('coin', 'text', (c) => c.notNull())
        .addColumn('amount', 'bigint', (c) => c.notNull())
        .addColumn('fee', 'bigint', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('transfers_user_created').ifNotExists().on('transfers').columns(['user_id', 'created_at', 'id']).execute();

      await db.schema
        .createTable('tpsl')
        .ifNotExists()
        .addColumn('user_id', 'bigint', (c) => c.notNull())
        .addColumn('id', key, (c) => c.notNull())
        .addColumn('instrument', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('side', 'text', (c) => c.notNull())
        .addColumn('quantity', 'bigint', (c) => c.notNull())
        .addColumn('price', 'bigint', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('order_id', key)
        .addColumn('order_key', key)
        .addColumn('trigger_order', key)
        .addColumn('triggered_quantity', 'bigint', (c) => c.notNull())
        .addColumn('cancelled_reason', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('tpsl_pk', ['user_id', 'id'])
        .execute();
      await db.schema.createIndex('tpsl_user_created').ifNotExists().on('tpsl').columns(['user_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('tpsl_user_order').ifNotExists().on('tpsl').columns(['user_id', 'order_key']).execute();

      await db.schema
        .createTable('position_last')
        .ifNotExists()
        .addColumn('user_id', 'bigint', (c) => c.notNull())
        .addColumn('instrument', 'text', (c) => c.notNull())
        .addColumn('position_id', 'text', (c) => c.notNull())
        .addColumn('side', 'text', (c) => c.notNull())
        .addColumn('quantity', 'bigint', (c) => c.notNull())
        .addColumn('cost_basis', 'bigint', (c) => c.notNull())
        .addColumn('realized_pnl', 'bigint', (c) => c.notNull())
        .addColumn('fee', 'bigint', (c) => c.notNull())
        .addColumn('funding_paid', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('position_last_pk', ['user_id', 'instrument'])
        .execute();

      await db.schema
        .createTable('position_history')
        .ifNotExists()
        .addColumn('id', key, (c) => c.primaryKey())
        .addColumn('user_id', 'bigint', (c) => c.notNull())
        .addColumn('instrument', 'text', (c) => c.notNull())
        .addColumn('position_id', 'text', (c) => c.notNull())
        .addColumn('side', 'text', (c) => c.notNull())
        .addColumn('open_at', 'bigint', (c) => c.notNull())
        .addColumn('close_at', 'bigint')
        .addColumn('max_quantity', 'bigint', (c) => c.notNull())
        .addColumn('quantity', 'bigint', (c) => c.notNull())
        .addColumn('entry_quantity', 'bigint', (c) => c.notNull())
        .addColumn('entry_value', 'bigint', (c) => c.notNull())
        .addColumn('exit_quantity', 'bigint', (c) => c.notNull())
        .addColumn('exit_value', 'bigint', (c) => c.notNull())
        .addColumn('realized_pnl', 'bigint', (c) => c.notNull())
        .addColumn('fee', 'bigint', (c) => c.notNull())
        .addColumn('funding_paid', 'bigint', (c) => c.notNull())
        .addColumn('close_type', 'text')
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('position_history_user_open').ifNotExists().on('position_history').columns(['user_id', 'open_at', 'id']).execute();
      await db.schema.createIndex('position_history_user_close').ifNotExists().on('position_history').columns(['user_id', 'close_at', 'id']).execute();
      await db.schema
        .createIndex('position_history_user_instrument_open')
        .ifNotExists()
        .on('position_history')
        .columns(['user_id', 'instrument', 'close_at'])
        .execute();

      await db.schema
        .createTable('projector_meta')
        .ifNotExists()
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('last_seq', 'bigint', (c) => c.notNull())
        .execute();
      await db.insertInto('projector_meta').values({ id: 1, last_seq: 0 }).onConflict((oc) => oc.column('id').doNothing()).execute();
    },
  };
}

/** Exchange statistics (statistics.ts) read trades and fills past a journal sequence. */
const statisticsSeqIndexes: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.createIndex('trades_seq').ifNotExists().on('trades').columns(['seq', 'ev']).execute();
    await db.schema.createIndex('fills_seq').ifNotExists().on('fills').columns(['seq', 'ev']).execute();
  },
};

/**
 * Every filter + sort of GET /api/order and GET /api/fill walks an index in sort order (updated-at sorts
 * with an instrument or status filter; fills by instrument), so a page reads about `limit` rows.
 */
const historyFilterIndexes: Migration = {
  async up(db: Kysely<any>) {
    const index = (name: string, table: string, columns: string[]) =>
      db.schema.createIndex(name).ifNotExists().on(table).columns(columns).execute();
    await index('orders_user_instrument_updated', 'orders', ['user_id', 'instrument', 'updated_at', 'id']);
    await index('orders_user_status_updated', 'orders', ['user_id', 'status', 'updated_at', 'id']);
    await index('fills_user_instrument_created', 'fills', ['user_id', 'instrument', 'created_at', 'seq', 'ev']);
  },
};

export function storeMigrations(kind: StoreDialectKind): Record<string, Migration> {
  return {
    '0001_initial': initial(kind),
    '0002_statistics_seq': statisticsSeqIndexes,
    '0003_history_counts': countTriggersMigration(kind),
    '0004_history_filter_indexes': historyFilterIndexes,
    '0005_fill_hour_counts': fillHourCountsMigration(kind),
    '0006_history_ordinals': historyOrdinalsMigration(kind),
    '0007_projector_order_counts': projectorOrderCountsMigration(kind),
  };
}

/** Brings the schema up to date; throws when a migration fails. */
export async function migrateToLatest(db: Kysely<any>, kind: StoreDialectKind): Promise<void> {
  const provider: MigrationProvider = { getMigrations: async () => storeMigrations(kind) };
  const { error, results } = await new Migrator({ db, provider }).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? '?';
    throw new Error(`read-store migration ${failed} failed: ${String(error instanceof Error ? error.message : error)}`, { cause: error });
  }
}
