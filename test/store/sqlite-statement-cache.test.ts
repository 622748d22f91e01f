// The read store's SQLite handle reuses a prepared statement per SQL text (src/store/sqlite-statement-cache.ts),
// and a reused statement still answers with the current rows, also after the schema changed under it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { cachingStatements } from '../../src/store/sqlite-statement-cache.js';

test('one prepared statement per SQL text; answers stay current', async () => {
  const raw = new Database(':memory:');
  const prepared: string[] = [];
  const prepare = raw.prepare.bind(raw);
  raw.prepare = ((text: string) => {
    prepared.push(text);
    return prepare(text);
  }) as typeof raw.prepare;
  const db = new Kysely<{ t: { id: number; v: string } }>({ dialect: new SqliteDialect({ database: cachingStatements(raw) }) });
  await sql`create table t (id integer primary key, v text)`.execute(db);
  const read = (id: number) => db.selectFrom('t').select('v').where('id', '=', id).executeTakeFirst();
  for (let i = 1; i <= 5; i++) await db.insertInto('t').values({ id: i, v: `v${i}` }).execute();
  for (let i = 1; i <= 5; i++) assert.deepEqual(await read(i), { v: `v${i}` });
  assert.equal(prepared.filter((s) => s.startsWith('insert')).length, 1, 'the insert prepared once');
  assert.equal(prepared.filter((s) => s.startsWith('select')).length, 1, 'the select prepared once');
  await db.updateTable('t').set({ v: 'changed' }).where('id', '=', 3).execute();
  assert.deepEqual(await read(3), { v: 'changed' });
  await sql`alter table t add column w text`.execute(db);
  assert.deepEqual(await read(3), { v: 'changed' }, 'a cached statement is re-prepared by SQLite after a schema change');
  await db.destroy();
  assert.equal(raw.open, false, 'closing the dialect closes the handle');
});
