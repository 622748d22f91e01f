/**
 * OHLCV candles from the public trades table, aggregated in SQL (one query for SQLite and PostgreSQL):
 * a bucket is `created_at − created_at mod interval` (UTC-aligned, so 1d candles open at 00:00 UTC), low/high/
 * volume are aggregates, open/close the first/last trade of the bucket in journal order (created_at, seq, ev),
 * found through the (instrument, created_at, seq, ev) index. Buckets without trades are left out.
 */
import { sql, type Kysely } from 'kysely';
import { formatUnits } from '../domain/fixed.js';
import type { StoreDatabase } from './schema.js';

/** Candle widths served, in ms (the route's `interval` values). */
export const CANDLE_INTERVALS = {
  '1m': 60_000,
  '5m': 300_000,
  '15m': 900_000,
  '1h': 3_600_000,
  '4h': 14_400_000,
  '1d': 86_400_000,
} as const;
export type CandleInterval = keyof typeof CANDLE_INTERVALS;

/** Most candles one query returns. */
export const MAX_CANDLES = 1000;

export interface CandleQuery {
  instrument: string;
  interval: CandleInterval;
  /** Candles whose open time t satisfies from ≤ t < to (epoch ms). */
  from: number;
  to: number;
  /** At most this many (the newest ones in the window); clamped to [1, MAX_CANDLES]. */
  limit?: number;
}

/** Money as exact decimal strings; `t` the candle's open time (epoch ms). */
export interface Candle {
  t: number;
  o: string;
  h: string;
  l: string;
  c: string;
  v: string;
}

type IntLike = number | bigint | string;

interface CandleRow {
  b: IntLike;
  o: IntLike;
  h: IntLike;
  l: IntLike;
  c: IntLike;
  v: IntLike;
}

const ceilTo = (t: number, step: number): number => Math.ceil(t / step) * step;
const money = (v: IntLike): string => formatUnits(BigInt(v));

export async function queryCandles(db: Kysely<StoreDatabase>, q: CandleQuery): Promise<Candle[]> {
  const step = CANDLE_INTERVALS[q.interval];
  // Bucket b is in the window iff from ≤ b < to; b is a multiple of step, so its trades lie in [lo, hi).
  const lo = ceilTo(q.from, step);
  const hi = ceilTo(q.to, step);
  if (hi <= lo) return [];
  const limit = Math.max(1, Math.min(MAX_CANDLES, Math.floor(q.limit ?? MAX_CANDLES)));
  const { rows } = await sql<CandleRow>`
    with buckets as (
      select b, min(price) as l, max(price) as h, sum(quantity) as v
      from (
        select created_at - (created_at % ${step}) as b, price, quantity
        from trades
        where instrument = ${q.instrument} and created_at >= ${lo} and created_at < ${hi}
      ) in_window
      group by b
      order by b desc
      limit ${limit}
    )
    select b, l, h, v,
      (select t.price from trades t where t.instrument = ${q.instrument} and t.created_at >= buckets.b
         and t.created_at < buckets.b + ${step} order by t.created_at, t.seq, t.ev limit 1) as o,
      (select t.price from trades t where t.instrument = ${q.instrument} and t.created_at >= buckets.b
         and t.created_at < buckets.b + ${step} order by t.created_at desc, t.seq desc, t.ev desc limit 1) as c
    from buckets
    order by b`.execute(db);
  return rows.map((r) => ({ t: Number(r.b), o: money(r.o), h: money(r.h), l: money(r.l), c: money(r.c), v: money(r.v) }));
}
