/**
 * The two databases every store test runs on. SQLite: a temp file. PostgreSQL: a fresh database with a
 * unique name per call (parallel runs never clash), dropped on close. `describeOnDialects` runs a contract suite
 * of any store (auth, accounts) on both, a fresh database per case. PG admin URL: test/services.ts, whose rule
 * applies: PostgreSQL unreachable skips the PG cases on a developer's machine and fails them under CI.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe } from 'node:test';
import pg from 'pg';
import { openReadStore, type ReadStore } from '../../src/store/index.js';
import { available, PG_ADMIN_URL } from '../services.js';

export interface TestStore {
  store: ReadStore;
  /** Opens a second store on the same database (reopen / migration idempotence). */
  reopen(): Promise<ReadStore>;
  dispose(): Promise<void>;
}

export async function openSqliteTestStore(): Promise<TestStore> {
  const dir = mkdtempSync(join(tmpdir(), 'store-test-'));
  const file = join(dir, 'read.db');
  const store = await openReadStore({ kind: 'sqlite', file });
  return {
    store,
    reopen: () => openReadStore({ kind: 'sqlite', file }),
    async dispose() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** True when PostgreSQL answers; false outside CI when it does not; under CI a rejection (the cases fail). */
export function postgresAvailable(): Promise<boolean> {
  return available('postgres');
}

/** A fresh, uniquely named PostgreSQL database (parallel runs never clash); `drop` removes it. */
export async function createPostgresTestDatabase(): Promise<{ connectionString: string; drop(): Promise<void> }> {
  const name = `store_test_${process.pid}_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6)}`;
  await admin((c) => c.query(`create database ${name}`));
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    connectionString: url.toString(),
    drop: async () => {
      // pg's Pool.end() resolves before its sockets have closed: a forced drop right away can terminate a
      // backend whose client then throws 57P01 with nobody listening. Wait for the clients to leave first.
      for (let attempt = 0; attempt < 40; attempt++) {
        try {
          await admin((c) => c.query(`drop database if exists ${name}`));
          return;
        } catch (err) {
          if ((err as { code?: string }).code !== '55006') throw err; // 55006: still being accessed
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      await admin((c) => c.query(`drop database if exists ${name} with (force)`));
    },
  };
}

export async function openPostgresTestStore(): Promise<TestStore> {
  const database = await createPostgresTestDatabase();
  const { connectionString } = database;
  const store = await openReadStore({ kind: 'postgres', connectionString });
  const extra: ReadStore[] = [];
  return {
    store,
    async reopen() {
      const s = await openReadStore({ kind: 'postgres', connectionString });
      extra.push(s);
      return s;
    },
    async dispose() {
      await store.close();
      for (const s of extra) await s.close().catch(() => undefined);
      await database.drop();
    },
  };
}

export const DIALECTS = [
  { name: 'sqlite', open: openSqliteTestStore, available: async () => true },
  { name: 'postgres', open: openPostgresTestStore, available: postgresAvailable },
] as const;

/** What a contract test opens for one case; `dispose` closes it (the PostgreSQL database is dropped after). */
export interface OpenedAdapter {
  dispose(): Promise<void>;
}

/** Opens an adapter's store for one case: on a fresh SQLite database, or on the fresh PostgreSQL database given. */
export interface AdapterOpeners<T extends OpenedAdapter> {
  sqlite(): Promise<T>;
  postgres(connectionString: string): Promise<T>;
}

/** Wraps a case body: opens a fresh store for it and disposes of it afterwards, pass or fail. */
export type WithStore<T> = (fn: (opened: T) => Promise<void>) => () => Promise<void>;

/**
 * A contract suite run on both databases: `cases` is declared once per dialect in `describe('<title> on <dialect>')`,
 * each case on a fresh store (PostgreSQL: a fresh database per case, dropped after). When PostgreSQL does not
 * answer, its suite is skipped outside CI and fails under CI (test/services.ts).
 */
export async function describeOnDialects<T extends OpenedAdapter>(title: string, open: AdapterOpeners<T>, cases: (withStore: WithStore<T>) => void): Promise<void> {
  const onSqlite = async () => {
    const opened = await open.sqlite();
    return { opened, close: () => opened.dispose() };
  };
  const onPostgres = async () => {
    const database = await createPostgresTestDatabase();
    const opened = await open.postgres(database.connectionString).catch(async (err: unknown) => {
      await database.drop();
      throw err;
    });
    const close = async () => {
      try {
        await opened.dispose();
      } finally {
        await database.drop();
      }
    };
    return { opened, close };
  };
  for (const dialect of [
    { name: 'sqlite', open: onSqlite, available: async () => true },
    { name: 'postgres', open: onPostgres, available: postgresAvailable },
  ]) {
    const skip = !(await dialect.available()) && `${dialect.name} not reachable`;
    describe(`${title} on ${dialect.name}`, { skip }, () => {
      cases((fn) => async () => {
        const { opened, close } = await dialect.open();
        try {
          await fn(opened);
        } finally {
          await close();
        }
      });
    });
  }
}
