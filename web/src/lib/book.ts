/** Order-book view: levels sorted best first with cumulative size, the spread, and regrouping to a coarser step. */
import { formatUnits } from '../../../src/domain/fixed.js';
import { wireUnits } from './decimal.js';

export interface WireLevel { price: number | string; quantity: number | string }
export interface BookRow { price: bigint; quantity: bigint; cumulative: bigint }
export interface BookView { asks: BookRow[]; bids: BookRow[]; spread: bigint | null; spreadBps: number | null; maxCumulative: bigint }

/**
 * Merges levels into buckets of `step` (units): asks round up, bids round down, so a grouped level never
 * shows a better price than any order in it.
 */
export function groupLevels(levels: WireLevel[], step: bigint, side: 'ask' | 'bid'): Array<{ price: bigint; quantity: bigint }> {
  const out = new Map<bigint, bigint>();
  for (const l of levels) {
    const p = wireUnits(l.price);
    const q = wireUnits(l.quantity);
    if (q <= 0n) continue;
    const floor = (p / step) * step;
    const key = side === 'bid' || floor === p ? floor : floor + step;
    out.set(key, (out.get(key) ?? 0n) + q);
  }
  return [...out.entries()].map(([price, quantity]) => ({ price, quantity }));
}

/**
 * From the channel's payload (both sides ascending by price, best ask first, best bid last): up to `depth`
 * rows per side, best first, each with the running total from the best price outwards.
 */
export function bookView(asks: WireLevel[], bids: WireLevel[], depth: number, step?: bigint): BookView {
  const a = (step ? groupLevels(asks, step, 'ask') : asks.map((l) => ({ price: wireUnits(l.price), quantity: wireUnits(l.quantity) })))
    .filter((l) => l.quantity > 0n).sort((x, y) => (x.price < y.price ? -1 : 1)).slice(0, depth);
  const b = (step ? groupLevels(bids, step, 'bid') : bids.map((l) => ({ price: wireUnits(l.price), quantity: wireUnits(l.quantity) })))
    .filter((l) => l.quantity > 0n).sort((x, y) => (x.price > y.price ? -1 : 1)).slice(0, depth);
  const cum = (rows: Array<{ price: bigint; quantity: bigint }>): BookRow[] => {
    let total = 0n;
    return rows.map((r) => ({ ...r, cumulative: (total += r.quantity) }));
  };
  const askRows = cum(a);
  const bidRows = cum(b);
  const bestAsk = askRows[0]?.price;
  const bestBid = bidRows[0]?.price;
  const spread = bestAsk !== undefined && bestBid !== undefined ? bestAsk - bestBid : null;
  const mid = bestAsk !== undefined && bestBid !== undefined ? (bestAsk + bestBid) / 2n : null;
  const spreadBps = spread !== null && mid ? Number((spread * 1_000_000n) / mid) / 100 : null;
  const maxCumulative = [askRows.at(-1)?.cumulative ?? 0n, bidRows.at(-1)?.cumulative ?? 0n].reduce((m, v) => (v > m ? v : m), 0n);
  return { asks: askRows, bids: bidRows, spread, spreadBps, maxCumulative };
}

export const priceText = (p: bigint): string => formatUnits(p);
