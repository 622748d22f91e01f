/**
 * Exchange-wide statistics folded from the read models into UTC-day buckets: traded volume and fees per
 * instrument, exchange fees vs reserve-fund income, depositors, and collateral locked (TVL); and per instrument
 * the rolling 24 h trade statistics (high, low, volumes, the price 24 h ago) in minute buckets.
 *
 * The fold is incremental: each table is read past the last journal sequence already folded (indexed by
 * seq, migration 0002), so a request costs one projector_meta lookup when nothing new was projected and
 * a small range scan otherwise. The first call folds the whole history once. All sums are exact bigints.
 */
import type { Kysely } from 'kysely';
import { notional, type Money, type Units } from '../domain/fixed.js';
import { toMoney, toNum } from './codec.js';
import type { StoreDatabase } from './schema.js';

export const DAY_MS = 86_400_000;
export const MINUTE_MS = 60_000;
/** The rolling window of instrument statistics: 24 h, in whole minutes (the current one included). */
export const ROLLING_MINUTES = 1440;
const DEFAULT_CHUNK = 5000;

/** Trades of one instrument in one minute. */
interface MinuteBucket {
  minute: number;
  open: Units;
  high: Units;
  low: Units;
  close: Units;
  volume: Money;
  volumeBase: Units;
}

/** An instrument's trades of the rolling window, oldest minute first, and the last price before it. */
interface RollingTrades {
  minutes: MinuteBucket[];
  before: Units | null;
}

/** Rolling 24 h trade statistics of an instrument (`fields=metrics`, the instruments channel). */
export interface RollingStats {
  /** Highest and lowest trade price in the window (0 without trades in it). */
  high: Units;
  low: Units;
  /** The price 24 h ago: the last trade before the window, else the window's first trade (0 without trades). */
  closePrice: Units;
  /** Σ quantity × price (USDT) and Σ quantity of the window's trades. */
  volume: Money;
  volumeBase: Units;
}

export interface DayBucket {
  /** UTC day number (epoch ms / DAY_MS, floored) */
  day: number;
  volume: Map<string, Money>;
  fees: Map<string, Money>;
  /** trading fees paid to the exchange (funding reason `fee`) */
  exchangeFees: Money;
  /** liquidation fees paid into the reserve fund (funding reason `liquidation-fee`) */
  reserveIncome: Money;
  depositors: Set<number>;
  /** Σ collateral balances after the day's last change; undefined = no change that day (carry forward). */
  tvlEnd: Money | undefined;
}

export interface StatisticsTotals {
  tradingVolume: Money;
  feesVolume: Money;
  exchangeFees: Money;
  reserveIncome: Money;
  totalValueLocked: Money;
  trades: number;
  depositors: number;
}

function bucketOf(days: Map<number, DayBucket>, ts: number): DayBucket {
  const day = Math.floor(ts / DAY_MS);
  let b = days.get(day);
  if (!b) {
    b = { day, volume: new Map(), fees: new Map(), exchangeFees: 0n, reserveIncome: 0n, depositors: new Set(), tvlEnd: undefined };
    days.set(day, b);
  }
  return b;
}

const add = (m: Map<string, Money>, k: string, v: Money) => m.set(k, (m.get(k) ?? 0n) + v);

/** Drops the minutes before `start`; the last price among them becomes the price before the window. */
function evict(r: RollingTrades, start: number): void {
  let gone = 0;
  while (gone < r.minutes.length && r.minutes[gone]!.minute < start) r.before = r.minutes[gone++]!.close;
  if (gone > 0) r.minutes.splice(0, gone);
}

export class ExchangeStatistics {
  private readonly days = new Map<number, DayBucket>();
  private readonly balances = new Map<number, Money>();
  private tvl = 0n;
  private trades = 0;
  private readonly allDepositors = new Set<number>();
  private readonly cursor = { trades: 0, fills: 0, funding: 0 };
  private foldedSeq = -1;
  private refreshing: Promise<void> | undefined;
  private readonly rolling = new Map<string, RollingTrades>();

  private readonly chunk: number;
  private readonly now: () => number;

  /** `chunk`: rows per read (small values in tests exercise the chunk boundaries); `now`: the clock of the rolling window. */
  constructor(private readonly db: Kysely<StoreDatabase>, opts: { chunk?: number; now?: () => number } = {}) {
    this.chunk = opts.chunk ?? DEFAULT_CHUNK;
    this.now = opts.now ?? Date.now;
  }

  /** Folds whatever the projector wrote since the last call. Concurrent callers share one pass. */
  refresh(): Promise<void> {
    this.refreshing ??= this.fold().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async fold(): Promise<void> {
    const meta = await this.db.selectFrom('projector_meta').select('last_seq').where('id', '=', 1).executeTakeFirst();
    const target = meta ? toNum(meta.last_seq) : 0;
    if (target === this.foldedSeq) return;
    // Rows are read only up to `target`: a batch the projector commits meanwhile is folded next time, whole.
    await this.foldTrades(target);
    await this.foldFills(target);
    await this.foldFunding(target);
    this.foldedSeq = target;
  }

  /**
   * Reads `table` rows with cursor < seq ≤ target in seq order and hands them to `fn`, whole seqs at a
   * time (a chunk never splits one journal batch, so the cursor can advance past it).
   */
  private async scan(
    table: 'trades' | 'fills' | 'funding_changes',
    columns: readonly string[],
    cursor: keyof ExchangeStatistics['cursor'],
    target: number,
    fn: (rows: Array<Record<string, any>>) => void,
  ): Promise<void> {
    const base = () => (this.db.selectFrom(table) as any).select([...columns, 'seq']).orderBy('seq').orderBy('ev');
    for (;;) {
      const rows: Array<Record<string, any>> = await base().where('seq', '>', this.cursor[cursor]).where('seq', '<=', target).limit(this.chunk).execute();
      if (rows.length === 0) return;
      let use = rows;
      if (rows.length === this.chunk) {
        const last = toNum(rows[rows.length - 1]!.seq);
        use = rows.filter((r) => toNum(r.seq) < last);
        // One batch larger than a chunk: read that seq whole.
        if (use.length === 0) use = await base().where('seq', '=', last).execute();
      }
      fn(use);
      this.cursor[cursor] = toNum(use[use.length - 1]!.seq);
      if (rows.length < this.chunk) return;
    }
  }

  private foldTrades(target: number): Promise<void> {
    const windowStart = this.windowStart();
    return this.scan('trades', ['instrument', 'quantity', 'price', 'created_at'], 'trades', target, (rows) => {
      for (const r of rows) {
        const createdAt = toNum(r.created_at);
        const quantity = toNum(r.quantity);
        const price = toNum(r.price);
        const value = notional(quantity, price);
        add(bucketOf(this.days, createdAt).volume, r.instrument, value);
        this.trades++;
        this.roll(r.instrument, Math.floor(createdAt / MINUTE_MS), windowStart, quantity, price, value);
      }
    });
  }

  private windowStart(): number {
    return Math.floor(this.now() / MINUTE_MS) - ROLLING_MINUTES + 1;
  }

  /** Adds a trade to its instrument's rolling window (trades arrive in seq order, so in time order). */
  private roll(instrument: string, minute: number, windowStart: number, quantity: Units, price: Units, value: Money): void {
    let r = this.rolling.get(instrument);
    if (!r) {
      r = { minutes: [], before: null };
      this.rolling.set(instrument, r);
    }
    if (minute < windowStart) {
      evict(r, windowStart);
      r.before = price;
      return;
    }
    const last = r.minutes[r.minutes.length - 1];
    if (last !== undefined && last.minute >= minute) {
      if (price > last.high) last.high = price;
      if (price < last.low) last.low = price;
      last.close = price;
      last.volume += value;
      last.volumeBase += quantity;
    } else {
      r.minutes.push({ minute, open: price, high: price, low: price, close: price, volume: value, volumeBase: quantity });
    }
  }

  /**
   * Rolling 24 h statistics of an instrument from what has been folded so far (synchronous: the instruments
   * channel reads it on every instrument change; `refresh()` first for an up-to-date answer). Undefined for
   * an instrument that never traded.
   */
  instrumentStats(instrument: string): RollingStats | undefined {
    const r = this.rolling.get(instrument);
    if (!r) return undefined;
    evict(r, this.windowStart());
    const out: RollingStats = { high: 0, low: 0, closePrice: r.before ?? r.minutes[0]?.open ?? 0, volume: 0n, volumeBase: 0 };
    for (const m of r.minutes) {
      if (out.high === 0 || m.high > out.high) out.high = m.high;
      if (out.low === 0 || m.low < out.low) out.low = m.low;
      out.volume += m.volume;
      out.volumeBase += m.volumeBase;
    }
    return out;
  }

  private foldFills(target: number): Promise<void> {
    return this.scan('fills', ['instrument', 'fee', 'created_at'], 'fills', target, (rows) => {
      for (const r of rows) add(bucketOf(this.days, toNum(r.created_at)).fees, r.instrument, toMoney(r.fee));
    });
  }

  private foldFunding(target: number): Promise<void> {
    return this.scan('funding_changes', ['user_id', 'quantity', 'balance', 'reason', 'updated_at'], 'funding', target, (rows) => {
      for (const r of rows) {
        const user = toNum(r.user_id);
        const b = bucketOf(this.days, toNum(r.updated_at));
        const quantity = toMoney(r.quantity);
        if (r.reason === 'fee') b.exchangeFees -= quantity;
        else if (r.reason === 'liquidation-fee') b.reserveIncome -= quantity;
        else if (r.reason === 'deposit') {
          b.depositors.add(user);
          this.allDepositors.add(user);
        }
        const balance = toMoney(r.balance);
        this.tvl += balance - (this.balances.get(user) ?? 0n);
        this.balances.set(user, balance);
        b.tvlEnd = this.tvl;
      }
    });
  }

  async totals(): Promise<StatisticsTotals> {
    await this.refresh();
    let tradingVolume = 0n;
    let feesVolume = 0n;
    let exchangeFees = 0n;
    let reserveIncome = 0n;
    for (const b of this.days.values()) {
      for (const v of b.volume.values()) tradingVolume += v;
      for (const v of b.fees.values()) feesVolume += v;
      exchangeFees += b.exchangeFees;
      reserveIncome += b.reserveIncome;
    }
    return { tradingVolume, feesVolume, exchangeFees, reserveIncome, totalValueLocked: this.tvl, trades: this.trades, depositors: this.allDepositors.size };
  }

  /** Day buckets from `fromDay` to `toDay` inclusive, every day present (empty ones filled), TVL carried forward. */
  async daysBetween(fromDay: number, toDay: number): Promise<Array<DayBucket & { tvl: Money }>> {
    await this.refresh();
    let tvl = 0n;
    let latest = -Infinity;
    for (const b of this.days.values()) {
      if (b.day < fromDay && b.day > latest && b.tvlEnd !== undefined) {
        latest = b.day;
        tvl = b.tvlEnd;
      }
    }
    const out: Array<DayBucket & { tvl: Money }> = [];
    for (let d = fromDay; d <= toDay; d++) {
      const b = this.days.get(d);
      if (b?.tvlEnd !== undefined) tvl = b.tvlEnd;
      out.push({
        ...(b ?? { day: d, volume: new Map(), fees: new Map(), exchangeFees: 0n, reserveIncome: 0n, depositors: new Set(), tvlEnd: undefined }),
        tvl,
      });
    }
    return out;
  }
}
