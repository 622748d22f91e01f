/**
 * Per-row ordinals of the append-only history tables: the exact `count` of a page over any time window
 * in a few index seeks (GET /api/fill, GET /api/user/funding-transfer).
 *
 * Each row carries its rank, in sort order (time, seq, ev), within each of its table's partitions: fills
 * among the user's fills (`user_seq`), on the instrument (`user_inst_seq`), in the role (`user_role_seq`)
 * and both (`user_inst_role_seq`) — every filter GET /api/fill takes; collateral movements among the
 * user's (`user_seq`). So the number of a partition's rows with time < t is the rank of the last such
 * row, and the count of a window after ≤ time < before is C(before) − C(after): two backward seeks on the
 * (user_id[, instrument][, role], time, seq, ev) index instead of a scan of every row in the window.
 *
 * The projector assigns the ranks (these rows are never deleted): journal time never decreases (the
 * sequencer stamps it monotonically) and seq/ev grow, so a new row normally sorts after all of its user's
 * rows and takes last rank + 1. A row that sorts earlier (a write out of journal order) or an insert that
 * did not happen (conflict) marks its user for renumbering: every rank of that user recomputed with
 * row_number(), O(user's rows), a path the projector's own writes never take.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import { toNum } from './codec.js';
import type { StoreDialectKind } from './types.js';

type PartitionColumn = 'user_id' | 'instrument' | 'role';

/** An ordinal column and the columns (user first) of the partition it ranks within. */
export interface OrdinalScope {
  column: 'user_seq' | 'user_inst_seq' | 'user_role_seq' | 'user_inst_role_seq';
  partition: readonly PartitionColumn[];
}

/** A table whose rows carry ordinals. */
export interface OrdinalTable {
  table: 'fills' | 'funding_changes';
  /** The time column; rows sort by (time, seq, ev), and every scope has an index on (partition…, time, seq, ev). */
  time: 'created_at' | 'updated_at';
  primaryKey: readonly string[];
  scopes: readonly OrdinalScope[];
}

export const FILL_ORDINALS: OrdinalTable = {
  table: 'fills',
  time: 'created_at',
  primaryKey: ['execution_id', 'order_id'],
  scopes: [
    { column: 'user_seq', partition: ['user_id'] },
    { column: 'user_inst_seq', partition: ['user_id', 'instrument'] },
    { column: 'user_role_seq', partition: ['user_id', 'role'] },
    { column: 'user_inst_role_seq', partition: ['user_id', 'instrument', 'role'] },
  ],
};

export const FUNDING_ORDINALS: OrdinalTable = {
  table: 'funding_changes',
  time: 'updated_at',
  primaryKey: ['seq', 'ev'],
  scopes: [{ column: 'user_seq', partition: ['user_id'] }],
};

/** A scope and its partition's values after user_id: the unit windowedCount sums over. */
export interface CountPartition {
  scope: OrdinalScope;
  values: readonly unknown[];
}

/** The partitions of a fill filter (undefined = any): the user's fills, or one per instrument, role or pair. */
export function fillPartitions(instruments: readonly string[] | undefined, roles?: readonly string[]): CountPartition[] {
  const [byUser, byInstrument, byRole, byBoth] = FILL_ORDINALS.scopes as [OrdinalScope, OrdinalScope, OrdinalScope, OrdinalScope];
  const is = instruments && [...new Set(instruments)];
  const rs = roles && [...new Set(roles)];
  if (is && rs) return is.flatMap((i) => rs.map((r) => ({ scope: byBoth, values: [i, r] })));
  if (is) return is.map((i) => ({ scope: byInstrument, values: [i] }));
  if (rs) return rs.map((r) => ({ scope: byRole, values: [r] }));
  return [{ scope: byUser, values: [] }];
}

/** The one partition of a user's collateral movements. */
export const FUNDING_PARTITIONS: readonly CountPartition[] = [{ scope: FUNDING_ORDINALS.scopes[0]!, values: [] }];

export const ORDINAL_TABLES: readonly OrdinalTable[] = [FILL_ORDINALS, FUNDING_ORDINALS];

const sortDesc = (t: OrdinalTable) => `order by ${t.time} desc, seq desc, ev desc`;

/** SQLite: the last row of one partition (parameters: the partition values), or none. */
export function lastOfPartitionSql(t: OrdinalTable, scope: OrdinalScope): string {
  const where = scope.partition.map((c) => `${c} = ?`).join(' and ');
  return `select ${t.time} as time, seq, ev, ${scope.column} as n from ${t.table} where ${where} ${sortDesc(t)} limit 1`;
}

/**
 * PostgreSQL: the last row of many partitions, of several tables and scopes, in one round trip. Parameters:
 * per group, one array per partition column. Rows: `g` (the group's index), `i` (1-based position in its
 * arrays) and the last row's time, seq, ev, n (all NULL where the partition has no row).
 */
export function lastOfPartitionsPgSql(groups: ReadonlyArray<{ table: OrdinalTable; scope: OrdinalScope }>): string {
  const types: Record<PartitionColumn, string> = { user_id: 'bigint', instrument: 'text', role: 'text' };
  let param = 0;
  return groups.map(({ table: t, scope }, g) => {
    const arrays = scope.partition.map((c) => `$${++param}::${types[c]}[]`).join(', ');
    const join = scope.partition.map((c) => `r.${c} = p.${c}`).join(' and ');
    return `select ${g} as g, p.i, l.time, l.seq, l.ev, l.n from unnest(${arrays}) with ordinality as p(${scope.partition.join(', ')}, i) ` +
      `left join lateral (select ${t.time} as time, seq, ev, ${scope.column} as n from ${t.table} r where ${join} ${sortDesc(t)} limit 1) l on true`;
  }).join(' union all ');
}

/** Recomputes every ordinal of one user (`oneUser`: one positional parameter, the user id) or of every user. */
export function renumberSql(kind: StoreDialectKind, t: OrdinalTable, oneUser: boolean): string {
  const ranks = t.scopes.map((s) => {
    const rest = s.partition.filter((c) => !oneUser || c !== 'user_id');
    const partition = rest.length ? `partition by ${rest.join(', ')} ` : '';
    return `row_number() over (${partition}order by ${t.time}, seq, ev) as ${s.column}`;
  });
  const where = oneUser ? `where user_id = ${kind === 'postgres' ? '$1' : '?'}` : '';
  return `update ${t.table} set ${t.scopes.map((s) => `${s.column} = r.${s.column}`).join(', ')} ` +
    `from (select ${t.primaryKey.join(', ')}, ${ranks.join(', ')} from ${t.table} ${where}) r ` +
    `where ${t.primaryKey.map((c) => `${t.table}.${c} = r.${c}`).join(' and ')}`;
}

type Row = Record<string, unknown>;
type SortKey = [number, number, number];

/** What lastOfPartitionSql returned for one partition. */
export interface PartitionLast {
  time: unknown;
  seq: unknown;
  ev: unknown;
  n: unknown;
}

/** One read the assignment needs: the last row of `scope`'s partition with these values. */
export interface OrdinalRead {
  scope: OrdinalScope;
  values: unknown[];
}

const partitionKey = (scope: OrdinalScope, values: readonly unknown[]) => `${scope.column}|${values.map(String).join('|')}`;
const partitionOf = (scope: OrdinalScope, row: Row) => scope.partition.map((c) => row[c]);
const isAfter = (a: SortKey, b: SortKey) => a[0] !== b[0] ? a[0] > b[0] : a[1] !== b[1] ? a[1] > b[1] : a[2] > b[2];

/** The partitions one projection call's rows of `t` fall in: what assignOrdinals needs to know. */
export function ordinalReads(t: OrdinalTable, rows: readonly Row[]): OrdinalRead[] {
  const seen = new Set<string>();
  const reads: OrdinalRead[] = [];
  for (const row of rows) {
    for (const scope of t.scopes) {
      const values = partitionOf(scope, row);
      const k = partitionKey(scope, values);
      if (seen.has(k)) continue;
      seen.add(k);
      reads.push({ scope, values });
    }
  }
  return reads;
}

/**
 * Fills in the ordinal columns of one call's rows (in insertion order) from the partitions' last rows
 * (`answers`, in the order of `reads`); returns the users to renumber after the insert.
 */
export function assignOrdinals(t: OrdinalTable, rows: Row[], reads: readonly OrdinalRead[], answers: readonly (PartitionLast | undefined)[]): Set<number> {
  const state = new Map<string, { n: number; last: SortKey | undefined }>();
  reads.forEach((r, i) => {
    const a = answers[i];
    const found = a !== undefined && a.time !== null;
    state.set(partitionKey(r.scope, r.values), found
      ? { n: a.n === null ? 0 : toNum(a.n as number), last: [toNum(a.time as number), toNum(a.seq as number), toNum(a.ev as number)] }
      : { n: 0, last: undefined });
  });
  const renumber = new Set<number>();
  for (const row of rows) {
    const key: SortKey = [toNum(row[t.time] as number), toNum(row.seq as number), toNum(row.ev as number)];
    for (const scope of t.scopes) {
      const s = state.get(partitionKey(scope, partitionOf(scope, row)))!;
      // An earlier sort key, or a last row without a rank (not written by the projector): renumber.
      if (s.last !== undefined && (!isAfter(key, s.last) || s.n === 0)) renumber.add(toNum(row.user_id as number));
      row[scope.column] = ++s.n;
      s.last = key;
    }
  }
  return renumber;
}

/**
 * Exact number of the user's rows of `t` with after ≤ time < before (either bound optional), summed over
 * `partitions` (e.g. one per instrument). Per partition, rank of the last row before `before` minus rank
 * of the last row before `after`, all in one statement of scalar subqueries. Undefined when a rank is
 * missing (a row not written by the projector): the caller counts the rows instead.
 */
export async function windowedCount(
  db: Kysely<any>, t: OrdinalTable, userId: number, partitions: readonly CountPartition[],
  after: number | undefined, before: number | undefined,
): Promise<number | undefined> {
  if (after !== undefined && before !== undefined && after >= before) return 0;
  // Rank of the partition's last row before `bound`: NULL when there is none (0 rows), -1 when it has no rank.
  const rankBefore = (p: (typeof partitions)[number], bound: number | undefined) => {
    const conditions = [sql`user_id = ${userId}`];
    p.scope.partition.slice(1).forEach((c, i) => conditions.push(sql`${sql.ref(c)} = ${p.values[i]}`));
    if (bound !== undefined) conditions.push(sql`${sql.ref(t.time)} < ${bound}`);
    return sql`(select coalesce(${sql.ref(p.scope.column)}, -1) from ${sql.table(t.table)} where ${sql.join(conditions, sql` and `)} ${sql.raw(sortDesc(t))} limit 1)`;
  };
  const terms: Array<{ sign: 1 | -1; expr: ReturnType<typeof rankBefore> }> = [];
  for (const p of partitions) {
    terms.push({ sign: 1, expr: rankBefore(p, before) });
    if (after !== undefined) terms.push({ sign: -1, expr: rankBefore(p, after) });
  }
  const row = (await sql<Record<string, unknown>>`select ${sql.join(terms.map((x, i) => sql`${x.expr} as ${sql.ref(`r${i}`)}`))}`.execute(db)).rows[0]!;
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
 * Migration 0006: the ordinal columns, ranked for the rows already there, and the indexes the role scopes
 * seek on (they also walk role-filtered fill pages in order). The fill counters they replace (fill_counts,
 * fill_hour_counts: their triggers cost every fill insert) are dropped.
 */
export function historyOrdinalsMigration(kind: StoreDialectKind): Migration {
  return {
    async up(db: Kysely<any>) {
      const index = (name: string, columns: string[]) => db.schema.createIndex(name).ifNotExists().on('fills').columns(columns).execute();
      await index('fills_user_role_created', ['user_id', 'role', 'created_at', 'seq', 'ev']);
      await index('fills_user_instrument_role_created', ['user_id', 'instrument', 'role', 'created_at', 'seq', 'ev']);
      for (const t of ORDINAL_TABLES) {
        for (const s of t.scopes) await db.schema.alterTable(t.table).addColumn(s.column, 'bigint').execute();
        await sql.raw(renumberSql(kind, t, false)).execute(db);
      }
      for (const name of ['fill_counts_ins', 'fill_counts_del', 'fill_hour_counts_ins', 'fill_hour_counts_del']) {
        await sql.raw(`drop trigger if exists ${name}${kind === 'postgres' ? ' on fills' : ''}`).execute(db);
        if (kind === 'postgres') await sql.raw(`drop function if exists ${name}()`).execute(db);
      }
      await db.schema.dropTable('fill_counts').ifExists().execute();
      await db.schema.dropTable('fill_hour_counts').ifExists().execute();
    },
  };
}
