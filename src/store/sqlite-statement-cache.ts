/**
 * The SQLite handle Kysely's dialect sees, with its prepared statements kept by SQL text: Kysely prepares every
 * query it runs, and preparing cost about a fifth of a history page's main-thread time (docs/performance.md,
 * "Read model"). Kysely runs one query at a time on this connection, so a statement is never in use twice.
 */
import type Database from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import { LRUCache } from 'lru-cache';

/** Distinct query texts kept: the routes' queries vary by filters and page size, not by values. */
const STATEMENTS = 1000;

export function cachingStatements(sqlite: Database.Database): SqliteDatabase {
  const statements = new LRUCache<string, Database.Statement>({ max: STATEMENTS });
  return {
    close: () => {
      statements.clear();
      sqlite.close();
    },
    prepare: (sql: string): SqliteStatement => {
      let statement = statements.get(sql);
      if (statement === undefined) {
        statement = sqlite.prepare(sql);
        statements.set(sql, statement);
      }
      return statement as unknown as SqliteStatement;
    },
  };
}
