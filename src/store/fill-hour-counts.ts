/**
 * Per-user fill counts by UTC hour (`fill_hour_counts`), kept by triggers like the counters of
 * count-triggers.ts, so a fill count over an arbitrary time window costs Σ of the whole hours inside it
 * plus two index range counts over at most an hour each, instead of a scan of every fill in the window.
 * (GET /api/fill takes a window on every request; a new window cannot reuse a cached count.)
 */
import { sql, type Kysely, type Migration } from 'kysely';
import { toNum } from './codec.js';
import type { StoreDialectKind } from './types.js';

export const HOUR_MS = 3_600_000;
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

/**
 * Exact number of the user's fills with after ≤ created_at < before (either bound optional) on the given
 * instruments (undefined = all): whole hours from the counters, the partial hours at the edges counted.
 */
export async function windowedFillCount(
  db: Kysely<any>, userId: number, instruments: readonly string[] | undefined, after: number | undefined, before: number | undefined,
): Promise<number> {
  const onInstruments = <Q extends { where: (...a: any[]) => Q }>(q: Q): Q =>
    instruments === undefined ? q : q.where('instrument', 'in', instruments as string[]);
  const rows = async (from: number | undefined, to: number | undefined): Promise<number> => {
    let q = onInstruments(db.selectFrom('fills').select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', userId));
    if (from !== undefined) q = q.where('created_at', '>=', from);
    if (to !== undefined) q = q.where('created_at', '<', to);
    return toNum((await q.executeTakeFirstOrThrow()).n as number | bigint | string);
  };
  // Whole hours h lie inside the window when after ≤ h·H and (h+1)·H ≤ before.
  const firstHour = after === undefined ? undefined : Math.ceil(after / HOUR_MS);
  const endHour = before === undefined ? undefined : Math.floor(before / HOUR_MS);
  if (firstHour !== undefined && endHour !== undefined && firstHour >= endHour) return rows(after, before); // under two hours
  let q = onInstruments(db.selectFrom('fill_hour_counts').select((eb) => eb.fn.sum('n').as('n')).where('user_id', '=', userId));
  if (firstHour !== undefined) q = q.where('hour', '>=', firstHour);
  if (endHour !== undefined) q = q.where('hour', '<', endHour);
  const whole = (await q.executeTakeFirst())?.n;
  let total = whole === null || whole === undefined ? 0 : toNum(whole as number | bigint | string);
  if (firstHour !== undefined && after! < firstHour * HOUR_MS) total += await rows(after, firstHour * HOUR_MS);
  if (endHour !== undefined && endHour * HOUR_MS < before!) total += await rows(endHour * HOUR_MS, before);
  return total;
}
