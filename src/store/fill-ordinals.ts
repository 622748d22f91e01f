/**
 * Per-fill ordinals: the exact `count` of GET /api/fill over any time window in a few index seeks.
 *
 * Each fill row carries its rank among the user's fills in sort order (created_at, seq, ev):
 * `user_seq` among all of the user's fills, `user_inst_seq` among those on its instrument. So the number
 * of a user's (instrument's) fills with created_at < t is the rank of the last such row, and the count
 * of a window after ≤ created_at < before is C(before) − C(after): two backward seeks on
 * fills(user_id[, instrument], created_at, seq, ev) instead of a scan of every fill in the window.
 *
 * The projector assigns the ranks (fills are never deleted): journal time never decreases (the sequencer
 * stamps it monotonically) and seq/ev grow, so a new fill normally sorts after all of its user's fills
 * and takes last rank + 1. A fill that sorts earlier (a write out of journal order) or an insert that
 * did not happen (conflict) marks its user for renumbering: every rank of that user recomputed with
 * row_number(), O(user's fills), a path the projector's own writes never take.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import { toNum } from './codec.js';
import type { StoreDialectKind } from './types.js';

/** An ordinal column and the columns (user first) of the partition it ranks within. */
export interface OrdinalScope {
  column: 'user_seq' | 'user_inst_seq';
  partition: readonly ('user_id' | 'instrument')[];
}

export const FILL_ORDINAL_SCOPES: readonly OrdinalScope[] = [
  { column: 'user_seq', partition: ['user_id'] },
  { column: 'user_inst_seq', partition: ['user_id', 'instrument'] },
];

const SORT_DESC = 'order by created_at desc, seq desc, ev desc';

/** SQLite: the last fill of one partition (parameters: the partition values), or none. */
export function lastOfPartitionSql(scope: OrdinalScope): string {
  const where = scope.partition.map((c) => `${c} = ?`).join(' and ');
  return `select created_at, seq, ev, ${scope.column} as n from fills where ${where} ${SORT_DESC} limit 1`;
}

/**
 * PostgreSQL: the last fill of many partitions of one scope in one round trip (parameters: one array per
 * partition column); rows in the order of the arrays, `n` etc. NULL where a partition has no fill.
 */
export function lastOfPartitionsPgSql(scope: OrdinalScope): string {
  const types: Record<string, string> = { user_id: 'bigint', instrument: 'text' };
  const arrays = scope.partition.map((c, i) => `$${i + 1}::${types[c]}[]`).join(', ');
  const join = scope.partition.map((c) => `f.${c} = p.${c}`).join(' and ');
  return `select l.created_at, l.seq, l.ev, l.n from unnest(${arrays}) with ordinality as p(${scope.partition.join(', ')}, i) ` +
    `left join lateral (select created_at, seq, ev, ${scope.column} as n from fills f where ${join} ${SORT_DESC} limit 1) l on true order by p.i`;
}

/** Recomputes every ordinal of one user (`userId` given: one positional parameter) or of every user. */
export function renumberSql(kind: StoreDialectKind, oneUser: boolean): string {
  const ranks = FILL_ORDINAL_SCOPES.map((s) => {
    const rest = s.partition.filter((c) => !oneUser || c !== 'user_id');
    const partition = rest.length ? `partition by ${rest.join(', ')} ` : '';
    return `row_number() over (${partition}order by created_at, seq, ev) as ${s.column}`;
  });
  const where = oneUser ? `where user_id = ${kind === 'postgres' ? '$1' : '?'}` : '';
  return `update fills set ${FILL_ORDINAL_SCOPES.map((s) => `${s.column} = r.${s.column}`).join(', ')} ` +
    `from (select execution_id, order_id, ${ranks.join(', ')} from fills ${where}) r ` +
    'where fills.execution_id = r.execution_id and fills.order_id = r.order_id';
}

type Row = Record<string, unknown>;
type SortKey = [number, number, number];

/** What lastOfPartitionSql returned for one partition. */
export interface PartitionLast {
  created_at: unknown;
  seq: unknown;
  ev: unknown;
  n: unknown;
}

/** One read the assignment needs: the last fill of `scope`'s partition with these values. */
export interface OrdinalRead {
  scope: OrdinalScope;
  values: unknown[];
}

const partitionKey = (scope: OrdinalScope, row: Row) => `${scope.column}|${scope.partition.map((c) => String(row[c])).join('|')}`;
const sortKey = (row: Row | PartitionLast): SortKey => [toNum(row.created_at as number), toNum(row.seq as number), toNum(row.ev as number)];
const after = (a: SortKey, b: SortKey) => a[0] !== b[0] ? a[0] > b[0] : a[1] !== b[1] ? a[1] > b[1] : a[2] > b[2];

/**
 * Ordinals of one projection call's fills (rows in insertion order). `reads` lists the partitions to look
 * up, `assign` fills in the ordinal columns from the answers (same order) and returns the users whose
 * fills must be renumbered after the insert (a fill sorting before one already there).
 */
export function fillOrdinalReads(fills: readonly Row[]): OrdinalRead[] {
  const seen = new Set<string>();
  const reads: OrdinalRead[] = [];
  for (const row of fills) {
    for (const scope of FILL_ORDINAL_SCOPES) {
      const k = partitionKey(scope, row);
      if (seen.has(k)) continue;
      seen.add(k);
      reads.push({ scope, values: scope.partition.map((c) => row[c]) });
    }
  }
  return reads;
}

export function assignFillOrdinals(fills: Row[], reads: readonly OrdinalRead[], answers: readonly (PartitionLast | undefined)[]): Set<number> {
  const state = new Map<string, { n: number; last: SortKey | undefined }>();
  reads.forEach((r, i) => {
    const a = answers[i];
    const row: Row = {};
    r.scope.partition.forEach((c, j) => { row[c] = r.values[j]; });
    const found = a !== undefined && a.created_at !== null;
    state.set(partitionKey(r.scope, row), found ? { n: a.n === null ? 0 : toNum(a.n as number), last: sortKey(a) } : { n: 0, last: undefined });
  });
  const renumber = new Set<number>();
  for (const row of fills) {
    const key = sortKey(row);
    for (const scope of FILL_ORDINAL_SCOPES) {
      const s = state.get(partitionKey(scope, row))!;
      // A null rank (a row written without ordinals) or an earlier sort key: rank it by renumbering.
      if (s.last !== undefined && (!after(key, s.last) || s.n === 0)) renumber.add(toNum(row.user_id as number));
      row[scope.column] = ++s.n;
      s.last = key;
    }
  }
  return renumber;
}

/**
 * Exact number of the user's fills with after ≤ created_at < before (either bound optional) on the given
 * instruments (undefined = all): per instrument, rank of the last fill before `before` minus rank of the
 * last fill before `after`, all in one statement of scalar subqueries. Undefined when a rank is missing
 * (a row not written by the projector): the caller counts the rows instead.
 */
export async function windowedFillCount(
  db: Kysely<any>, userId: number, instruments: readonly string[] | undefined, after: number | undefined, before: number | undefined,
): Promise<number | undefined> {
  if (after !== undefined && before !== undefined && after >= before) return 0;
  const partitions: Array<{ column: string; instrument?: string }> = instruments === undefined
    ? [{ column: 'user_seq' }]
    : [...new Set(instruments)].map((instrument) => ({ column: 'user_inst_seq', instrument }));
  // Rank of the partition's last fill before t: NULL when there is none (0 fills), -1 when it has no rank.
  const rankBefore = (p: { column: string; instrument?: string }, t: number | undefined) => sql`(select coalesce(${sql.ref(p.column)}, -1) from fills
    where user_id = ${userId}${p.instrument === undefined ? sql`` : sql` and instrument = ${p.instrument}`}${t === undefined ? sql`` : sql` and created_at < ${t}`}
    ${sql.raw(SORT_DESC)} limit 1)`;
  const terms: Array<{ sign: 1 | -1; expr: ReturnType<typeof rankBefore> }> = [];
  for (const p of partitions) {
    terms.push({ sign: 1, expr: rankBefore(p, before) });
    if (after !== undefined) terms.push({ sign: -1, expr: rankBefore(p, after) });
  }
  const row = (await sql<Record<string, unknown>>`select ${sql.join(terms.map((t, i) => sql`${t.expr} as ${sql.ref(`r${i}`)}`))}`.execute(db)).rows[0]!;
  let count = 0;
  for (let i = 0; i < terms.length; i++) {
    const v = row[`r${i}`];
    if (v === null || v === undefined) continue;
    const rank = toNum(v as number);
    if (rank < 0) return undefined;
    count += terms[i]!.sign * rank;
  }
  return count;
}

/**
 * Migration: the ordinal columns, ranked for the fills already there. The fill counters they replace
 * (fill_counts, fill_hour_counts: their triggers cost every fill insert) are dropped.
 */
export function fillOrdinalsMigration(kind: StoreDialectKind): Migration {
  return {
    async up(db: Kysely<any>) {
      for (const s of FILL_ORDINAL_SCOPES) await db.schema.alterTable('fills').addColumn(s.column, 'bigint').execute();
      await sql.raw(renumberSql(kind, false)).execute(db);
      for (const name of ['fill_counts_ins', 'fill_counts_del', 'fill_hour_counts_ins', 'fill_hour_counts_del']) {
        await sql.raw(`drop trigger if exists ${name}${kind === 'postgres' ? ' on fills' : ''}`).execute(db);
        if (kind === 'postgres') await sql.raw(`drop function if exists ${name}()`).execute(db);
      }
      await db.schema.dropTable('fill_counts').ifExists().execute();
      await db.schema.dropTable('fill_hour_counts').ifExists().execute();
    },
  };
}
