import { describe, expect, it } from 'vitest';
import { foldTrade, fromWire, type Bar } from './candles.js';

const u = (n: number) => BigInt(Math.round(n * 1e8));
const T = Date.UTC(2026, 0, 1, 12, 0, 0);

describe('candle folding', () => {
  it('extends the current bar, opens the next, ignores older trades', () => {
    const bars: Bar[] = [fromWire({ t: T, o: '100', h: '101', l: '99', c: '100.5', v: '2' })];
    foldTrade(bars, { price: u(102), quantity: u(0.5), time: T + 30_000 }, '1m');
    expect(bars).toEqual([{ t: T, o: u(100), h: u(102), l: u(99), c: u(102), v: u(2.5) }]);
    foldTrade(bars, { price: u(98), quantity: u(1), time: T + 59_999 }, '1m');
    expect(bars[0]).toMatchObject({ l: u(98), c: u(98), v: u(3.5) });
    const next = foldTrade(bars, { price: u(97), quantity: u(1), time: T + 60_000 }, '1m');
    expect(next).toEqual({ t: T + 60_000, o: u(97), h: u(97), l: u(97), c: u(97), v: u(1) });
    expect(foldTrade(bars, { price: u(1), quantity: u(1), time: T - 1 }, '1m')).toBeNull();
    expect(bars).toHaveLength(2);
  });

  it('buckets by the interval, UTC-aligned', () => {
    const bars: Bar[] = [];
    foldTrade(bars, { price: u(1), quantity: u(1), time: T + 3_599_999 }, '1h');
    foldTrade(bars, { price: u(2), quantity: u(1), time: T + 3_600_000 }, '4h');
    expect(bars.map((b) => b.t)).toEqual([T]); // 12:00 UTC opens both a 1h and a 4h candle
    expect(bars[0]!.v).toBe(u(2));
  });
});
