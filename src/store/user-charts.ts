/**
 * Time-bucketed read models: the balance chart (GET /api/user/balance/chart) and trading statistics
 * (GET /api/user/statistics). Buckets are UTC calendar periods (hour, day, ISO week from Monday, month,
 * year) computed here and handed to ONE SQL statement as a VALUES list, so each chart is a single
 * indexed round trip on both dialects:
 * - balance: per bucket end, the balance after the user's last collateral movement before it
 *   (a correlated `ORDER BY … LIMIT 1` on funding_changes(user_id, updated_at, seq, ev));
 * - statistics: fills joined to the buckets on fills(user_id, created_at, …), grouped.
 * Money stays exact: traded volume Σ quantity × price is summed as numeric on PostgreSQL and by an exact
 * bigint aggregate (`exact_product_sum`, registered by open.ts) on SQLite.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { toMoney, toNum } from './codec.js';
import { toEpochMs } from './paging.js';
import type { StoreDatabase } from './schema.js';
import { StoreQueryError, type StoreDialectKind, type TimeInput } from './types.js';

export const CHART_GROUPS = ['hour', 'day', 'week', 'month', 'year'] as const;
export type ChartGroup = (typeof CHART_GROUPS)[number];
/** More buckets than this in one request is refused (ask for a coarser group or a shorter window). */
export const MAX_BUCKETS = 1000;
const UNITS = 100_000_000n;

export interface BucketWindow {
  after: TimeInput;
  before: TimeInput;
  group: ChartGroup;
}

export interface BalancePoint {
  /** Bucket start (epoch ms). */
  start: number;
  /** Collateral balance at the end of the bucket (after its last movement). */
  balance: bigint;
  /** Net movement within the bucket (balance at end − balance at start). */
  change: bigint;
}

export interface StatisticsPoint {
  start: number;
  fills: number;
  /** Σ quantity × price of the user's fills (USDT, truncated to 1e-8). */
  volume: bigint;
  fee: bigint;
  realizedPnL: bigint;
}

/** Start of the UTC period of `group` that contains `ms`. */
export function periodStart(ms: number, group: ChartGroup): number {
  const d = new Date(ms);
  switch (group) {
    case 'hour': return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours());
    case 'day': return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    case 'week': {
      const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
      return day - ((d.getUTCDay() + 6) % 7) * 86_400_000;
    }
    case 'month': return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    case 'year': return Date.UTC(d.getUTCFullYear(), 0, 1);
  }
}

/** Start of the period after the one starting at `start`. */
export function nextPeriod(start: number, group: ChartGroup): number {
  const d = new Date(start);
  switch (group) {
    case 'hour': return start + 3_600_000;
    case 'day': return start + 86_400_000;
    case 'week': return start + 7 * 86_400_000;
    case 'month': return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    case 'year': return Date.UTC(d.getUTCFullYear() + 1, 0, 1);
  }
}

/** Bucket starts covering [after, before): the first is the period containing `after`. */
export function bucketStarts(w: BucketWindow): number[] {
  if (!CHART_GROUPS.includes(w.group)) throw new StoreQueryError(`unknown group ${String(w.group)}`);
  const after = toEpochMs(w.after);
  const before = toEpochMs(w.before);
  if (before <= after) throw new StoreQueryError('before must be later than after');
  const out: number[] = [];
  for (let s = periodStart(after, w.group); s < before; s = nextPeriod(s, w.group)) {
    out.push(s);
    if (out.length > MAX_BUCKETS) throw new StoreQueryError(`more than ${MAX_BUCKETS} ${w.group} buckets; use a coarser group or a shorter window`);
  }
  return out;
}

const bigintValue = (v: number) => sql`cast(${v} as bigint)`;

export class StoreStatistics {
  constructor(
    private readonly db: Kysely<StoreDatabase>,
    private readonly kind: StoreDialectKind,
  ) {}

  /** Balance per bucket, oldest first. Buckets before the first movement show balance 0. */
  async balanceChart(userId: number, w: BucketWindow): Promise<BalancePoint[]> {
    const starts = bucketStarts(w);
    // Boundaries: every bucket start plus the end of the last bucket.
    const bounds = [...starts, nextPeriod(starts[starts.length - 1]!, w.group)];
    const values = sql.join(bounds.map((b) => sql`(${bigintValue(b)})`));
    const rows = await sql<{ t: unknown; balance: unknown }>`
      select b.column1 as t,
        (select f.balance from funding_changes f
          where f.user_id = ${userId} and f.updated_at < b.column1
          order by f.updated_at desc, f.seq desc, f.ev desc limit 1) as balance
      from (values ${values}) as b`.execute(this.db);
    const at = new Map<number, bigint>();
    for (const r of rows.rows) at.set(toNum(r.t as number), r.balance === null ? 0n : toMoney(r.balance as bigint));
    return starts.map((start, i) => {
      const end = at.get(bounds[i + 1]!) ?? 0n;
      return { start, balance: end, change: end - (at.get(start) ?? 0n) };
    });
  }

  /** Fill statistics per bucket, oldest first; empty buckets are included with zeros. */
  async statistics(userId: number, w: BucketWindow): Promise<StatisticsPoint[]> {
    const starts = bucketStarts(w);
    const values = sql.join(starts.map((s) => sql`(${bigintValue(s)}, ${bigintValue(nextPeriod(s, w.group))})`));
    const rows = await sql<{ t: unknown; fills: unknown; volume: unknown; fee: unknown; pnl: unknown }>`
      select b.column1 as t, count(*) as fills, ${this.productSum()} as volume,
        sum(f.fee) as fee, sum(f.realized_pnl) as pnl
      from (values ${values}) as b
      join fills f on f.user_id = ${userId} and f.created_at >= b.column1 and f.created_at < b.column2
      group by b.column1`.execute(this.db);
    const by = new Map<number, StatisticsPoint>();
    for (const r of rows.rows) {
      const start = toNum(r.t as number);
      by.set(start, {
        start,
        fills: toNum(r.fills as number),
        volume: BigInt(String(r.volume)) / UNITS,
        fee: toMoney(r.fee as bigint),
        realizedPnL: toMoney(r.pnl as bigint),
      });
    }
    return starts.map((start) => by.get(start) ?? { start, fills: 0, volume: 0n, fee: 0n, realizedPnL: 0n });
  }

  /** Exact Σ quantity × price as decimal text (both are 1e-8 counts, so the product is 1e-16). */
  private productSum(): RawBuilder<unknown> {
    return this.kind === 'postgres'
      ? sql`sum(cast(f.quantity as numeric) * f.price)::text`
      : sql`exact_product_sum(f.quantity, f.price)`;
  }
}
