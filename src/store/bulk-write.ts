/**
 * Multi-row INSERT … ON CONFLICT in chunks, for the projector's hot path.
 *
 * One statement per chunk rather than per row (Kysely's SQLite driver prepares every statement it runs),
 * and the SQL text is built here, once per (table, shape, chunk size), instead of through Kysely's query
 * builder: building and compiling an AST of ~16,000 values per statement cost more than SQLite's insert
 * itself. Identifiers are fixed column names from codec.ts, never user input. Execution still goes
 * through Kysely (same connection, same transaction).
 */
import { CompiledQuery, type Kysely } from 'kysely';
import type { StoreDialectKind } from './types.js';

/** Bound parameters per statement; below SQLite's 32,766 and PostgreSQL's 65,535. */
const MAX_PARAMS = 16_000;

export type ConflictAction = { keys: readonly string[]; update: 'all' | 'none' };

const sqlCache = new Map<string, string>();

export function insertSql(kind: StoreDialectKind, table: string, columns: readonly string[], rows: number, conflict: ConflictAction): string {
  const cacheKey = `${kind}|${table}|${columns.join(',')}|${rows}|${conflict.keys.join(',')}|${conflict.update}`;
  const cached = sqlCache.get(cacheKey);
  if (cached) return cached;
  const q = (id: string) => `"${id}"`;
  let n = 0;
  const tuple = () => `(${columns.map(() => (kind === 'postgres' ? `$${++n}` : '?')).join(',')})`;
  const values = Array.from({ length: rows }, tuple).join(',');
  const updated = columns.filter((c) => !conflict.keys.includes(c));
  const action = conflict.update === 'none' || updated.length === 0
    ? 'do nothing'
    : `do update set ${updated.map((c) => `${q(c)} = excluded.${q(c)}`).join(', ')}`;
  const text = `insert into ${q(table)} (${columns.map(q).join(', ')}) values ${values} on conflict (${conflict.keys.map(q).join(', ')}) ${action}`;
  if (sqlCache.size > 500) sqlCache.clear();
  sqlCache.set(cacheKey, text);
  return text;
}

/** Returns the number of rows inserted or updated (rows skipped by `do nothing` not included). */
export async function insertRows(
  db: Kysely<any>,
  kind: StoreDialectKind,
  table: string,
  rows: readonly Record<string, unknown>[],
  conflict: ConflictAction,
): Promise<number> {
  if (rows.length === 0) return 0;
  let written = 0;
  const columns = Object.keys(rows[0]!);
  const chunk = Math.max(1, Math.floor(MAX_PARAMS / columns.length));
  for (let i = 0; i < rows.length; i += chunk) {
    const part = rows.slice(i, i + chunk);
    const params: unknown[] = [];
    for (const row of part) for (const c of columns) params.push(row[c] ?? null);
    const r = await db.executeQuery(CompiledQuery.raw(insertSql(kind, table, columns, part.length, conflict), params));
    written += Number(r.numAffectedRows ?? 0n);
  }
  return written;
}
