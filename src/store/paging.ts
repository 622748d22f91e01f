/**
 * Keyset paging shared by every list query.
 *
 * A page is ordered by a tuple of columns ending in a unique tiebreak (e.g. created_at, id). The `next`
 * cursor is base64url JSON of {sort name, the last row's tuple}; the following page is
 * `WHERE (cols) > / < (tuple)`, a row-value comparison both SQLite and PostgreSQL answer from the
 * matching index, so deep pages cost the same as the first. Rows inserted meanwhile never shift a page
 * (no OFFSET); a row whose sort key changes (updated-at sorts) may move to a page already read or one
 * still ahead, as with any live keyset.
 *
 * `count` is the exact number of rows matching the filter at the time of the page. Lists with a counter
 * (history-counts.ts) also write the count and the version it was taken at into the cursor, so a later
 * page skips the count while that version holds; other lists count(*) on every page.
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

/** A count taken by an earlier page; `version` is opaque to paging (the counter checks it). */
export interface CarriedCount {
  count: number;
  version: string;
}

/** A page's count and, when known, the version of the row set it was taken at. */
export interface PageCount {
  count: number;
  version?: string;
}

export function encodeCursor(sort: string, key: KeyValue[], carried?: CarriedCount): string {
  const body = carried ? { s: sort, k: key, c: carried.count, v: carried.version } : { s: sort, k: key };
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

export interface DecodedCursor {
  key: KeyValue[];
  carried?: CarriedCount;
}

export function decodeCursor(cursor: string, sort: string, arity: number): DecodedCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new StoreQueryError('invalid next cursor');
  }
  const p = parsed as { s?: unknown; k?: unknown; c?: unknown; v?: unknown };
  if (!p || p.s !== sort || !Array.isArray(p.k) || p.k.length !== arity) {
    throw new StoreQueryError('next cursor does not belong to this query (sort changed?)');
  }
  for (const v of p.k) if (typeof v !== 'string' && !(typeof v === 'number' && Number.isSafeInteger(v))) {
    throw new StoreQueryError('invalid next cursor');
  }
  const key = p.k as KeyValue[];
  // A malformed carried count is ignored (the page counts again), never trusted.
  const carried = typeof p.c === 'number' && Number.isSafeInteger(p.c) && p.c >= 0 && typeof p.v === 'string' && p.v.length <= 200
    ? { count: p.c, version: p.v }
    : undefined;
  return carried ? { key, carried } : { key };
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

/** Counts the rows of a page's filter; `carried` is what the cursor brought, if anything. */
export type PageCounter = (carried: CarriedCount | undefined) => Promise<PageCount>;

/** count(*) of the filter, every time. */
export function scanCounter(base: SelectQueryBuilder<any, any, {}>): () => Promise<number> {
  return async () => {
    const counted = await base.select((eb) => eb.fn.countAll().as('n')).executeTakeFirst();
    return toNum((counted as { n: number | bigint | string } | undefined)?.n ?? 0);
  };
}

/**
 * Runs count + one page of a filtered query. `base` carries the FROM and WHERE filters only; `counter`
 * defaults to count(*) over `base`.
 */
export async function keysetPage<Row, View>(
  base: SelectQueryBuilder<any, any, {}>,
  spec: KeysetSpec<Row>,
  page: PageInput,
  toView: (row: Row) => View,
  counter?: PageCounter,
): Promise<Page<View>> {
  const limit = clampLimit(page.limit);
  const decoded = page.next ? decodeCursor(page.next, spec.sort, spec.columns.length) : undefined;
  const cursor = decoded?.key;
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
  const count: PageCounter = counter ?? (async () => ({ count: await scanCounter(base)() }));
  const [rows, counted] = await Promise.all([q.execute() as Promise<Row[]>, count(decoded?.carried)]);
  const more = rows.length > limit;
  if (more) rows.length = limit;
  const result: Page<View> = { list: rows.map(toView), count: counted.count };
  if (more) {
    const carried = counted.version === undefined ? undefined : { count: counted.count, version: counted.version };
    result.next = encodeCursor(spec.sort, spec.keyOf(rows[rows.length - 1]!), carried);
  }
  return result;
}
