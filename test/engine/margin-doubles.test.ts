// The margin check runs in doubles when every amount fits (account.ts: OpenVolume, lockUnits, unrealizedUnits).
// These properties hold it to the bigint arithmetic it replaces: same sums, same locks, or an honest "not exact".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { productParts, productScratch, SCALE_N } from '../../src/domain/fixed.js';
import { DEMO_INSTRUMENTS } from '../../src/domain/instrument.js';
import {
  costUnits, lockOf, lockUnits, newAccount, newPosition, smallMoney, unrealizedPnL, unrealizedUnits, type Position,
} from '../../src/engine/account.js';
import { OpenVolume } from '../../src/engine/open-volume.js';
import { compileInstrument, maintenanceMargin, maintenanceMarginUnits } from '../../src/engine/instrument-rules.js';
import {
  accountRisk, adlLevel, adlLevelUnits, bankruptcyPrice, bankruptcyPriceUnits, isMarginCall, mustLiquidate, quickRisk, QuickRisk,
} from '../../src/engine/margin.js';
import { Market } from '../../src/engine/market.js';

const position = (qty: number, cost: bigint): Position => newPosition({
  id: 'p', instrument: 'X', qty, side: qty < 0 ? 'SELL' : 'BUY', cost, realizedPnL: 0n, fee: 0n, fundingPaid: 0n, createdAt: 0, updatedAt: 0,
});

/** Sizes and prices from tiny to far beyond what doubles can hold exactly, so both representations are exercised. */
const amount = fc.oneof(fc.integer({ min: 1, max: 1e10 }), fc.integer({ min: 1, max: 1e13 }), fc.maxSafeNat());

test('OpenVolume keeps Σ quantity × price exact through adds and removes, switching to bigints and back', () => {
  fc.assert(fc.property(fc.array(fc.record({ bid: fc.boolean(), q: amount, p: amount, removeLater: fc.boolean() }), { maxLength: 40 }), (ops) => {
    const v = new OpenVolume('X');
    let buy = 0n;
    let sell = 0n;
    const check = () => {
      assert.equal(v.buyRaw, buy);
      assert.equal(v.sellRaw, sell);
      if (v.exact) {
        assert.equal(BigInt(v.buyUnits) * SCALE_N + BigInt(v.buyFrac), buy);
        assert.ok(v.buyFrac >= 0 && v.buyFrac < 1e8 && v.sellFrac >= 0 && v.sellFrac < 1e8);
      }
    };
    for (const o of ops) {
      v.change(o.bid, o.q, o.p, 1);
      if (o.bid) buy += BigInt(o.q) * BigInt(o.p);
      else sell += BigInt(o.q) * BigInt(o.p);
      check();
    }
    for (const o of ops) {
      if (!o.removeLater) continue;
      v.change(o.bid, o.q, o.p, -1);
      if (o.bid) buy -= BigInt(o.q) * BigInt(o.p);
      else sell -= BigInt(o.q) * BigInt(o.p);
      check();
    }
    for (const o of ops) if (!o.removeLater) v.change(o.bid, o.q, o.p, -1);
    assert.equal(v.buyRaw, 0n);
    assert.equal(v.sellRaw, 0n);
    assert.ok(v.exact, 'back to doubles once the volume is gone');
  }), { numRuns: 2_000 });
});

test('lockUnits equals lockOf (with the extra order volume) whenever it answers', () => {
  let answered = 0;
  fc.assert(fc.property(
    fc.array(fc.record({ bid: fc.boolean(), q: amount, p: amount }), { maxLength: 6 }),
    fc.integer({ min: -1e12, max: 1e12 }), fc.oneof(fc.bigInt({ min: 0n, max: 10n ** 14n }), fc.bigInt({ min: 0n, max: 10n ** 20n })),
    fc.integer({ min: 1, max: 300 }), fc.boolean(), amount, amount, fc.boolean(),
    (orders, qty, cost, lev, extraBid, eq, ep, withVolume) => {
      const v = new OpenVolume('X');
      for (const o of orders) v.change(o.bid, o.q, o.p, 1);
      const pos = qty === 0 && cost > 0n ? undefined : position(qty, qty === 0 ? 0n : cost);
      if (!productParts(eq, ep)) return;
      const extraRaw = BigInt(eq) * BigInt(ep);
      const fast = lockUnits(pos, withVolume ? v : undefined, lev, extraBid, productScratch.units, productScratch.frac);
      const buyRaw = (withVolume ? v.buyRaw : 0n) + (extraBid ? extraRaw : 0n);
      const sellRaw = (withVolume ? v.sellRaw : 0n) + (extraBid ? 0n : extraRaw);
      const exact = lockOf(pos, buyRaw, sellRaw, lev);
      if (fast === -1) {
        assert.ok(exact > 2n ** 50n || !v.exact || buyRaw / SCALE_N > 2n ** 52n || sellRaw / SCALE_N > 2n ** 52n || cost > 2n ** 50n, `declined a small lock ${exact}`);
        return;
      }
      answered++;
      assert.equal(BigInt(fast), exact);
    },
  ), { numRuns: 5_000 });
  assert.ok(answered > 250, `only ${answered} answers`);
});

test('unrealizedUnits equals unrealizedPnL whenever it answers', () => {
  fc.assert(fc.property(fc.integer({ min: -1e13, max: 1e13 }), fc.bigInt({ min: 0n, max: 10n ** 16n }), fc.option(amount), (qty, cost, mark) => {
    const pos = position(qty, cost);
    const fast = unrealizedUnits(pos, mark);
    if (Number.isNaN(fast)) return;
    assert.equal(BigInt(fast), unrealizedPnL(pos, mark));
  }), { numRuns: 10_000 });
});

test('smallMoney is exact up to 2^50 and NaN beyond', () => {
  for (const v of [0n, 1n, -1n, 2n ** 50n, -(2n ** 50n)]) assert.equal(BigInt(smallMoney(v)), v);
  for (const v of [2n ** 50n + 1n, -(2n ** 50n) - 1n, 2n ** 80n, -(2n ** 80n)]) assert.ok(Number.isNaN(smallMoney(v)));
  fc.assert(fc.property(fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n }), (v) => {
    const n = smallMoney(v);
    return (v <= 2n ** 50n && v >= -(2n ** 50n)) ? BigInt(n) === v : Number.isNaN(n);
  }), { numRuns: 10_000 });
});

test('quickRisk gives the verdict accountRisk gives whenever it is sure', () => {
  let sure = 0;
  const markets = new Map<string, Market>();
  for (const config of DEMO_INSTRUMENTS) markets.set(config.id, new Market(compileInstrument(config), 0));
  const ids = [...markets.keys()];
  fc.assert(fc.property(
    fc.oneof(fc.bigInt({ min: -(10n ** 12n), max: 10n ** 14n }), fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n })),
    fc.array(fc.record({ qty: fc.integer({ min: -1e10, max: 1e10 }), cost: fc.bigInt({ min: 0n, max: 10n ** 14n }), mark: fc.option(fc.integer({ min: 1, max: 1e13 })) }), { minLength: 0, maxLength: 2 }),
    fc.bigInt({ min: 0n, max: 10n ** 12n }),
    (balance, positions, pending) => {
      const acc = newAccount(1);
      acc.balance = balance;
      acc.pendingWithdrawals = pending;
      positions.forEach((p, i) => {
        const m = markets.get(ids[i])!;
        m.markPrice = p.mark;
        acc.positions.set(ids[i], newPosition({ id: `p${i}`, instrument: ids[i], qty: p.qty, side: 'BUY', cost: p.cost, realizedPnL: 0n, fee: 0n, fundingPaid: 0n, createdAt: 0, updatedAt: 0 }));
      });
      const quick = quickRisk(acc, markets);
      if (quick === QuickRisk.Unsure) return;
      sure++;
      const risk = accountRisk(acc, markets);
      assert.equal(mustLiquidate(risk), false);
      if (quick === QuickRisk.NoPositions) assert.ok(!risk.hasPositions && risk.equity >= 0n);
      else assert.ok(risk.hasPositions && risk.equity > risk.maintenance);
      assert.equal(isMarginCall(risk), quick === QuickRisk.MarginCall);
    },
  ), { numRuns: 5_000 });
  assert.ok(sure > 500, `only ${sure} sure verdicts`);
});

test('maintenanceMarginUnits equals maintenanceMargin for every demo instrument', () => {
  for (const config of DEMO_INSTRUMENTS) {
    const rules = compileInstrument(config);
    fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 50 }), (n) => BigInt(maintenanceMarginUnits(rules, n)) === maintenanceMargin(rules, BigInt(n))), { numRuns: 5_000 });
  }
});

test('bankruptcyPriceUnits and adlLevelUnits equal their bigint twins whenever they answer', () => {
  let sure = 0;
  const markets = new Map<string, Market>();
  for (const config of DEMO_INSTRUMENTS) markets.set(config.id, new Market(compileInstrument(config), 0));
  const ids = [...markets.keys()];
  fc.assert(fc.property(
    fc.oneof(fc.bigInt({ min: -(10n ** 12n), max: 10n ** 14n }), fc.bigInt({ min: -(2n ** 55n), max: 2n ** 55n })),
    fc.array(fc.record({ qty: fc.oneof(fc.integer({ min: -1e10, max: 1e10 }), fc.integer({ min: -1e13, max: 1e13 })), cost: fc.bigInt({ min: 0n, max: 10n ** 15n }), mark: fc.option(fc.integer({ min: 1, max: 1e13 })) }), { minLength: 1, maxLength: 2 }),
    fc.integer({ min: 1, max: 300 }),
    (balance, positions, leverage) => {
      const acc = newAccount(1);
      acc.balance = balance;
      positions.forEach((p, i) => {
        markets.get(ids[i])!.markPrice = p.mark;
        acc.positions.set(ids[i], newPosition({ id: `p${i}`, instrument: ids[i], qty: p.qty, side: 'BUY', cost: p.cost, realizedPnL: 0n, fee: 0n, fundingPaid: 0n, createdAt: 0, updatedAt: 0 }));
      });
      const pos = acc.positions.get(ids[0])!;
      const fast = bankruptcyPriceUnits(acc, pos, markets);
      if (fast !== undefined) {
        sure++;
        assert.equal(fast, bankruptcyPrice(acc, pos, markets));
      }
      const mark = markets.get(ids[0])!.valuationPrice;
      const level = adlLevelUnits(pos, unrealizedUnits(pos, mark), costUnits(pos), leverage);
      if (level !== 0) assert.equal(level, adlLevel(pos, unrealizedPnL(pos, mark), leverage));
    },
  ), { numRuns: 5_000 });
  assert.ok(sure > 600, `only ${sure} answers`);
});

test('accounts and positions keep the doubles of their balance, pending withdrawals and cost in step with every write', () => {
  fc.assert(fc.property(fc.array(fc.oneof(fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }), fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n })), { minLength: 1, maxLength: 10 }), (values) => {
    const acc = newAccount(7);
    const pos = newPosition({ id: 'p', instrument: 'X', qty: 1, side: 'BUY', cost: 0n, realizedPnL: 0n, fee: 0n, fundingPaid: 0n, createdAt: 0, updatedAt: 0 });
    for (const v of values) {
      acc.balance += v;
      acc.pendingWithdrawals = v < 0n ? -v : v;
      pos.cost = v < 0n ? -v : v;
      assert.ok(Object.is(acc.balanceDouble, smallMoney(acc.balance)));
      assert.ok(Object.is(acc.pendingDouble, smallMoney(acc.pendingWithdrawals)));
      assert.ok(Object.is(costUnits(pos), smallMoney(pos.cost)));
    }
  }), { numRuns: 1_000 });
});
