/**
 * Keyset paging shared by every list query.
 *
 * A page is ordered by a tuple of columns ending in a unique tiebreak (e.g. created_at, id). The `next`
 * cursor is base64url JSON of {sort name, the last row's tuple}; the following page is
 * `WHERE (cols) > / < (tuple)`, a row-value comparison both SQLite and PostgreSQL answer from the
 * matching index, so deep pages cost the same as the first. Rows inserted meanwhile never shift a page
 * (no OFFSET); a row whose sort key changes (updated-at sorts) may move to a page already read or one
 * still ahead, as with any live keyset.
 */
import { sql, type SelectQueryBuilder } from 'kysely';
import { toNum } from './codec.js';
import { StoreQueryError, type Page, type PageInput, type TimeInput } from './types.js';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;

export function clampLimit(limit: number | undefined, fallback = DEFAULT_LIMIT, max = MAX_LIMIT): number {
  if (limit === undefined || !Number.isFinite(limit)) return fallback;
  return Math.min(max, Math.max(1, Math.trunc(limit)));
}

export function clampOffset(offset: number | undefined): number {
  if (offset === undefined || !Number.isFinite(offset) || offset < 0) return 0;
  return Math.trunc(offset);
}

type KeyValue = number | string;

export function encodeCursor(sort: string, key: KeyValue[]): string {
  return Buffer.from(JSON.stringify({ s: sort, k: key }), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, sort: string, arity: number): KeyValue[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new StoreQueryError('invalid next cursor');
  }
  const p = parsed as { s?: unknown; k?: unknown };
  if (!p || p.s !== sort || !Array.isArray(p.k) || p.k.length !== arity) {
    throw new StoreQueryError('next cursor does not belong to this query (sort changed?)');
  }
  for (const v of p.k) if (typeof v !== 'string' && !(typeof v === 'number' && Number.isSafeInteger(v))) {
    throw new StoreQueryError('invalid next cursor');
  }
  return p.k as KeyValue[];
}

/** Epoch ms from a time bound; throws StoreQueryError on garbage. */
export function toEpochMs(t: TimeInput): number {
  let ms: number;
  if (t instanceof Date) ms = t.getTime();
  else if (typeof t === 'number') ms = t;
  else if (/^\d+$/.test(t.trim())) ms = Number(t.trim());
  else ms = Date.parse(t);
  if (!Number.isSafeInteger(ms)) throw new StoreQueryError(`invalid time: ${String(t)}`);
  return ms;
}

export interface KeysetSpec<Row> {
  /** Name written into cursors (the public sort name). */
  sort: string;
  /** Sort columns, unique together; the same direction for all. */
  columns: readonly string[];
  direction: 'asc' | 'desc';
  /** Cursor values of a row (its sort columns). */
  keyOf: (row: Row) => KeyValue[];
}

/**
 * Runs count + one page of a filtered query. `base` carries the FROM and WHERE filters only.
 */
export async function keysetPage<Row, View>(
  base: SelectQueryBuilder<any, any, {}>,
  spec: KeysetSpec<Row>,
  page: PageInput,
  toView: (row: Row) => View,
): Promise<Page<View>> {
  const limit = clampLimit(page.limit);
  const cursor = page.next ? decodeCursor(page.next, spec.sort, spec.columns.length) : undefined;
  let q = base.selectAll();
  if (cursor) {
    const cols = sql.join(spec.columns.map((c) => sql.ref(c)));
    const vals = sql.join(cursor.map((v) => sql.val(v)));
    const op = sql.raw(spec.direction === 'desc' ? '<' : '>');
    q = q.where(sql<boolean>`(${cols}) ${op} (${vals})`);
  }
  for (const c of spec.columns) q = q.orderBy(sql.ref(c), spec.direction);
  q = q.limit(limit + 1);
  if (!cursor) {
    const offset = clampOffset(page.offset);
    if (offset > 0) q = q.offset(offset);
  }
  const countQ = base.select((eb) => eb.fn.countAll().as('n'));
  const [rows, counted] = await Promise.all([q.execute() as Promise<Row[]>, countQ.executeTakeFirst()]);
  const more = rows.length > limit;
  if (more) rows.length = limit;
  const result: Page<View> = {
    list: rows.map(toView),
    count: toNum((counted as { n: number | bigint | string } | undefined)?.n ?? 0),
  };
  if (more) result.next = encodeCursor(spec.sort, spec.keyOf(rows[rows.length - 1]!));
  return result;
}
