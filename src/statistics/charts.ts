/**
 * Public statistics charts: one point per UTC day, built from the statistics day buckets and sign-up
 * times. Volume and fees can be narrowed to one instrument; the other series are exchange-wide.
 */
import type { Money } from '../domain/fixed.js';
import type { DayBucket } from '../store/exchange-statistics.js';
import { DAY_MS } from '../store/exchange-statistics.js';

export const CHART_NAMES = ['tradingVolume', 'userRegistred', 'activeDepositors', 'feesVolume', 'totalValueLocked'] as const;
export type ChartName = (typeof CHART_NAMES)[number];

export interface ChartPoint {
  /** UTC day start, epoch ms */
  date: number;
  /** money series in money units; counts as plain integers */
  value: bigint;
  kind: 'money' | 'count';
}

const sumOf = (m: Map<string, Money>, instrument: string | undefined): Money => {
  if (instrument !== undefined) return m.get(instrument) ?? 0n;
  let s = 0n;
  for (const v of m.values()) s += v;
  return s;
};

export function chartPoints(
  name: ChartName,
  days: ReadonlyArray<DayBucket & { tvl: Money }>,
  signUpTimes: readonly number[],
  instrument: string | undefined,
): ChartPoint[] {
  if (name === 'userRegistred') {
    const perDay = new Map<number, number>();
    for (const t of signUpTimes) {
      const d = Math.floor(t / DAY_MS);
      perDay.set(d, (perDay.get(d) ?? 0) + 1);
    }
    return days.map((b) => ({ date: b.day * DAY_MS, value: BigInt(perDay.get(b.day) ?? 0), kind: 'count' }));
  }
  return days.map((b) => {
    const date = b.day * DAY_MS;
    switch (name) {
      case 'tradingVolume': return { date, value: sumOf(b.volume, instrument), kind: 'money' };
      case 'feesVolume': return { date, value: sumOf(b.fees, instrument), kind: 'money' };
      case 'activeDepositors': return { date, value: BigInt(b.depositors.size), kind: 'count' };
      case 'totalValueLocked': return { date, value: b.tvl, kind: 'money' };
    }
  });
}
