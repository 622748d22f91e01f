/**
 * Exact `count` of GET /api/order pages without scanning the user's history (fills: fill-ordinals.ts).
 *
 * The trigger-kept counters (count-triggers.ts) are summed over the combinations a filter selects:
 * - no time window or id filter, or a window covering every matching row → the sum is the count;
 * - otherwise the sum of their versions identifies the filter's current row set, and a count computed
 *   once (count(*) over the index) is reused while that version holds: carried in the `next` cursor
 *   (later pages) and kept in a small in-process LRU (repeated first pages). Any order entering or
 *   leaving a selected combination moves the version, so a stale count is never served.
 *
 * The count a cursor carries is sealed with a MAC over (filter, version, count) under a per-process key:
 * a cursor replayed with another filter, edited by hand, or from before a restart just counts again.
 *
 * The version is read before the scan: a write landing in between leaves a count newer than its version
 * (only requests that read the old version concurrently can see it), never an old count under a new one.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { Kysely, SelectQueryBuilder } from 'kysely';
import { toNum } from './codec.js';
import type { CarriedCount, PageCount } from './paging.js';
import type { StoreDatabase } from './schema.js';

type Q = SelectQueryBuilder<any, any, {}>;

/** Half-open created_at window in epoch ms (after ≤ t < before). */
export interface CreatedWindow {
  after?: number;
  before?: number;
}

interface CounterSums {
  n: number;
  lo: number | null;
  hi: number | null;
  version: string;
}

const CACHE_ENTRIES = 10_000;

export class HistoryCounts {
  private readonly cache = new Map<string, { version: string; count: number }>();
  private readonly sealKey = randomBytes(32);

  constructor(private readonly db: Kysely<StoreDatabase>) {}

  /**
   * Count of a filter: `counters` selects the matching counter rows (WHERE on the counter table, user
   * included), `exactFromCounters` says whether the filter is fully described by the counter columns
   * (false for id filters), `scan` counts the rows themselves.
   */
  async count(
    cacheKey: string,
    counters: Q,
    window: CreatedWindow,
    exactFromCounters: boolean,
    carried: CarriedCount | undefined,
    scan: () => Promise<number>,
  ): Promise<PageCount> {
    const sums = await this.sums(counters);
    if (sums.n === 0) return { count: 0, version: sums.version };
    const covered = sums.lo !== null && sums.hi !== null &&
      (window.after === undefined || window.after <= sums.lo) && (window.before === undefined || window.before > sums.hi);
    const sealed = (count: number): PageCount => ({ count, version: this.seal(cacheKey, sums.version, count) });
    if (exactFromCounters && covered) return { count: sums.n };
    if (carried && carried.version === this.seal(cacheKey, sums.version, carried.count)) return sealed(carried.count);
    const hit = this.cache.get(cacheKey);
    if (hit && hit.version === sums.version) {
      // LRU: most recently used last.
      this.cache.delete(cacheKey);
      this.cache.set(cacheKey, hit);
      return sealed(hit.count);
    }
    const count = await scan();
    this.cache.delete(cacheKey);
    if (this.cache.size >= CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(cacheKey, { version: sums.version, count });
    return sealed(count);
  }

  /** The cursor's proof that `count` was taken for this filter at this version. */
  private seal(cacheKey: string, version: string, count: number): string {
    const mac = createHmac('sha256', this.sealKey).update(`${cacheKey}\n${version}\n${count}`).digest('base64url').slice(0, 22);
    return `${version}.${mac}`;
  }

  private async sums(counters: Q): Promise<CounterSums> {
    const row = (await counters
      .select((eb) => [
        eb.fn.sum('n').as('n'),
        eb.fn.min('min_created').as('lo'),
        eb.fn.max('max_created').as('hi'),
        eb.fn.sum('version').as('version'),
      ])
      .executeTakeFirst()) as Record<string, number | bigint | string | null> | undefined;
    const n = row?.n;
    if (n === null || n === undefined) return { n: 0, lo: null, hi: null, version: '0' };
    return {
      n: toNum(n),
      lo: row!.lo === null ? null : toNum(row!.lo!),
      hi: row!.hi === null ? null : toNum(row!.hi!),
      version: String(row!.version),
    };
  }

  /** The counter table of `table`, restricted to one user. */
  countersOf(table: 'order_counts', userId: number): Q {
    return (this.db.selectFrom(table) as unknown as Q).where('user_id', '=', userId);
  }
}
