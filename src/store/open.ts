/**
 * Opens the read store: connects, migrates, and hands out the projector and the queries.
 *
 * SQLite (default, embedded): one better-sqlite3 connection in WAL mode with synchronous=NORMAL — the read
 * models can always be rebuilt from the journal, so the last few commits need not survive a power cut.
 * Integers are read as bigint (safeIntegers) so money above 2^53 stays exact; codec.ts narrows them.
 * PostgreSQL: a pg Pool; int8 arrives as strings and is narrowed the same way.
 */
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { migrateToLatest } from './migrations.js';
import { Projector } from './projector.js';
import { StoreQueries } from './queries.js';
import { StoreStatistics } from './user-charts.js';
import type { StoreDatabase } from './schema.js';
import type { StoreConfig, StoreDialectKind } from './types.js';
import type { ProjectionFaults } from './projection-faults.js';
import { resilientPgPool } from './pg-pool.js';
import { cachingStatements } from './sqlite-statement-cache.js';

export interface ReadStore {
  readonly kind: StoreDialectKind;
  readonly projector: Projector;
  readonly queries: StoreQueries;
  /** Bucketed charts and statistics. */
  readonly statistics: StoreStatistics;
  /** The underlying Kysely instance (maintenance, tests). */
  readonly db: Kysely<StoreDatabase>;
  close(): Promise<void>;
}

function openSqlite(file: string): Database.Database {
  const sqlite = new Database(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('temp_store = MEMORY');
  // Upserts touch several indexes per row; a bigger page cache keeps their hot pages in memory.
  sqlite.pragma('cache_size = -65536');
  // Each projection commit rewrites the index pages it touched into the WAL; a checkpoint copies each page
  // once however many commits rewrote it, so rare checkpoints copy and sync the hot index leaves less often
  // (measurements: docs/performance.md, "Read model"). Readers then search a longer WAL index.
  sqlite.pragma('wal_autocheckpoint = 50000');
  sqlite.defaultSafeIntegers(true);
  // Exact Σ a×b for user-charts.ts (SQLite integers overflow to floating point; money must not).
  sqlite.aggregate('exact_product_sum', {
    start: 0n,
    step: ((acc: bigint, a: bigint | null, b: bigint | null) => (a === null || b === null ? acc : acc + BigInt(a) * BigInt(b))) as (acc: bigint, ...v: unknown[]) => bigint,
    result: (acc: bigint) => acc.toString(),
  });
  return sqlite;
}

function postgresDialect(connectionString: string, poolSize = 10): PostgresDialect {
  const pool = resilientPgPool({ connectionString, max: poolSize });
  return new PostgresDialect({ pool });
}

/** `faults`: tests only, failures injected into the projector's transactions (projection-faults.ts). */
export async function openReadStore(config: StoreConfig, faults?: ProjectionFaults): Promise<ReadStore> {
  // The projector writes through the raw SQLite handle too (same connection, see Projector).
  let sqlite: Database.Database | undefined;
  let dialect: SqliteDialect | PostgresDialect;
  if (config.kind === 'sqlite') {
    sqlite = openSqlite(config.file);
    dialect = new SqliteDialect({ database: cachingStatements(sqlite) });
  } else {
    dialect = postgresDialect(config.connectionString, config.poolSize);
  }
  const db = new Kysely<StoreDatabase>({ dialect });
  try {
    await migrateToLatest(db, config.kind);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return {
    kind: config.kind,
    db,
    projector: new Projector(db, config.kind, sqlite, faults),
    queries: new StoreQueries(db),
    statistics: new StoreStatistics(db, config.kind),
    close: () => db.destroy(),
  };
}
