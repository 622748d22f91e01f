/** Candles in the browser: the route's answer as chart bars, and live trades folded into the last bar. */
import { wireUnits } from './decimal.js';

export const INTERVALS = { '1m': 60_000, '5m': 300_000, '15m': 900_000, '1h': 3_600_000, '4h': 14_400_000, '1d': 86_400_000 } as const;
export type Interval = keyof typeof INTERVALS;

/** Wire candle (exact strings) as the route answers it. */
export interface WireCandle { t: number; o: string; h: string; l: string; c: string; v: string }
/** Chart bar: exact units kept beside the chart's numbers. */
export interface Bar { t: number; o: bigint; h: bigint; l: bigint; c: bigint; v: bigint }

export const fromWire = (c: WireCandle): Bar => ({ t: c.t, o: wireUnits(c.o), h: wireUnits(c.h), l: wireUnits(c.l), c: wireUnits(c.c), v: wireUnits(c.v) });

export interface TradeTick { price: bigint; quantity: bigint; time: number }

/**
 * Folds one trade into the bars (sorted by t): extends the bar of its bucket or opens the next one. A trade
 * older than the last bar's bucket is ignored (the route's answer already holds it). Returns the changed bar.
 */
export function foldTrade(bars: Bar[], trade: TradeTick, interval: Interval): Bar | null {
  const step = INTERVALS[interval];
  const t = trade.time - (trade.time % step);
  const last = bars.at(-1);
  if (last && t < last.t) return null;
  if (last && t === last.t) {
    if (trade.price > last.h) last.h = trade.price;
    if (trade.price < last.l) last.l = trade.price;
    last.c = trade.price;
    last.v += trade.quantity;
    return last;
  }
  const bar = { t, o: trade.price, h: trade.price, l: trade.price, c: trade.price, v: trade.quantity };
  bars.push(bar);
  return bar;
}
