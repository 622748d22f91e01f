import { describe, expect, it } from 'vitest';
import { estimateOrder, rulesOf, type WireInstrument } from './estimate.js';

const BTC: WireInstrument = {
  id: 'BTCUSDT', priceIncrement: 0.1, quantityIncrement: 0.0001, minQuantity: 0.0001, maxQuantity: 1000, minVolume: 1, minPrice: 1, maxPrice: 10_000_000,
  maxLeverage: 100, leverageLimit: { 100: 250_000, 20: 10_000_000 },
  maintenanceMargin: { 0: { percent: 0.5, deviance: 0 }, 1000000: { percent: 1, deviance: 5000 } },
};
const fees = { maker: '0.0002', taker: '0.0005', liquidation: '0.0075' };
const rules = new Map([['BTCUSDT', rulesOf(BTC, fees)]]);
const u = (n: string) => BigInt(Math.round(Number(n) * 1e8));

describe('order estimates (engine margin functions)', () => {
  const empty = { balance: '1000', positions: [], openOrders: [], marks: { BTCUSDT: 100_000 } };

  it('a resting limit order reserves notional / leverage and the maker fee', () => {
    const e = estimateOrder('BTCUSDT', rules, empty, { side: 'BUY', quantity: '0.01', price: '99000', leverage: 10, taker: false });
    expect(e.notional).toBe(u('990'));
    expect(e.margin).toBe(u('99'));
    expect(e.fee).toBe(u('0.198'));
    expect(e.positionAfter).toBeNull();
  });

  it('a fill: initial margin, taker fee, liquidation where equity meets maintenance', () => {
    const e = estimateOrder('BTCUSDT', rules, empty, { side: 'BUY', quantity: '0.1', price: '100000', leverage: 50, taker: true });
    expect(e.margin).toBe(u('200'));
    expect(e.fee).toBe(u('5'));
    expect(e.positionAfter).toBe(10_000_000);
    // Equity 995 + 0.1 (P − 100000) = 0.005 × 0.1 P  →  P = 99050 / 0.0995 ≈ 90000.x; liquidated at or below.
    const liq = e.liquidationPrice!;
    expect(liq > u('90000') && liq < u('91000')).toBe(true);
    const eq = (p: bigint) => u('995') + (u('0.1') * (p - u('100000'))) / 100_000_000n;
    const mm = (p: bigint) => (u('0.1') * p) / 100_000_000n / 200n;
    expect(eq(liq) <= mm(liq)).toBe(true);
    expect(eq(liq + u('0.1')) > mm(liq + u('0.1'))).toBe(true);
    // Bankruptcy: equity zero.
    expect(e.bankruptcyPrice).toBe(u('90050'));
  });

  it('a short is liquidated above, and reducing a position frees margin', () => {
    const short = estimateOrder('BTCUSDT', rules, empty, { side: 'SELL', quantity: '0.1', price: '100000', leverage: 50, taker: true });
    expect(short.liquidationPrice! > u('100000')).toBe(true);
    const held = { ...empty, positions: [{ instrument: 'BTCUSDT', side: 'BUY' as const, quantity: '0.1', avgPrice: '100000', leverage: 10 }] };
    const reduce = estimateOrder('BTCUSDT', rules, held, { side: 'SELL', quantity: '0.05', price: '100000', leverage: 10, taker: true });
    expect(reduce.margin).toBe(0n);
    expect(reduce.positionAfter).toBe(5_000_000);
  });
});
