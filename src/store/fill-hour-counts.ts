/**
 * Migration 0005 (applied history; do not edit): per-user fill counts by UTC hour (`fill_hour_counts`),
 * kept by triggers. Superseded by the per-fill ordinals of fill-ordinals.ts, whose migration drops the
 * table and its triggers again.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { StoreDialectKind } from './types.js';

const HOUR_MS = 3_600_000;
const KEY = 'user_id, instrument, hour';

function sqliteTriggers(): string[] {
  const upsert = (row: 'new' | 'old', d: number) =>
    `insert into fill_hour_counts (${KEY}, n) values (${row}.user_id, ${row}.instrument, ${row}.created_at / ${HOUR_MS}, ${d}) ` +
    `on conflict (${KEY}) do update set n = fill_hour_counts.n + excluded.n;`;
  return [
    `create trigger if not exists fill_hour_counts_ins after insert on fills begin ${upsert('new', 1)} end`,
    `create trigger if not exists fill_hour_counts_del after delete on fills begin ${upsert('old', -1)} end`,
  ];
}

function postgresTriggers(): string[] {
  // One grouped upsert per statement from its transition table.
  const upsert = (t: string, d: number) =>
    `insert into fill_hour_counts (${KEY}, n) select user_id, instrument, created_at / ${HOUR_MS}, ${d} * count(*) from ${t} ` +
    `group by user_id, instrument, created_at / ${HOUR_MS} on conflict (${KEY}) do update set n = fill_hour_counts.n + excluded.n;`;
  const fn = (name: string, body: string) =>
    `create or replace function ${name}() returns trigger language plpgsql as $$ begin ${body} return null; end $$`;
  const trigger = (name: string, event: string, referencing: string) =>
    `create trigger ${name} after ${event} on fills referencing ${referencing} for each statement execute function ${name}()`;
  return [
    fn('fill_hour_counts_ins', upsert('new_rows', 1)),
    trigger('fill_hour_counts_ins', 'insert', 'new table as new_rows'),
    fn('fill_hour_counts_del', upsert('old_rows', -1)),
    trigger('fill_hour_counts_del', 'delete', 'old table as old_rows'),
  ];
}

/** Migration: the table, a backfill from the fills already there, then the triggers. */
export function fillHourCountsMigration(kind: StoreDialectKind): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('fill_hour_counts')
        .ifNotExists()
        .addColumn('user_id', 'bigint', (c) => c.notNull())
        .addColumn('instrument', 'text', (c) => c.notNull())
        .addColumn('hour', 'bigint', (c) => c.notNull())
        .addColumn('n', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('fill_hour_counts_pk', ['user_id', 'instrument', 'hour'])
        .execute();
      await sql.raw(
        `insert into fill_hour_counts (${KEY}, n) select user_id, instrument, created_at / ${HOUR_MS}, count(*) from fills ` +
        `group by user_id, instrument, created_at / ${HOUR_MS}`,
      ).execute(db);
      for (const s of kind === 'postgres' ? postgresTriggers() : sqliteTriggers()) await sql.raw(s).execute(db);
    },
  };
}
