import { describe, expect, it } from 'vitest';
import { bookView, groupLevels } from './book.js';

const u = (s: string) => BigInt(Math.round(Number(s) * 1e8));

describe('order book view', () => {
  const asks = [{ price: 100.1, quantity: 1 }, { price: 100.2, quantity: 2 }, { price: 101.3, quantity: 0.5 }];
  const bids = [{ price: 98.7, quantity: 3 }, { price: 99.5, quantity: 1 }, { price: 99.9, quantity: 0.25 }];

  it('sorts best first with running totals, spread in price and bps', () => {
    const v = bookView(asks, bids, 10);
    expect(v.asks.map((r) => [r.price, r.cumulative])).toEqual([[u('100.1'), u('1')], [u('100.2'), u('3')], [u('101.3'), u('3.5')]]);
    expect(v.bids.map((r) => [r.price, r.cumulative])).toEqual([[u('99.9'), u('0.25')], [u('99.5'), u('1.25')], [u('98.7'), u('4.25')]]);
    expect(v.spread).toBe(u('0.2'));
    expect(v.spreadBps).toBeCloseTo(20, 1);
    expect(v.maxCumulative).toBe(u('4.25'));
    expect(bookView(asks, bids, 1).asks).toHaveLength(1);
  });

  it('groups asks up and bids down so no level looks better than its orders', () => {
    expect(groupLevels(asks, u('1'), 'ask')).toEqual([{ price: u('101'), quantity: u('3') }, { price: u('102'), quantity: u('0.5') }]);
    expect(groupLevels(bids, u('1'), 'bid')).toEqual([{ price: u('98'), quantity: u('3') }, { price: u('99'), quantity: u('1.25') }]);
    // A price already on the step stays where it is.
    expect(groupLevels([{ price: 100, quantity: 1 }], u('10'), 'ask')).toEqual([{ price: u('100'), quantity: u('1') }]);
    expect(bookView([], [], 5).spread).toBeNull();
  });
});
