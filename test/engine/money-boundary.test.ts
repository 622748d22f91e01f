// Trades whose notionals, balances and costs straddle 2^53 money units (~90 million USDT), through engine
// commands: the engine keeps money as safe-integer numbers where it fits and bigints where it may not
// (src/domain/fixed.ts), so these cross between the two representations mid-stream. The expected balances
// and costs are worked out here in bigints from the rules (notional half-up, fees rounded up, released cost
// pro rata half-up); the harness checks every invariant after each command.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DEMO_INSTRUMENTS } from '../../src/domain/instrument.js';
import { Harness } from './harness.js';

const SCALE = 100_000_000n;
const TWO_53 = 2n ** 53n;
const MAKER = 20_000n; // 0.0002
const TAKER = 50_000n; // 0.0005

const halfUp = (p: bigint, d: bigint): bigint => (2n * p + d) / (2n * d);
const ceilDiv = (p: bigint, d: bigint): bigint => (p + d - 1n) / d;
const notional = (qty: bigint, price: bigint): bigint => halfUp(qty * price, SCALE);
const fee = (value: bigint, rate: bigint): bigint => ceilDiv(value * rate, SCALE);

/** BTCUSDT with a notional cap high enough for positions beyond 2^53 units. */
const BIG = {
  ...DEMO_INSTRUMENTS.find((c) => c.id === 'BTCUSDT')!,
  id: 'BIGUSDT', name: 'BIGUSDT', maxQuantity: '100000', makerFee: '0.0002', takerFee: '0.0005',
  leverageLimit: [{ maxLeverage: 20, notionalLimit: '1000000000' }],
};

test('trades with notionals and balances across 2^53 settle to the bigint arithmetic of the rules', () => {
  const units = (usdt: bigint) => usdt * SCALE;
  fc.assert(
    fc.property(
      // Price in 0.1 USDT steps around 100,000; size in 0.001 BTC steps around 900 BTC: notionals near 2^53.
      fc.integer({ min: 900_000, max: 1_100_000 }).map((p) => BigInt(p) * 10_000_000n),
      fc.integer({ min: 800_000, max: 1_000_000 }).map((q) => BigInt(q) * 100_000n),
      fc.integer({ min: 1, max: 1000 }).map(BigInt),
      fc.integer({ min: -20_000, max: 20_000 }).map((d) => BigInt(d) * 10_000_000n),
      fc.tuple(fc.bigInt({ min: TWO_53 - units(10_000_000n), max: 10n ** 16n }), fc.bigInt({ min: TWO_53 - units(10_000_000n), max: 10n ** 16n })),
      (price, qty, closePermille, move, [d1, d2]) => {
        const h = new Harness({ instruments: false, prices: false });
        h.ok({ kind: 'instrument.upsert', config: BIG });
        h.ok({ kind: 'price.tick', instrument: 'BIGUSDT', indexPrice: Number(price), markPrice: Number(price) });
        h.ok({ kind: 'funds.deposit', userId: 1, amount: d1.toString(), transferId: 'd1' });
        h.ok({ kind: 'funds.deposit', userId: 2, amount: d2.toString(), transferId: 'd2' });
        const place = (userId: number, side: 'BUY' | 'SELL', q: bigint, p: bigint, tif: 'GTC' | 'IOC') =>
          h.ok({
            kind: 'order.place', userId,
            order: { id: h.newId(), instrument: 'BIGUSDT', side, type: 'LIMIT', timeInForce: tif, leverage: 20, quantity: Number(q), limitPrice: Number(p) },
          });
        // User 1 rests a buy; user 2 sells into it.
        place(1, 'BUY', qty, price, 'GTC');
        place(2, 'SELL', qty, price, 'IOC');
        const open = notional(qty, price);
        // The mark moves; user 2 rests a buy at the new price and user 1 closes part of the long into it.
        const price2 = price + move;
        h.ok({ kind: 'price.tick', instrument: 'BIGUSDT', indexPrice: Number(price2), markPrice: Number(price2) });
        const closeQty = ((qty * closePermille) / 1000n / 100_000n) * 100_000n || 100_000n;
        place(2, 'BUY', closeQty, price2, 'GTC');
        place(1, 'SELL', closeQty, price2, 'IOC');
        const close = notional(closeQty, price2);
        const released = closeQty === qty ? open : halfUp(open * closeQty, qty);
        const b1 = d1 - fee(open, MAKER) + (close - released) - fee(close, TAKER);
        const b2 = d2 - fee(open, TAKER) + (released - close) - fee(close, MAKER);
        assert.equal(h.engine.account(1).balance, b1);
        assert.equal(h.engine.account(2).balance, b2);
        const cost = (userId: number) => h.engine.positions(userId).find((p) => p.instrument === 'BIGUSDT')?.costBasis ?? 0n;
        assert.equal(cost(1), open - released);
        assert.equal(cost(2), open - released);
        const { fees } = h.engine.ledger();
        assert.equal(fees, fee(open, MAKER) + fee(open, TAKER) + fee(close, MAKER) + fee(close, TAKER));
      },
    ),
    { numRuns: 150 },
  );
});
