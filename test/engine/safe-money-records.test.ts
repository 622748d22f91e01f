// The engine's money state keeps safe-integer numbers beside (or instead of) bigints: positions (cost,
// realized PnL, fee), account balances, an order's fill totals and the exchange's fee totals. These
// properties drive them with amounts on both sides of 2^53 and hold them to plain bigint arithmetic written
// here: the same integers whichever representation a value is in at the moment.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { safeOf } from '../../src/domain/fixed.js';
import { newAccount, newPosition, smallMoney } from '../../src/engine/account.js';
import { OrderState } from '../../src/engine/order.js';
import { applyFill, applyFillSafe, fillScratch } from '../../src/engine/position-math.js';
import { Totals } from '../../src/engine/state.js';

const TWO_53 = 2n ** 53n;
const MAX = BigInt(Number.MAX_SAFE_INTEGER);

/** Amounts ≥ 0 around 2^53 (either side) or anywhere below. */
const amount = fc.oneof(fc.bigInt({ min: TWO_53 - (1n << 24n), max: TWO_53 + (1n << 24n) }), fc.bigInt({ min: 0n, max: TWO_53 }), fc.bigInt({ min: 0n, max: 1n << 40n }));
/** Signed deltas that carry a running sum across ±2^53. */
const delta = fc.oneof(fc.bigInt({ min: -(1n << 52n), max: 1n << 52n }), fc.bigInt({ min: -(1n << 20n), max: 1n << 20n }));

/** Round half away from zero of p / d (d > 0). */
function halfAway(p: bigint, d: bigint): bigint {
  const m = p < 0n ? -p : p;
  const q = (2n * m + d) / (2n * d);
  return p < 0n ? -q : q;
}

/** Netting in bigints, the rule of docs/engine-rules.md: the reference the position's number path must match. */
function refFill(ref: { qty: bigint; cost: bigint }, buy: boolean, qty: bigint, value: bigint): bigint {
  if (ref.qty === 0n || (ref.qty > 0n) === buy) {
    ref.qty += buy ? qty : -qty;
    ref.cost += value;
    return 0n;
  }
  const abs = ref.qty < 0n ? -ref.qty : ref.qty;
  const closed = qty < abs ? qty : abs;
  const released = closed === abs ? ref.cost : halfAway(ref.cost * closed, abs);
  const closing = closed === qty ? value : halfAway(value * closed, qty);
  const realized = ref.qty > 0n ? closing - released : released - closing;
  if (closed === qty) {
    ref.qty += buy ? qty : -qty;
    ref.cost -= released;
  } else {
    ref.qty = buy ? qty - closed : closed - qty;
    ref.cost = value - closing;
  }
  return realized;
}

const fills = fc.array(
  fc.record({ buy: fc.boolean(), qty: fc.integer({ min: 1, max: 2 ** 40 }), value: amount, fast: fc.boolean() }),
  { minLength: 1, maxLength: 12 },
);

test('a position filled with notionals around 2^53 nets exactly as bigint arithmetic does', () => {
  let viaNumbers = 0;
  let viaBigints = 0;
  fc.assert(
    fc.property(amount, fills, (startCost, steps) => {
      const pos = newPosition({ id: 'p', instrument: 'X', qty: 1, side: 'BUY', cost: startCost, realizedPnL: 0n, fee: 0n, fundingPaid: 0n, createdAt: 0, updatedAt: 0 });
      const ref = { qty: 1n, cost: startCost };
      for (const s of steps) {
        const expected = refFill(ref, s.buy, BigInt(s.qty), s.value);
        let realized: bigint;
        if (s.fast) {
          // As settlement calls it: the notional also as a safe integer, or NaN when it may not be one.
          applyFillSafe(pos, s.buy, s.qty, s.value, safeOf(s.value));
          if (Number.isNaN(fillScratch.realizedSafe)) {
            viaBigints++;
            realized = fillScratch.realized;
          } else {
            viaNumbers++;
            realized = BigInt(fillScratch.realizedSafe);
          }
        } else {
          realized = applyFill(pos, s.buy, s.qty, s.value).realized;
        }
        assert.equal(realized, expected);
        assert.equal(BigInt(pos.qty), ref.qty);
        assert.equal(pos.cost, ref.cost);
        assert.ok(Object.is(pos.costSafe, safeOf(ref.cost)), `costSafe ${pos.costSafe} for ${ref.cost}`);
        assert.ok(Object.is(pos.costDouble, smallMoney(ref.cost)));
      }
    }),
    { numRuns: 3000 },
  );
  assert.ok(viaNumbers > 500 && viaBigints > 500, `numbers ${viaNumbers}, bigints ${viaBigints}`);
});

test('balances, fill totals and fee totals summed across ±2^53 equal their bigint sums', () => {
  fc.assert(
    fc.property(
      fc.bigInt({ min: -MAX, max: MAX }).chain((start) => fc.tuple(fc.constant(start), fc.array(fc.tuple(delta, delta, delta), { maxLength: 20 }))),
      fc.boolean(),
      ([start, steps], liquidation) => {
        const acc = newAccount(1);
        acc.balance = start;
        const pos = newPosition({ id: 'p', instrument: 'X', qty: 0, side: 'BUY', cost: 0n, realizedPnL: start, fee: -start, fundingPaid: 0n, createdAt: 0, updatedAt: 0 });
        const order = new OrderState('o', 1, 'X', 'LIMIT', 'BUY', 'GTC', false, 1, 1, 1, null, 'manually', 0, null, 0);
        order.filledValue = start;
        const totals = new Totals(0n, 0n, start, -start);
        let balance = start;
        let realizedSum = start;
        let feeSum = -start;
        let valueSum = start;
        let orderRealized = 0n;
        let orderFee = 0n;
        let fees = start;
        let reserve = -start;
        for (const [value, realized, fee] of steps) {
          // Deltas are safe integers (the callers only pass those); the sums may leave the safe range.
          const change = realized - fee <= MAX && realized - fee >= -MAX ? realized - fee : realized;
          acc.addBalance(Number(change));
          balance += change;
          pos.addRealizedAndFee(Number(realized), Number(fee));
          realizedSum += realized;
          feeSum += fee;
          order.addFillSafe(Number(value), Number(realized), Number(fee));
          valueSum += value;
          orderRealized += realized;
          orderFee += fee;
          totals.addFeeSafe(Number(fee), liquidation);
          if (liquidation) reserve += fee;
          else fees += fee;
          assert.equal(acc.balance, balance);
          assert.ok(Object.is(acc.balanceDouble, smallMoney(balance)));
          assert.equal(pos.realizedPnL, realizedSum);
          assert.equal(pos.fee, feeSum);
          assert.ok(Object.is(pos.realizedSafe, safeOf(realizedSum)) && Object.is(pos.feeSafe, safeOf(feeSum)));
          assert.equal(order.filledValue, valueSum);
          assert.equal(order.realizedPnL, orderRealized);
          assert.equal(order.fee, orderFee);
          assert.equal(totals.fees, fees);
          assert.equal(totals.reserveFund, reserve);
        }
      },
    ),
    { numRuns: 2000 },
  );
});

test('an unfilled order keeps sharing the zero totals when set to zero (heap per resting order)', () => {
  const a = new OrderState('a', 1, 'X', 'LIMIT', 'BUY', 'GTC', false, 1, 1, 1, null, 'manually', 0, null, 0);
  const b = new OrderState('b', 1, 'X', 'LIMIT', 'BUY', 'GTC', false, 1, 1, 1, null, 'manually', 0, null, 0);
  a.filledValue = 0n;
  a.fee = 0n;
  a.realizedPnL = 0n;
  a.filledQuantity = 0;
  a.updatedAt = a.createdAt;
  const fills = (o: OrderState) => (o as unknown as { extras: object }).extras;
  assert.equal(fills(a), fills(b));
  b.addFillSafe(5, 0, 1);
  assert.notEqual(fills(a), fills(b));
  assert.equal(b.filledValue, 5n);
  assert.equal(b.fee, 1n);
  assert.equal(a.filledValue, 0n);
});

test('an order packs its leverage and instrument, and keeps what does not fit in its own extras', () => {
  const order = (instrument: string, leverage: number, createdAt = 7) =>
    new OrderState(`id-${instrument}-${leverage}`, 1, instrument, 'LIMIT', 'SELL', 'DAY', true, leverage, 3, 4, null, 'tpsl', 0, null, createdAt);
  const extras = (o: OrderState) => (o as unknown as { extras: object }).extras;
  const shared = extras(order('BTCUSDT', 10));
  // More instruments than the packed number holds: the later ones live in the extras, all read back the same.
  const names = Array.from({ length: 140 }, (_, i) => `PACK${i}USDT`);
  for (const [i, name] of names.entries()) {
    for (const leverage of [1, 300, 510, 511, 1000, 2.5]) {
      const o = order(name, leverage);
      assert.equal(o.instrument, name);
      assert.equal(o.leverage, leverage);
      assert.equal(o.side, 'SELL');
      assert.equal(o.timeInForce, 'DAY');
      assert.equal(o.group, 'tpsl');
      assert.equal(o.postOnly, true);
      assert.equal(o.status, 'NEW');
      o.status = 'CANCELLED';
      assert.equal(o.status, 'CANCELLED');
      assert.equal(o.instrument, name, 'a status change leaves the instrument');
      assert.equal(o.leverage, leverage, 'and the leverage');
      if (i < 50 && Number.isInteger(leverage) && leverage <= 300) assert.equal(extras(order(name, leverage)), shared, `${name} ${leverage}x: nothing in the extras`);
      if (leverage > 510 || !Number.isInteger(leverage)) assert.notEqual(extras(o), shared);
    }
  }
  // updatedAt is createdAt until changed; filledQuantity 0 until a fill.
  const o = order('BTCUSDT', 5, 1000);
  assert.equal(o.updatedAt, 1000);
  o.updatedAt = 1001;
  assert.equal(o.updatedAt, 1001);
  assert.equal(o.createdAt, 1000);
  o.filledQuantity = 2;
  assert.equal(o.filledQuantity, 2);
  assert.equal(order('BTCUSDT', 5, 1000).filledQuantity, 0);
});
