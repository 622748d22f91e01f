/**
 * Unit tests of the order life cycle: each order type, time in force and status transition, matching
 * priority, fees, replace/cancel (single, mass, by id, batch), client-id rules, self-match prevention and
 * the trading rules that turn an order into REJECTED (halt, trading state, margin, leverage, tier caps).
 *
 * Amounts are computed by hand in the tests: Units are 1e-8 counts (U('0.01') = 1_000_000), Money is a
 * bigint 1e-8 count (M('1000') = 100_000_000_000n). notional = qty × price / 1e8; fees are rounded UP.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dayNumber, orderIdPrefix } from '../../src/domain/order-id.js';
import type { Command, PlaceOrderInput, ReplaceInput } from '../../src/engine/commands.js';
import { restoreEngine } from '../../src/engine/engine.js';
import { serializeState } from '../../src/engine/snapshot.js';
import type { CommandResult, OrderView } from '../../src/engine/records.js';
import { err, evs, Harness, M, mark, setup, T0, U } from './harness.js';

/** The order's final state in this command's events (each touched order is reported once). */
function orderEvent(r: CommandResult, id: string): OrderView | undefined {
  const list = evs(r, 'order').filter((e) => e.order.id === id);
  assert.ok(list.length <= 1, `order ${id} reported ${list.length} times in one command`);
  return list[0]?.order;
}


function idWithDay(day: number, n: number): string {
  return `${String(day).padStart(5, '0')}:${n.toString(16).padStart(26, '0')}`;
}

/** Canonical state JSON without the command counter. */
function stateWithoutSeq(h: Harness): string {
  return JSON.stringify({ ...serializeState(h.engine.s), seq: 0 });
}

function depth(h: Harness, instrument = 'BTCUSDT') {
  return h.engine.depth(instrument, 50, 0)!;
}

const NOTIONAL_1000 = M('1000'); // 0.01 BTC × 100000
const MAKER_FEE_1000 = M('0.2'); // 1000 × 0.0002
const TAKER_FEE_1000 = M('0.5'); // 1000 × 0.0005

describe('LIMIT orders', () => {
  it('a GTC limit that does not cross rests as NEW and reserves margin', () => {
    const h = setup();
    const o = h.order(1, { side: 'BUY', qty: '0.01', price: '99000' });
    assert.equal(o.status, 'NEW');
    assert.equal(o.type, 'LIMIT');
    assert.equal(o.timeInForce, 'GTC');
    assert.equal(o.unFilledQuantity, U('0.01'));
    assert.equal(o.filledQuantity, 0);
    assert.equal(o.rejectedReason, '');
    assert.deepEqual(depth(h).bids, [{ price: U('99000'), quantity: U('0.01') }]);
    assert.deepEqual(depth(h).asks, []);
    assert.deepEqual(h.engine.openOrders(1).map((x) => x.id), [o.id]);
    assert.equal(h.engine.getOrder(1, o.id)?.status, 'NEW');
    const acc = h.engine.account(1);
    // 0.01 × 99000 = 990 USDT open volume at 10x → 99 USDT reserved
    assert.deepEqual(acc.openOrders, [{ instrument: 'BTCUSDT', side: 'BUY', unFilledVolume: M('990'), unFilledInitialMargin: M('99') }]);
    assert.equal(acc.totalLock, M('99'));
    assert.equal(acc.availableBalance, M('1000000') - M('99'));
  });

  it('a crossing limit fills fully: maker/taker fills share the execution id, trade at the maker price, fees by role', () => {
    const h = setup();
    const maker = h.order(2, { side: 'SELL', qty: '0.01', price: '100000' });
    const r = h.place(1, { side: 'BUY', qty: '0.01', price: '100100' });
    assert.ok(r.reply.ok);
    const taker = r.reply.order!;
    assert.equal(taker.status, 'FILLED');
    assert.equal(taker.filledQuantity, U('0.01'));
    assert.equal(taker.unFilledQuantity, 0);
    assert.equal(taker.filledValue, NOTIONAL_1000);
    assert.equal(taker.fee, TAKER_FEE_1000);

    const fills = evs(r, 'fill').map((e) => e.fill);
    assert.equal(fills.length, 2);
    const mf = fills.find((f) => f.role === 'MAKER')!;
    const tf = fills.find((f) => f.role === 'TAKER')!;
    assert.equal(mf.userId, 2);
    assert.equal(mf.orderId, maker.id);
    assert.equal(mf.side, 'SELL');
    assert.equal(tf.userId, 1);
    assert.equal(tf.orderId, taker.id);
    assert.equal(tf.side, 'BUY');
    assert.equal(mf.price, U('100000'), 'trades at the resting price');
    assert.equal(tf.price, U('100000'));
    assert.equal(mf.quantity, U('0.01'));
    assert.equal(mf.fee, MAKER_FEE_1000);
    assert.equal(tf.fee, TAKER_FEE_1000);
    assert.ok(mf.executionId.length > 0);
    assert.equal(mf.executionId, tf.executionId);

    const trades = evs(r, 'trade').map((e) => e.trade);
    assert.equal(trades.length, 1);
    assert.deepEqual(
      { id: trades[0].executionId, side: trades[0].side, q: trades[0].quantity, p: trades[0].price },
      { id: mf.executionId, side: 'BUY', q: U('0.01'), p: U('100000') },
    );
    const fees = evs(r, 'orderFee').map((e) => e.fee);
    assert.deepEqual(fees.map((f) => [f.userId, f.quantity, f.executionId, f.type]).sort(), [
      [1, TAKER_FEE_1000, mf.executionId, 'order'], [2, MAKER_FEE_1000, mf.executionId, 'order'],
    ].sort());

    assert.equal(orderEvent(r, maker.id)?.status, 'FILLED');
    assert.equal(h.engine.getOrder(2, maker.id), undefined, 'filled orders are no longer open');
    assert.deepEqual(depth(h).asks, []);
    assert.deepEqual(depth(h).bids, []);
    assert.equal(h.engine.account(1).balance, M('1000000') - TAKER_FEE_1000);
    assert.equal(h.engine.account(2).balance, M('1000000') - MAKER_FEE_1000);
    assert.equal(h.engine.ledger().fees, TAKER_FEE_1000 + MAKER_FEE_1000);
    assert.equal(h.engine.instrumentState('BTCUSDT')!.lastPrice, U('100000'));
  });

  it('execution ids increase trade after trade', () => {
    const h = setup();
    h.order(2, { side: 'SELL', qty: '0.01', price: '100000' });
    h.order(2, { side: 'SELL', qty: '0.01', price: '100001' });
    const r = h.place(1, { side: 'BUY', qty: '0.02', price: '100001' });
    const ids = evs(r, 'trade').map((e) => Number(e.trade.executionId));
    assert.equal(ids.length, 2);
    assert.ok(ids[1] > ids[0]);
    const r2 = h.place(3, { side: 'SELL', qty: '0.01', price: '99000' });
    assert.equal(evs(r2, 'trade').length, 0);
    h.order(4, { side: 'BUY', qty: '0.01', price: '99000' });
    assert.ok(h.engine.s.counters.execution > ids[1]);
  });

  it('fees are rounded up to 1e-8', () => {
    const h = setup();
    h.order(2, { side: 'SELL', qty: '0.0001', price: '100000.1' });
    const r = h.place(1, { side: 'BUY', qty: '0.0001', price: '100000.1' });
    // notional = 0.0001 × 100000.1 = 10.00001 USDT = 1_000_001_000 units
    // maker 0.0002 → 200000.02 units → 200001; taker 0.0005 → 500000.5 units → 500001
    const fills = evs(r, 'fill').map((e) => e.fill);
    assert.equal(fills.find((f) => f.role === 'MAKER')!.fee, 200_001n);
    assert.equal(fills.find((f) => f.role === 'TAKER')!.fee, 500_001n);
    assert.equal(r.reply.ok && r.reply.order!.filledValue, 1_000_001_000n);
  });

  it('a partial cross leaves the remainder resting as PARTIALLY_FILLED, which later fills', () => {
    const h = setup();
    h.order(2, { side: 'SELL', qty: '0.01', price: '100000' });
    const t = h.order(1, { side: 'BUY', qty: '0.03', price: '100000' });
    assert.equal(t.status, 'PARTIALLY_FILLED');
    assert.equal(t.filledQuantity, U('0.01'));
    assert.equal(t.unFilledQuantity, U('0.02'));
    assert.deepEqual(depth(h).bids, [{ price: U('100000'), quantity: U('0.02') }]);
    assert.equal(h.engine.getOrder(1, t.id)?.status, 'PARTIALLY_FILLED');
    // margin reserved only for the resting 0.02 (2000 USDT → 200 at 10x) on top of the position's IM (100)
    assert.equal(h.engine.account(1).openOrders[0].unFilledVolume, M('2000'));
    const r = h.place(3, { side: 'SELL', qty: '0.02', price: '99500' });
    const ev = orderEvent(r, t.id)!;
    assert.equal(ev.status, 'FILLED');
    assert.equal(ev.filledQuantity, U('0.03'));
    assert.equal(ev.unFilledQuantity, 0);
    const makerFill = evs(r, 'fill').find((e) => e.fill.role === 'MAKER')!.fill;
    assert.equal(makerFill.userId, 1);
    assert.equal(makerFill.price, U('100000'));
    assert.equal(h.engine.getOrder(1, t.id), undefined);
  });

  it('price-time priority: better price first, then earlier order at the same price', () => {
    const h = setup(5);
    const early = h.order(2, { side: 'SELL', qty: '0.01', price: '100000' });
    const late = h.order(3, { side: 'SELL', qty: '0.01', price: '100000' });
    const better = h.order(4, { side: 'SELL', qty: '0.01', price: '99900' });
    const r = h.place(1, { side: 'BUY', qty: '0.015', price: '100000' });
    const makerFills = evs(r, 'fill').map((e) => e.fill).filter((f) => f.role === 'MAKER');
    assert.deepEqual(makerFills.map((f) => [f.orderId, f.quantity, f.price]), [
      [better.id, U('0.01'), U('99900')],
      [early.id, U('0.005'), U('100000')],
    ]);
    assert.equal(orderEvent(r, late.id), undefined, 'the later order at the same price is untouched');
    assert.equal(h.engine.getOrder(2, early.id)!.unFilledQuantity, U('0.005'));
    assert.equal(h.engine.getOrder(3, late.id)!.unFilledQuantity, U('0.01'));
    // the next taker takes the rest of `early` before `late`
    const r2 = h.place(5, { side: 'BUY', qty: '0.006', price: '100000' });
    assert.deepEqual(evs(r2, 'fill').filter((e) => e.fill.role === 'MAKER').map((e) => [e.fill.orderId, e.fill.quantity]), [
      [early.id, U('0.005')], [late.id, U('0.001')],
    ]);
  });

  it('a limit price outside the fat-finger band (mark ± 10%) is REJECTED', () => {
    const h = setup();
    const hi = h.order(1, { side: 'BUY', qty: '0.01', price: '110000.1' });
    assert.equal(hi.status, 'REJECTED');
    assert.equal(hi.rejectedReason, 'Invalid price');
    const edge = h.order(1, { side: 'BUY', qty: '0.01', price: '90000' });
    assert.equal(edge.status, 'NEW');
  });

  it('static validation failures are refusals that change nothing', () => {
    const h = setup();
    const bad: Array<[Partial<Parameters<Harness['order']>[1]>, string]> = [
      [{ price: '100000.05' }, 'INVALID_PRICE'], // not a multiple of 0.1
      [{ qty: '0.00015' }, 'INVALID_QUANTITY'], // not a multiple of 0.0001
      [{ qty: '0.00001' }, 'INVALID_QUANTITY'],
      [{ qty: '0.0001', price: '5000' }, 'INVALID_VOLUME'], // 0.5 USDT < minVolume 1
      [{ tif: 'IOC', type: 'STOP_LIMIT', stop: '101000' }, 'INVALID_TIME_IN_FORCE'],
      [{ id: 'not-an-id' }, 'INVALID_ORDER_ID'],
      [{ instrument: 'XRPUSDT' }, 'INSTRUMENT_NOT_FOUND'],
    ];
    for (const [patch, code] of bad) {
      const before = stateWithoutSeq(h);
      const seq = h.engine.seq;
      const r = h.place(1, { side: 'BUY', qty: '0.01', price: '99000', ...patch });
      assert.equal(err(r).code, code, JSON.stringify(patch));
      assert.equal(r.events.length, 0);
      assert.equal(h.engine.seq, seq + 1);
      assert.equal(stateWithoutSeq(h), before, 'only seq moved');
    }
    assert.deepEqual(h.engine.openOrders(1), []);
  });
});

describe('IOC / FOK / DAY', () => {
  it('IOC: fills what it can, the remainder EXPIRES (nothing rests)', () => {
    const h = setup();
    h.order(2, { side: 'SELL', qty: '0.01', price: '100000' });
    const o = h.order(1, { side: 'BUY', qty: '0.03', price: '100000', tif: 'IOC' });
    assert.equal(o.status, 'EXPIRED');
    assert.equal(o.filledQuantity, U('0.01'));
    assert.equal(o.unFilledQuantity, U('0.02'), 'a finished order reports what was never filled');
    assert.equal(o.rejectedReason, 'Unfilled remainder expired');
    assert.deepEqual(depth(h).bids, []);
    assert.deepEqual(h.engine.openOrders(1), []);
    assert.equal(h.engine.account(1).openOrders.length, 0, 'no margin stays reserved');
    assert.equal(h.engine.positions(1)[0].quantity, U('0.01'));
  });

  it('IOC with nothing to match EXPIRES without a fill', () => {
    const h = setup();
    const o = h.order(1, { side: 'BUY', qty: '0.01', price: '100000', tif: 'IOC' });
    assert.equal(o.status, 'EXPIRED');
    assert.equal(o.filledQuantity, 0);
    assert.deepEqual(depth(h).bids, []);
  });

  it('FOK that cannot fill completely EXPIRES with no trade and the book unchanged', () => {
    const h = setup();
    const a = h.order(2, { side: 'SELL', qty: '0.01', price: '100000' });
    const b = h.order(3, { side: 'SELL', qty: '0.01', price: '100100' });
    h.order(4, { side: 'SELL', qty: '0.05', price: '100300' }); // beyond the FOK's limit
    const before = depth(h);
    const r = h.place(1, { side: 'BUY', qty: '0.03', price: '100100', tif: 'FOK' });
    assert.ok(r.reply.ok);
    const o = r.reply.order!;
    assert.equal(o.status, 'EXPIRED');
    assert.equal(o.filledQuantity, 0);
    assert.equal(evs(r, 'trade').length, 0);
    assert.equal(evs(r, 'fill').length, 0);
    assert.deepEqual(depth(h), before);
    assert.equal(h.engine.getOrder(2, a.id)!.unFilledQuantity, U('0.01'));
    assert.equal(h.engine.getOrder(3, b.id)!.unFilledQuantity, U('0.01'));
    assert.deepEqual(h.engine.positions(1), []);
  });

  it('FOK that can fill completely (across levels) is FILLED', () => {
    const h = setup();
    h.order(2, { side: 'SELL', qty: '0.01', price: '100000' });
    h.order(3, { side: 'SELL', qty: '0.01', price: '100100' });
    const o = h.order(1, { side: 'BUY', qty: '0.02', price: '100100', tif: 'FOK' });
    assert.equal(o.status, 'FILLED');
    assert.equal(o.filledQuantity, U('0.02'));
    assert.equal(o.filledValue, M('1000') + M('1001'));
    assert.deepEqual(depth(h).asks, []);
  });

  it('a DAY order EXPIRES at the first command at or after the next UTC midnight', () => {
    const h = setup();
    const day = h.order(1, { side: 'BUY', qty: '0.01', price: '99000', tif: 'DAY' });
    const gtc = h.order(1, { side: 'BUY', qty: '0.01', price: '98000' });
    assert.equal(day.status, 'NEW');
    const midnight = Date.UTC(2026, 10, 23);
    assert.ok(h.ts < midnight && midnight - T0 < 86_400_000);
    // one ms before midnight: still live
    const r1 = h.run({ kind: 'funds.deposit', userId: 9, amount: '1', transferId: 'pre-midnight' }, midnight - 1 - h.ts);
    assert.equal(orderEvent(r1, day.id), undefined);
    assert.equal(h.engine.getOrder(1, day.id)?.status, 'NEW');
    // the first command at midnight (any command, even an unrelated one) expires it
    const r2 = h.run({ kind: 'funds.deposit', userId: 9, amount: '1', transferId: 'at-midnight' }, 1);
    assert.equal(h.ts, midnight);
    const ev = orderEvent(r2, day.id);
    assert.ok(ev, 'expiry is reported');
    assert.equal(ev.status, 'EXPIRED');
    assert.equal(ev.unFilledQuantity, U('0.01'), 'the whole order went unfilled');
    assert.equal(h.engine.getOrder(1, day.id), undefined);
    assert.deepEqual(depth(h).bids, [{ price: U('98000'), quantity: U('0.01') }]);
    assert.equal(h.engine.getOrder(1, gtc.id)?.status, 'NEW', 'GTC orders do not expire');
    assert.deepEqual(h.engine.account(1).openOrders, [{ instrument: 'BTCUSDT', side: 'BUY', unFilledVolume: M('980'), unFilledInitialMargin: M('98') }]);
  });

  it('a partially filled DAY order expires its remainder at midnight', () => {
    const h = setup();
    h.order(2, { side: 'SELL', qty: '0.01', price: '100000' });
    const day = h.order(1, { side: 'BUY', qty: '0.03', price: '100000', tif: 'DAY' });
    assert.equal(day.status, 'PARTIALLY_FILLED');
    const r = h.run({ kind: 'price.tick', instrument: 'ETHUSDT', indexPrice: U('3500') }, Date.UTC(2026, 10, 23, 0, 0, 5) - h.ts);
    const ev = orderEvent(r, day.id)!;
    assert.equal(ev.status, 'EXPIRED');
    assert.equal(ev.filledQuantity, U('0.01'));
    assert.deepEqual(depth(h).bids, []);
    assert.equal(h.engine.positions(1)[0].quantity, U('0.01'), 'the filled part stays');
  });

  it('DAY orders expiring in one command are reported in creation order, with or without a snapshot restore', () => {
    const h = setup();
    const a = h.order(4, { side: 'BUY', qty: '0.01', price: '99000', tif: 'DAY' });
    const b = h.order(1, { side: 'BUY', qty: '0.01', price: '99000', tif: 'DAY' });
    // a size increase re-queues `a` behind `b` in the book: its expiry order must not change
    h.ok({ kind: 'order.replace', userId: 4, replace: { orderId: a.id, quantity: U('0.02'), limitPrice: U('99000') } });
    const restored = restoreEngine(JSON.parse(JSON.stringify(h.engine.snapshot())));
    const cmd: Command = { kind: 'funds.deposit', userId: 9, amount: '1', transferId: 'midnight', ts: Date.UTC(2026, 10, 23) };
    const live = h.engine.apply(cmd);
    const again = restored.apply(structuredClone(cmd));
    const expired = (r: CommandResult) => evs(r, 'order').filter((e) => e.order.status === 'EXPIRED').map((e) => e.order.id);
    assert.deepEqual(expired(live), [a.id, b.id]);
    assert.deepEqual(expired(again), [a.id, b.id]);
    assert.equal(restored.stateHash(), h.engine.stateHash());
  });

  it('an untriggered DAY stop-limit order also expires at midnight', () => {
    const h = setup();
    const stop = h.order(1, { side: 'BUY', qty: '0.01', price: '101500', stop: '101000', tif: 'DAY' });
    assert.equal(stop.status, 'NEW');
    const r = h.run({ kind: 'price.tick', instrument: 'ETHUSDT', indexPrice: U('3500') }, Date.UTC(2026, 10, 23) - h.ts);
    assert.equal(orderEvent(r, stop.id)?.status, 'EXPIRED');
    assert.deepEqual(h.engine.openOrders(1), []);
    // it can no longer trigger
    const r2 = mark(h, '102000');
    assert.equal(orderEvent(r2, stop.id), undefined);
    assert.equal(h.engine.account(1).totalLock, 0n);
  });
});

describe('post-only', () => {
  it('a post-only order that would cross is REJECTED with a reason; one that does not, rests', () => {
    const h = setup();
    h.order(2, { side: 'SELL', qty: '0.01', price: '100000' });
    const crossing = h.order(1, { side: 'BUY', qty: '0.01', price: '100000', postOnly: true });
    assert.equal(crossing.status, 'REJECTED');
    assert.equal(crossing.rejectedReason, 'Post-only order would take liquidity');
    assert.equal(crossing.filledQuantity, 0);
    assert.deepEqual(depth(h).asks, [{ price: U('100000'), quantity: U('0.01') }]);
    assert.deepEqual(h.engine.openOrders(1), []);
    assert.equal(h.engine.account(1).totalLock, 0n);
    const resting = h.order(1, { side: 'BUY', qty: '0.01', price: '99999.9', postOnly: true });
    assert.equal(resting.status, 'NEW');
    assert.equal(resting.postOnly, true);
  });

  it('post-only is refused on market orders', () => {
    const h = setup();
    const r = h.run({ kind: 'order.place', userId: 1, order: { id: h.newId(), instrument: 'BTCUSDT', side: 'BUY', type: 'MARKET', timeInForce: 'IOC', leverage: 10, cashQuantity: U('100'), postOnly: true } });
    assert.equal(err(r).code, 'INVALID_POST_ONLY');
  });
});

describe('MARKET orders by cashQuantity', () => {
  it('derives the quantity from the cash, in quantity increments, never spending more than cashQuantity', () => {
    const h = setup();
    h.order(2, { side: 'SELL', qty: '0.01', price: '100000' });
    h.order(3, { side: 'SELL', qty: '0.01', price: '100100' });
    const o = h.order(1, { side: 'BUY', cash: '1500' });
    // level 100000: 0.01 for 1000; left 500 → at 100100: floor(500/100100, 0.0001) = 0.0049 for 490.49;
    // left 9.51 buys less than one increment (0.0001 × 100100 = 10.01) → stop.
    assert.equal(o.type, 'MARKET');
    assert.equal(o.status, 'FILLED');
    assert.equal(o.cashQuantity, U('1500'));
    assert.equal(o.filledQuantity, U('0.0149'));
    assert.equal(o.quantity, U('0.0149'));
    assert.equal(o.filledValue, M('1490.49'));
    assert.ok(o.filledValue <= M('1500'));
    assert.equal(o.filledQuantity % U('0.0001'), 0);
    assert.equal(h.engine.positions(1)[0].quantity, U('0.0149'));
    assert.deepEqual(depth(h).asks, [{ price: U('100100'), quantity: U('0.0051') }]);
  });

  it('spends exactly the cash when it divides evenly', () => {
    const h = setup();
    h.order(2, { side: 'SELL', qty: '1', price: '100000' });
    const o = h.order(1, { side: 'BUY', cash: '2500' });
    assert.equal(o.status, 'FILLED');
    assert.equal(o.filledQuantity, U('0.025'));
    assert.equal(o.filledValue, M('2500'));
  });

  it('never fills beyond mark × (1 + slippageLimit) for a buy', () => {
    const h = setup();
    mark(h, '100000');
    h.order(2, { side: 'SELL', qty: '0.01', price: '105000' }); // exactly mark + 5%
    h.order(3, { side: 'SELL', qty: '0.01', price: '105000.1' }); // just beyond
    const o = h.order(1, { side: 'BUY', cash: '5000' });
    assert.equal(o.filledQuantity, U('0.01'));
    assert.equal(o.filledValue, M('1050'));
    assert.equal(o.status, 'FILLED');
    assert.deepEqual(depth(h).asks, [{ price: U('105000.1'), quantity: U('0.01') }]);
  });

  it('never fills below mark × (1 − slippageLimit) for a sell; with no liquidity in the band it EXPIRES', () => {
    const h = setup();
    mark(h, '100000');
    h.order(2, { side: 'BUY', qty: '0.01', price: '94999.9' });
    const r = h.place(1, { side: 'SELL', cash: '500' });
    assert.ok(r.reply.ok);
    assert.equal(r.reply.order!.status, 'EXPIRED');
    assert.equal(r.reply.order!.filledQuantity, 0);
    assert.equal(r.reply.order!.rejectedReason, 'No liquidity within the price limit');
    assert.equal(evs(r, 'trade').length, 0);
    h.order(3, { side: 'BUY', qty: '0.01', price: '95000' });
    const o = h.order(1, { side: 'SELL', cash: '500' });
    assert.equal(o.filledQuantity, U('0.0052')); // floor(500 / 95000, 0.0001)
    assert.equal(o.filledValue, M('494'));
    assert.deepEqual(h.engine.positions(1).map((p) => [p.side, p.quantity]), [['SELL', U('0.0052')]]);
  });

  it('cashQuantity below minVolume is refused', () => {
    const h = setup();
    const r = h.place(1, { side: 'BUY', cash: '0.5' });
    assert.equal(err(r).code, 'INVALID_VOLUME');
  });
});

describe('STOP_LIMIT orders', () => {
  it('rests untriggered (not in the book, margin reserved) until the MARK crosses the stop at a price tick', () => {
    const h = setup();
    mark(h, '100000');
    const ask = h.order(2, { side: 'SELL', qty: '0.01', price: '101200' });
    const stop = h.order(1, { side: 'BUY', qty: '0.01', price: '101500', stop: '101000' });
    assert.equal(stop.type, 'STOP_LIMIT');
    assert.equal(stop.status, 'NEW');
    assert.equal(stop.stopPrice, U('101000'));
    assert.equal(stop.triggeredAt, null);
    assert.deepEqual(depth(h).bids, [], 'an untriggered stop is not in the book');
    assert.equal(h.engine.getOrder(1, stop.id)?.status, 'NEW');
    assert.deepEqual(h.engine.account(1).openOrders, [{ instrument: 'BTCUSDT', side: 'BUY', unFilledVolume: M('1015'), unFilledInitialMargin: M('101.5') }]);

    // below the stop: nothing
    let r = mark(h, '100900');
    assert.equal(orderEvent(r, stop.id), undefined);
    // the index crossing is not enough: the mark decides
    r = h.tick('BTCUSDT', '101500', '100950');
    assert.equal(orderEvent(r, stop.id), undefined);
    // the mark reaches the stop: triggers, then trades as a limit at 101500 → takes the ask at 101200
    r = h.tick('BTCUSDT', '100000', '101000');
    const ev = orderEvent(r, stop.id)!;
    assert.equal(ev.triggeredAt, h.ts);
    assert.equal(ev.status, 'FILLED');
    assert.equal(ev.filledQuantity, U('0.01'));
    const fills = evs(r, 'fill').map((e) => e.fill);
    assert.deepEqual(fills.map((f) => [f.orderId, f.role, f.price]).sort(), [[ask.id, 'MAKER', U('101200')], [stop.id, 'TAKER', U('101200')]].sort());
    assert.deepEqual(h.engine.openOrders(1), []);
  });

  it('a triggered stop with no liquidity rests in the book as a limit (triggeredAt set)', () => {
    const h = setup();
    mark(h, '100000');
    const stop = h.order(1, { side: 'SELL', qty: '0.01', price: '98500', stop: '99000' });
    let r = mark(h, '99500');
    assert.equal(orderEvent(r, stop.id), undefined);
    r = mark(h, '98900');
    const ev = orderEvent(r, stop.id)!;
    assert.equal(ev.status, 'NEW');
    assert.equal(ev.triggeredAt, h.ts);
    assert.deepEqual(depth(h).asks, [{ price: U('98500'), quantity: U('0.01') }]);
    // now it behaves like a limit: a crossing buy trades with it
    const b = h.order(2, { side: 'BUY', qty: '0.01', price: '98500' });
    assert.equal(b.status, 'FILLED');
    // and a later tick does not re-trigger anything
    r = mark(h, '98000');
    assert.equal(evs(r, 'order').length, 0);
  });

  it('an untriggered stop can be cancelled and releases its margin', () => {
    const h = setup();
    const stop = h.order(1, { side: 'BUY', qty: '0.01', price: '101500', stop: '101000' });
    const r = h.ok({ kind: 'order.cancel', userId: 1, orderId: stop.id });
    assert.equal(orderEvent(r, stop.id)?.status, 'CANCELLED');
    assert.equal(h.engine.account(1).totalLock, 0n);
    const r2 = mark(h, '102000');
    assert.equal(orderEvent(r2, stop.id), undefined);
  });

  it('replacing a stop-limit needs a stopPrice and moves the trigger', () => {
    const h = setup();
    mark(h, '100000');
    const stop = h.order(1, { side: 'BUY', qty: '0.01', price: '101500', stop: '101000' });
    const noStop = h.run({ kind: 'order.replace', userId: 1, replace: { orderId: stop.id, quantity: U('0.01'), limitPrice: U('102500') } });
    assert.equal(err(noStop).code, 'INVALID_REPLACE');
    h.ok({ kind: 'order.replace', userId: 1, replace: { orderId: stop.id, quantity: U('0.02'), limitPrice: U('102500'), stopPrice: U('102000') } });
    assert.equal(orderEvent(mark(h, '101500'), stop.id), undefined);
    const ev = orderEvent(mark(h, '102000'), stop.id)!;
    assert.equal(ev.triggeredAt, h.ts);
    assert.deepEqual(depth(h).bids, [{ price: U('102500'), quantity: U('0.02') }]);
  });

  it('one tick triggers every crossed stop, in arrival order whatever their stop prices; a replace keeps its place', () => {
    const h = setup();
    mark(h, '100000');
    // Armed in this order; stop prices deliberately not in arrival order. Each rests as a limit far from
    // the (empty) book when triggered, so its NEW event with triggeredAt shows when it fired.
    const a = h.order(1, { side: 'BUY', qty: '0.01', price: '90000', stop: '101500' });
    const b = h.order(2, { side: 'BUY', qty: '0.01', price: '90000', stop: '100500' });
    const c = h.order(3, { side: 'SELL', qty: '0.01', price: '110000', stop: '99000' }); // falls: not crossed by a rise
    const d = h.order(4, { side: 'BUY', qty: '0.01', price: '90000', stop: '103000' }); // beyond this tick
    const e = h.order(1, { side: 'BUY', qty: '0.01', price: '90000', stop: '104000' });
    // e moves its stop below a's and b's: still the last of them to arrive.
    h.ok({ kind: 'order.replace', userId: 1, replace: { orderId: e.id, quantity: U('0.01'), limitPrice: U('90000'), stopPrice: U('100200') } });
    const r = mark(h, '102000');
    const triggered = evs(r, 'order').map((ev) => ev.order).filter((o) => o.triggeredAt === h.ts).map((o) => o.id);
    assert.deepEqual(triggered, [a.id, b.id, e.id]);
    assert.equal(h.engine.getOrder(3, c.id)!.triggeredAt, null);
    assert.equal(h.engine.getOrder(4, d.id)!.triggeredAt, null);
    // The falling stop fires on the way down, d never (the mark stays below 103000).
    const down = mark(h, '98500');
    assert.deepEqual(evs(down, 'order').map((ev) => ev.order).filter((o) => o.triggeredAt === h.ts).map((o) => o.id), [c.id]);
    assert.equal(h.engine.getOrder(4, d.id)!.triggeredAt, null);
  });
});

describe('replace', () => {
  function replace(h: Harness, userId: number, rep: ReplaceInput): CommandResult {
    return h.run({ kind: 'order.replace', userId, replace: rep });
  }

  it('a size decrease at the same price keeps time priority', () => {
    const h = setup();
    const a = h.order(2, { side: 'SELL', qty: '0.02', price: '100000' });
    const b = h.order(3, { side: 'SELL', qty: '0.01', price: '100000' });
    const r = replace(h, 2, { orderId: a.id, quantity: U('0.01'), limitPrice: U('100000') });
    assert.ok(r.reply.ok);
    assert.equal(r.reply.order!.quantity, U('0.01'));
    assert.equal(r.reply.order!.unFilledQuantity, U('0.01'));
    assert.deepEqual(depth(h).asks, [{ price: U('100000'), quantity: U('0.02') }]);
    assert.equal(h.engine.account(2).openOrders[0].unFilledVolume, M('1000'), 'the decrease released part of the reserve');
    const t = h.place(1, { side: 'BUY', qty: '0.01', price: '100000' });
    assert.deepEqual(evs(t, 'fill').filter((e) => e.fill.role === 'MAKER').map((e) => e.fill.orderId), [a.id]);
    assert.equal(h.engine.getOrder(3, b.id)!.unFilledQuantity, U('0.01'));
  });

  it('a price change loses time priority', () => {
    const h = setup();
    const a = h.order(2, { side: 'SELL', qty: '0.01', price: '100100' });
    const b = h.order(3, { side: 'SELL', qty: '0.01', price: '100000' });
    replace(h, 2, { orderId: a.id, quantity: U('0.01'), limitPrice: U('100000') });
    const t = h.place(1, { side: 'BUY', qty: '0.01', price: '100000' });
    assert.deepEqual(evs(t, 'fill').filter((e) => e.fill.role === 'MAKER').map((e) => e.fill.orderId), [b.id]);
    assert.equal(h.engine.getOrder(2, a.id)!.unFilledQuantity, U('0.01'));
  });

  it('a size increase loses time priority', () => {
    const h = setup();
    const a = h.order(2, { side: 'SELL', qty: '0.01', price: '100000' });
    const b = h.order(3, { side: 'SELL', qty: '0.01', price: '100000' });
    replace(h, 2, { orderId: a.id, quantity: U('0.02'), limitPrice: U('100000') });
    assert.deepEqual(depth(h).asks, [{ price: U('100000'), quantity: U('0.03') }]);
    const t = h.place(1, { side: 'BUY', qty: '0.01', price: '100000' });
    assert.deepEqual(evs(t, 'fill').filter((e) => e.fill.role === 'MAKER').map((e) => e.fill.orderId), [b.id]);
    assert.equal(h.engine.account(2).openOrders[0].unFilledVolume, M('2000'));
  });

  it('a price change that crosses trades immediately', () => {
    const h = setup();
    h.order(2, { side: 'SELL', qty: '0.01', price: '100000' });
    const bid = h.order(1, { side: 'BUY', qty: '0.01', price: '99000' });
    const r = replace(h, 1, { orderId: bid.id, quantity: U('0.01'), limitPrice: U('100000') });
    assert.ok(r.reply.ok);
    assert.equal(r.reply.order!.status, 'FILLED');
    assert.equal(evs(r, 'trade').length, 1);
  });

  it('new quantity is the total: it must exceed the filled part; the remainder becomes q − filled', () => {
    const h = setup();
    h.order(2, { side: 'SELL', qty: '0.01', price: '100000' });
    const t = h.order(1, { side: 'BUY', qty: '0.03', price: '100000' });
    assert.equal(err(replace(h, 1, { orderId: t.id, quantity: U('0.01'), limitPrice: U('100000') })).code, 'INVALID_QUANTITY');
    const r = replace(h, 1, { orderId: t.id, quantity: U('0.015'), limitPrice: U('100000') });
    assert.ok(r.reply.ok);
    assert.equal(r.reply.order!.unFilledQuantity, U('0.005'));
    assert.equal(r.reply.order!.filledQuantity, U('0.01'));
  });

  it('replacing a filled, cancelled or unknown order is refused', () => {
    const h = setup();
    const a = h.order(2, { side: 'SELL', qty: '0.01', price: '100000' });
    h.order(1, { side: 'BUY', qty: '0.01', price: '100000' });
    const r = replace(h, 2, { orderId: a.id, quantity: U('0.02'), limitPrice: U('100000') });
    assert.deepEqual([err(r).status, err(r).code], [409, 'ORDER_NOT_OPEN']);
    const c = h.order(2, { side: 'SELL', qty: '0.01', price: '101000' });
    h.ok({ kind: 'order.cancel', userId: 2, orderId: c.id });
    assert.equal(err(replace(h, 2, { orderId: c.id, quantity: U('0.02'), limitPrice: U('101000') })).code, 'ORDER_NOT_OPEN');
    assert.equal(err(replace(h, 2, { orderId: h.newId(), quantity: U('0.02'), limitPrice: U('101000') })).status, 404);
    // another user's live order is not found
    const mine = h.order(3, { side: 'SELL', qty: '0.01', price: '101000' });
    assert.equal(err(replace(h, 4, { orderId: mine.id, quantity: U('0.02'), limitPrice: U('101000') })).status, 404);
  });

  it('a replace that needs more margin than available is refused and changes nothing', () => {
    const h = setup(2, '1000');
    // 0.05 × 100000 = 5000 volume at 10x → 500 reserved (+2.5 fee headroom at placement)
    const o = h.order(1, { side: 'BUY', qty: '0.05', price: '100000', leverage: 10 });
    assert.equal(o.status, 'NEW');
    const r = replace(h, 1, { orderId: o.id, quantity: U('0.11'), limitPrice: U('100000') });
    assert.deepEqual([err(r).status, err(r).message], [422, 'Insufficient available balance']);
    assert.equal(h.engine.getOrder(1, o.id)!.quantity, U('0.05'));
    assert.equal(h.engine.account(1).totalLock, M('500'));
  });
});

describe('cancel', () => {
  it('cancel → CANCELLED, out of the book, margin released', () => {
    const h = setup();
    const o = h.order(1, { side: 'BUY', qty: '0.01', price: '99000' });
    const r = h.ok({ kind: 'order.cancel', userId: 1, orderId: o.id });
    assert.ok(r.reply.ok);
    assert.equal(r.reply.order!.status, 'CANCELLED');
    assert.equal(orderEvent(r, o.id)!.status, 'CANCELLED');
    assert.deepEqual(depth(h).bids, []);
    assert.deepEqual(h.engine.openOrders(1), []);
    assert.equal(h.engine.account(1).totalLock, 0n);
    assert.equal(h.engine.account(1).availableBalance, M('1000000'));
  });

  it('cancel after FILLED: ok reply, nothing changes, the status stays FILLED', () => {
    const h = setup();
    const a = h.order(2, { side: 'SELL', qty: '0.01', price: '100000' });
    const fillCmd = h.place(1, { side: 'BUY', qty: '0.01', price: '100000' });
    assert.equal(orderEvent(fillCmd, a.id)!.status, 'FILLED');
    const balance = h.engine.account(2).balance;
    const r = h.run({ kind: 'order.cancel', userId: 2, orderId: a.id });
    assert.equal(r.reply.ok, true);
    assert.equal(r.reply.ok && r.reply.order, undefined);
    assert.equal(evs(r, 'order').length, 0, 'no order update: it stays FILLED');
    assert.equal(r.events.length, 0);
    assert.equal(h.engine.getOrder(2, a.id), undefined);
    assert.equal(h.engine.account(2).balance, balance);
    assert.equal(h.engine.positions(2)[0].quantity, U('0.01'));
  });

  it('cancel of an unknown order, or of another user\'s order, is 404 and leaves the order alone', () => {
    const h = setup();
    const o = h.order(1, { side: 'BUY', qty: '0.01', price: '99000' });
    assert.equal(err(h.run({ kind: 'order.cancel', userId: 2, orderId: o.id })).status, 404);
    assert.equal(err(h.run({ kind: 'order.cancel', userId: 1, orderId: h.newId() })).status, 404);
    assert.equal(err(h.run({ kind: 'order.cancel', userId: 1, orderId: 'garbage' })).status, 400);
    assert.equal(h.engine.getOrder(1, o.id)?.status, 'NEW');
  });

  it('a v1 UUID spelling reaches the same order', () => {
    const h = setup();
    const o = h.order(1, { side: 'BUY', qty: '0.01', price: '99000' });
    const hex = o.id.slice(6) + '000000'; // 26 + 6 = 32 hex digits
    const uuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    assert.equal(h.engine.getOrder(1, uuid)?.id, o.id);
    const r = h.ok({ kind: 'order.cancel', userId: 1, orderId: uuid });
    assert.equal(orderEvent(r, o.id)?.status, 'CANCELLED');
  });

  it('mass cancel (order.cancelAll) only touches the given instrument and user', () => {
    const h = setup();
    const b1 = h.order(1, { side: 'BUY', qty: '0.01', price: '99000' });
    const b2 = h.order(1, { side: 'SELL', qty: '0.01', price: '101000' });
    const bStop = h.order(1, { side: 'BUY', qty: '0.01', price: '101500', stop: '101000' });
    const e1 = h.order(1, { side: 'BUY', qty: '0.1', price: '3400', instrument: 'ETHUSDT' });
    const other = h.order(2, { side: 'BUY', qty: '0.01', price: '99500' });
    const r = h.ok({ kind: 'order.cancelAll', userId: 1, instrument: 'BTCUSDT' });
    assert.ok(r.reply.ok);
    assert.deepEqual(r.reply.orders!.map((o) => o.id).sort(), [b1.id, b2.id, bStop.id].sort());
    assert.ok(r.reply.orders!.every((o) => o.status === 'CANCELLED'));
    assert.deepEqual(h.engine.openOrders(1).map((o) => o.id), [e1.id]);
    assert.equal(h.engine.getOrder(2, other.id)?.status, 'NEW');
    assert.deepEqual(depth(h).bids, [{ price: U('99500'), quantity: U('0.01') }]);
    assert.deepEqual(depth(h).asks, []);
    // nothing left: still ok, empty list
    const r2 = h.ok({ kind: 'order.cancelAll', userId: 1, instrument: 'BTCUSDT' });
    assert.deepEqual(r2.reply.ok && r2.reply.orders, []);
    assert.equal(err(h.run({ kind: 'order.cancelAll', userId: 1, instrument: 'NOPE' })).status, 404);
  });

  it('cancel by id list (order.cancelMany) reports per item', () => {
    const h = setup();
    const live = h.order(1, { side: 'BUY', qty: '0.01', price: '99000' });
    const a = h.order(2, { side: 'SELL', qty: '0.01', price: '100000' });
    const filled = h.order(1, { side: 'BUY', qty: '0.01', price: '100000' });
    assert.equal(filled.status, 'FILLED');
    const foreign = h.order(2, { side: 'SELL', qty: '0.01', price: '101000' });
    void a;
    const unknown = h.newId();
    const r = h.ok({ kind: 'order.cancelMany', userId: 1, orderIds: [live.id, filled.id, unknown, foreign.id] });
    assert.ok(r.reply.ok);
    assert.deepEqual(r.reply.batch, [
      { orderId: live.id, success: true },
      { orderId: filled.id, success: false, failReason: 'Order is not open' },
      { orderId: unknown, success: false, failReason: 'Order not found' },
      { orderId: foreign.id, success: false, failReason: 'Order not found' },
    ]);
    assert.equal(orderEvent(r, live.id)?.status, 'CANCELLED');
    assert.equal(h.engine.getOrder(2, foreign.id)?.status, 'NEW');
    assert.equal(err(h.run({ kind: 'order.cancelMany', userId: 1, orderIds: [] })).code, 'INVALID_BATCH');
  });
});

describe('batch create and batch replace', () => {
  function limit(h: Harness, side: 'BUY' | 'SELL', qty: string, price: string, id = h.newId()): PlaceOrderInput {
    return { id, instrument: 'BTCUSDT', side, type: 'LIMIT', timeInForce: 'GTC', leverage: 10, quantity: U(qty), limitPrice: U(price) };
  }

  it('per-item results, including the order-id date rule', () => {
    const h = setup();
    const today = dayNumber(h.ts + 1);
    const ok1 = limit(h, 'BUY', '0.01', '99000');
    const badPrice = limit(h, 'BUY', '0.01', '99000.05');
    const tooOld = limit(h, 'BUY', '0.01', '98000', idWithDay(today - 2, 0xabc));
    const yesterday = limit(h, 'BUY', '0.01', '98500', idWithDay(today - 1, 0xabd));
    const market: PlaceOrderInput = { ...limit(h, 'BUY', '0.01', '99000'), type: 'MARKET', cashQuantity: U('100') };
    const wrongInstrument: PlaceOrderInput = { ...limit(h, 'BUY', '0.1', '3400'), instrument: 'ETHUSDT' };
    const dupOfFirst = { ...limit(h, 'SELL', '0.01', '101000'), id: ok1.id };
    const rejected = limit(h, 'SELL', '0.01', '120000'); // passes validation, breaks the fat-finger rule
    const r = h.ok({ kind: 'order.placeBatch', userId: 1, instrument: 'BTCUSDT', orders: [ok1, badPrice, tooOld, yesterday, market, wrongInstrument, dupOfFirst, rejected] });
    assert.ok(r.reply.ok);
    const batch = r.reply.batch!;
    assert.equal(batch.length, 8);
    assert.deepEqual(batch[0], { orderId: ok1.id, success: true });
    assert.equal(batch[1].success, false);
    assert.match(batch[1].failReason!, /Invalid price/);
    assert.deepEqual(batch[2], { orderId: tooOld.id, success: false, failReason: 'Invalid order ID date' });
    assert.deepEqual(batch[3], { orderId: yesterday.id, success: true });
    assert.deepEqual(batch[4], { orderId: market.id, success: false, failReason: 'Batch orders are limit orders' });
    assert.deepEqual(batch[5], { orderId: wrongInstrument.id, success: false, failReason: 'Instrument must be BTCUSDT' });
    assert.deepEqual(batch[6], { orderId: ok1.id, success: false, failReason: 'Order id already used' });
    assert.deepEqual(batch[7], { orderId: rejected.id, success: false, failReason: 'Invalid price' });
    assert.deepEqual(r.reply.orders!.map((o) => [o.id, o.status]), [[ok1.id, 'NEW'], [yesterday.id, 'NEW'], [rejected.id, 'REJECTED']]);
    assert.deepEqual(h.engine.openOrders(1).map((o) => o.id), [ok1.id, yesterday.id]);
  });

  it('the order-id date rule also applies to single creates', () => {
    const h = setup();
    const today = dayNumber(h.ts + 1);
    const r = h.place(1, { side: 'BUY', qty: '0.01', price: '99000', id: idWithDay(today - 2, 1) });
    assert.equal(err(r).message, 'Invalid order ID date');
    assert.equal(err(h.place(1, { side: 'BUY', qty: '0.01', price: '99000', id: idWithDay(today + 2, 2) })).message, 'Invalid order ID date');
    assert.equal(h.order(1, { side: 'BUY', qty: '0.01', price: '99000', id: idWithDay(today + 1, 3) }).status, 'NEW');
    assert.equal(orderIdPrefix(T0), String(today).padStart(5, '0'));
  });

  it('a batch holds 1 to 20 orders', () => {
    const h = setup();
    const twenty = Array.from({ length: 20 }, (_, i) => limit(h, 'BUY', '0.001', String(90000 + i * 10)));
    const r = h.ok({ kind: 'order.placeBatch', userId: 1, instrument: 'BTCUSDT', orders: twenty });
    assert.ok(r.reply.ok && r.reply.batch!.every((b) => b.success));
    assert.equal(h.engine.openOrders(1).length, 20);
    const seq = h.engine.seq;
    const r21 = h.run({ kind: 'order.placeBatch', userId: 1, instrument: 'BTCUSDT', orders: Array.from({ length: 21 }, (_, i) => limit(h, 'BUY', '0.001', String(91000 + i * 10))) });
    assert.deepEqual([err(r21).status, err(r21).code], [400, 'INVALID_BATCH']);
    assert.equal(err(h.run({ kind: 'order.placeBatch', userId: 1, instrument: 'BTCUSDT', orders: [] })).code, 'INVALID_BATCH');
    assert.equal(h.engine.seq, seq + 2);
    assert.equal(h.engine.openOrders(1).length, 20, 'a refused batch places nothing');
  });

  it('batch replace: 1 to 50 items, per-item results', () => {
    const h = setup();
    const a = h.order(1, { side: 'BUY', qty: '0.01', price: '99000' });
    const b = h.order(1, { side: 'BUY', qty: '0.01', price: '98000' });
    const eth = h.order(1, { side: 'BUY', qty: '0.1', price: '3400', instrument: 'ETHUSDT' });
    const unknown = h.newId();
    const r = h.ok({
      kind: 'order.replaceBatch', userId: 1, instrument: 'BTCUSDT', items: [
        { orderId: a.id, quantity: U('0.02'), limitPrice: U('99000') },
        { orderId: unknown, quantity: U('0.02'), limitPrice: U('99000') },
        { orderId: eth.id, quantity: U('0.2'), limitPrice: U('3400') },
        { orderId: b.id, quantity: U('0.005'), limitPrice: U('98100') },
      ],
    });
    assert.ok(r.reply.ok);
    assert.deepEqual(r.reply.batch, [
      { orderId: a.id, success: true },
      { orderId: unknown, success: false, failReason: 'Order not found' },
      { orderId: eth.id, success: false, failReason: `Order ${eth.id} is not on BTCUSDT` },
      { orderId: b.id, success: true },
    ]);
    assert.equal(h.engine.getOrder(1, a.id)!.quantity, U('0.02'));
    assert.equal(h.engine.getOrder(1, b.id)!.limitPrice, U('98100'));
    assert.equal(h.engine.getOrder(1, eth.id)!.quantity, U('0.1'));

    const fifty = Array.from({ length: 50 }, () => ({ orderId: a.id, quantity: U('0.02'), limitPrice: U('99000') }));
    const r50 = h.ok({ kind: 'order.replaceBatch', userId: 1, instrument: 'BTCUSDT', items: fifty });
    assert.equal(r50.reply.ok && r50.reply.batch!.length, 50);
    const r51 = h.run({ kind: 'order.replaceBatch', userId: 1, instrument: 'BTCUSDT', items: [...fifty, fifty[0]] });
    assert.deepEqual([err(r51).status, err(r51).code], [400, 'INVALID_BATCH']);
    assert.equal(err(h.run({ kind: 'order.replaceBatch', userId: 1, instrument: 'BTCUSDT', items: [] })).code, 'INVALID_BATCH');
  });
});

describe('client order ids', () => {
  it('a duplicate id is refused 409 for the same user (even after the order ended, any hex case) but free for another user', () => {
    const h = setup();
    const id = h.newId();
    const first = h.order(1, { side: 'BUY', qty: '0.01', price: '99000', id });
    assert.equal(first.status, 'NEW');
    const dup = h.place(1, { side: 'SELL', qty: '0.01', price: '101000', id });
    assert.deepEqual([err(dup).status, err(dup).code], [409, 'DUPLICATE_ORDER_ID']);
    const withLetters = h.newId().replace(/.$/, 'a');
    h.order(1, { side: 'BUY', qty: '0.01', price: '98000', id: withLetters });
    assert.equal(err(h.place(1, { side: 'BUY', qty: '0.01', price: '98000', id: withLetters.toUpperCase() })).status, 409);
    const other = h.order(2, { side: 'SELL', qty: '0.01', price: '101000', id });
    assert.equal(other.status, 'NEW');
    h.ok({ kind: 'order.cancel', userId: 1, orderId: id });
    assert.equal(err(h.place(1, { side: 'BUY', qty: '0.01', price: '99000', id })).code, 'DUPLICATE_ORDER_ID');
    // a REJECTED order also used its id
    const rid = h.newId();
    assert.equal(h.order(3, { side: 'BUY', qty: '0.01', price: '200000', id: rid }).status, 'REJECTED');
    assert.equal(err(h.place(3, { side: 'BUY', qty: '0.01', price: '99000', id: rid })).code, 'DUPLICATE_ORDER_ID');
  });
});

describe('self-match prevention', () => {
  it('with smp on, the taker cancels its own resting order instead of trading and then trades with others', () => {
    const h = setup();
    const own = h.order(1, { side: 'SELL', qty: '0.01', price: '100000' });
    const other = h.order(2, { side: 'SELL', qty: '0.01', price: '100000' });
    const r = h.place(1, { side: 'BUY', qty: '0.01', price: '100000', smp: { smp: true, smpId: '' } });
    assert.ok(r.reply.ok);
    const ownEv = orderEvent(r, own.id)!;
    assert.equal(ownEv.status, 'CANCELLED');
    assert.equal(ownEv.rejectedReason, 'Self-match prevention');
    assert.equal(ownEv.filledQuantity, 0);
    assert.equal(r.reply.order!.status, 'FILLED');
    const makers = evs(r, 'fill').filter((e) => e.fill.role === 'MAKER').map((e) => e.fill.orderId);
    assert.deepEqual(makers, [other.id]);
    assert.deepEqual(h.engine.openOrders(1), []);
  });

  it('with only own liquidity, nothing trades: the own order is cancelled and the taker rests', () => {
    const h = setup();
    const own = h.order(1, { side: 'SELL', qty: '0.01', price: '100000' });
    const r = h.place(1, { side: 'BUY', qty: '0.01', price: '100000', smp: { smp: true, smpId: '' } });
    assert.equal(evs(r, 'trade').length, 0);
    assert.equal(orderEvent(r, own.id)!.status, 'CANCELLED');
    assert.equal(r.reply.ok && r.reply.order!.status, 'NEW');
    assert.deepEqual(depth(h), { instrument: 'BTCUSDT', t: depth(h).t, asks: [], bids: [{ price: U('100000'), quantity: U('0.01') }] });
    assert.deepEqual(h.engine.positions(1), []);
  });

  it('a shared smpId prevents matching across users of the same group', () => {
    const h = setup();
    const peer = h.order(2, { side: 'SELL', qty: '0.01', price: '100000', smp: { smp: false, smpId: 'desk-A' } });
    const stranger = h.order(3, { side: 'SELL', qty: '0.01', price: '100000', smp: { smp: false, smpId: 'desk-B' } });
    const r = h.place(4, { side: 'BUY', qty: '0.01', price: '100000', smp: { smp: true, smpId: 'desk-A' } });
    assert.equal(orderEvent(r, peer.id)!.status, 'CANCELLED');
    assert.deepEqual(evs(r, 'fill').filter((e) => e.fill.role === 'MAKER').map((e) => e.fill.orderId), [stranger.id]);
  });

  it('without smp a user may trade with itself (both fills are the user\'s, the position nets to zero)', () => {
    const h = setup();
    h.order(1, { side: 'SELL', qty: '0.01', price: '100000' });
    const r = h.place(1, { side: 'BUY', qty: '0.01', price: '100000' });
    const fills = evs(r, 'fill').map((e) => e.fill);
    assert.deepEqual(fills.map((f) => [f.userId, f.role]).sort(), [[1, 'MAKER'], [1, 'TAKER']]);
    assert.deepEqual(h.engine.positions(1), []);
    assert.equal(h.engine.account(1).balance, M('1000000') - MAKER_FEE_1000 - TAKER_FEE_1000);
  });

  it('FOK counts only liquidity it may trade with (own orders are excluded) and then leaves them alone', () => {
    const h = setup();
    const own = h.order(1, { side: 'SELL', qty: '0.01', price: '100000' });
    h.order(2, { side: 'SELL', qty: '0.01', price: '100000' });
    const r = h.place(1, { side: 'BUY', qty: '0.02', price: '100000', tif: 'FOK', smp: { smp: true, smpId: '' } });
    assert.equal(r.reply.ok && r.reply.order!.status, 'EXPIRED');
    assert.equal(evs(r, 'trade').length, 0);
    assert.equal(h.engine.getOrder(1, own.id)?.status, 'NEW');
  });
});

describe('trading rules → REJECTED', () => {
  it('a halted matcher (state other than active) rejects orders; active again accepts them', () => {
    const h = setup();
    const r0 = h.ok({ kind: 'matcher.state', state: 'me-dead' });
    assert.deepEqual(evs(r0, 'matcher').map((e) => e.matcher.state), ['me-dead']);
    const o = h.order(1, { side: 'BUY', qty: '0.01', price: '99000' });
    assert.equal(o.status, 'REJECTED');
    assert.equal(o.rejectedReason, 'Trading is halted');
    assert.deepEqual(h.engine.openOrders(1), []);
    h.ok({ kind: 'matcher.state', state: 'active' });
    assert.equal(h.order(1, { side: 'BUY', qty: '0.01', price: '99000' }).status, 'NEW');
  });

  it('a halted matcher refuses replaces but still allows cancels', () => {
    const h = setup();
    const o = h.order(1, { side: 'BUY', qty: '0.01', price: '99000' });
    h.ok({ kind: 'matcher.state', state: 'request-status-fail' });
    const r = h.run({ kind: 'order.replace', userId: 1, replace: { orderId: o.id, quantity: U('0.02'), limitPrice: U('99000') } });
    assert.equal(err(r).code, 'TRADING_HALTED');
    assert.equal(orderEvent(h.ok({ kind: 'order.cancel', userId: 1, orderId: o.id }), o.id)!.status, 'CANCELLED');
  });

  for (const trading of ['none', 'restricted'] as const) {
    it(`instrument trading '${trading}' rejects orders on that instrument only`, () => {
      const h = setup();
      h.ok({ kind: 'instrument.trading', instrument: 'BTCUSDT', trading });
      assert.equal(h.engine.instrumentState('BTCUSDT')!.trading, trading);
      const o = h.order(1, { side: 'BUY', qty: '0.01', price: '99000' });
      assert.equal(o.status, 'REJECTED');
      assert.equal(o.rejectedReason, 'Trading is not allowed on BTCUSDT');
      assert.equal(h.order(1, { side: 'BUY', qty: '0.1', price: '3400', instrument: 'ETHUSDT' }).status, 'NEW');
    });
  }

  it("'onlyClose' accepts only orders that reduce the user's position", () => {
    const h = setup();
    h.order(2, { side: 'SELL', qty: '0.02', price: '100000' });
    h.order(1, { side: 'BUY', qty: '0.02', price: '100000' }); // user 1 long 0.02, user 2 short 0.02
    h.ok({ kind: 'instrument.trading', instrument: 'BTCUSDT', trading: 'onlyClose' });
    const add = h.order(1, { side: 'BUY', qty: '0.01', price: '99000' });
    assert.equal(add.status, 'REJECTED');
    assert.equal(add.rejectedReason, 'Only position-closing orders are allowed');
    const flip = h.order(1, { side: 'SELL', qty: '0.03', price: '101000' });
    assert.equal(flip.status, 'REJECTED');
    const noPosition = h.order(3, { side: 'SELL', qty: '0.01', price: '101000' });
    assert.equal(noPosition.status, 'REJECTED');
    const reduce = h.order(1, { side: 'SELL', qty: '0.01', price: '101000' });
    assert.equal(reduce.status, 'NEW');
    const shortReduce = h.order(2, { side: 'BUY', qty: '0.02', price: '101000' }); // closes user 2 and user 1's 0.01
    assert.equal(shortReduce.status, 'PARTIALLY_FILLED');
    assert.deepEqual(h.engine.positions(1).map((p) => p.quantity), [U('0.01')]);
  });

  it("'onlyClose': a cash-sized MARKET order closes at most the position, never reverses it", () => {
    const h = setup();
    h.order(2, { side: 'SELL', qty: '0.01', price: '100000' });
    h.order(1, { side: 'BUY', qty: '0.01', price: '100000' }); // user 1 long 0.01
    h.order(3, { side: 'BUY', qty: '1', price: '99900' });
    h.ok({ kind: 'instrument.trading', instrument: 'BTCUSDT', trading: 'onlyClose' });
    const o = h.order(1, { side: 'SELL', cash: '5000' }); // 5000 USDT would be 0.05 BTC
    assert.equal(o.filledQuantity, U('0.01'));
    assert.ok(o.filledValue <= M('5000'));
    assert.deepEqual(h.engine.positions(1), [], 'closed, not reversed into a short');
    assert.equal(h.order(1, { side: 'SELL', cash: '500' }).rejectedReason, 'Only position-closing orders are allowed');
  });

  it("insufficient margin → REJECTED 'Insufficient available balance' (IM + taker-fee headroom, exact boundary)", () => {
    const h = new Harness();
    // 0.01 × 100000 = 1000 volume at 10x: lock 100, fee headroom 1000 × 0.0005 = 0.5 → needs 100.5
    h.deposit(1, '100.49999999');
    const o = h.order(1, { side: 'BUY', qty: '0.01', price: '100000', leverage: 10 });
    assert.equal(o.status, 'REJECTED');
    assert.equal(o.rejectedReason, 'Insufficient available balance');
    assert.equal(h.engine.account(1).totalLock, 0n);
    h.deposit(1, '0.00000001');
    const ok = h.order(1, { side: 'BUY', qty: '0.01', price: '100000', leverage: 10 });
    assert.equal(ok.status, 'NEW');
    assert.equal(h.engine.account(1).availableBalance, M('0.5'));
    // a user who never deposited is rejected too
    assert.equal(h.order(7, { side: 'BUY', qty: '0.01', price: '99000' }).rejectedReason, 'Insufficient available balance');
  });

  it('leverage outside 1..maxLeverage (or not an integer) is refused', () => {
    const h = setup();
    for (const leverage of [0, 301, 2.5, -1]) {
      const r = h.place(1, { side: 'BUY', qty: '0.01', price: '99000', leverage });
      assert.deepEqual([err(r).status, err(r).code], [400, 'INVALID_LEVERAGE'], String(leverage));
    }
    assert.equal(h.order(1, { side: 'BUY', qty: '0.01', price: '99000', leverage: 300 }).status, 'NEW');
    assert.equal(h.order(1, { side: 'BUY', qty: '0.01', price: '99000', leverage: 1 }).status, 'NEW');
  });

  it('leverage tier cap: BTCUSDT allows 300x only up to 50,000 USDT notional', () => {
    const h = setup();
    const atCap = h.order(1, { side: 'BUY', qty: '0.5', price: '100000', leverage: 300 });
    assert.equal(atCap.status, 'NEW', '50,000 notional at 300x is allowed');
    const more = h.order(1, { side: 'BUY', qty: '0.0001', price: '99000', leverage: 300 });
    assert.equal(more.status, 'REJECTED', 'same-side open volume counts towards the cap');
    assert.equal(more.rejectedReason, 'Position size exceeds the maximum for 300x leverage');
    const over = h.order(2, { side: 'BUY', qty: '0.5001', price: '100000', leverage: 300 });
    assert.equal(over.status, 'REJECTED');
    assert.equal(over.rejectedReason, 'Position size exceeds the maximum for 300x leverage');
    // the position counts as well: fill user 3's 0.4 long at 300x, then 0.1 more is the limit
    h.ok({ kind: 'order.cancel', userId: 1, orderId: atCap.id });
    h.order(4, { side: 'SELL', qty: '0.5', price: '100000', leverage: 10 });
    h.order(3, { side: 'BUY', qty: '0.4', price: '100000', leverage: 300 });
    assert.equal(h.engine.positions(3)[0].quantity, U('0.4'));
    assert.equal(h.order(3, { side: 'BUY', qty: '0.1001', price: '100000', leverage: 300 }).status, 'REJECTED');
    assert.equal(h.order(3, { side: 'BUY', qty: '0.1', price: '99900', leverage: 300 }).status, 'NEW');
  });

  it('an order cannot move an existing position to a leverage its size does not allow (even a reducing one)', () => {
    const h = setup(2, '10000000');
    h.order(2, { side: 'SELL', qty: '1', price: '100000', leverage: 20 });
    h.order(1, { side: 'BUY', qty: '1', price: '100000', leverage: 20 }); // 100,000 notional at 20x
    const reducing = h.order(1, { side: 'SELL', qty: '0.01', price: '101000', leverage: 300 });
    assert.equal(reducing.status, 'REJECTED');
    assert.equal(reducing.rejectedReason, 'Position size exceeds the maximum for 300x leverage');
    assert.equal(h.engine.positions(1)[0].leverage, 20);
    assert.equal(h.order(1, { side: 'SELL', qty: '0.01', price: '101000', leverage: 100 }).status, 'NEW', '100,000 ≤ 250,000 at 100x');
    assert.equal(h.engine.positions(1)[0].leverage, 100);
  });

  it('higher tiers allow more notional at lower leverage (100x → 250,000; 20x → 10,000,000)', () => {
    const h = setup(3, '10000000');
    assert.equal(h.order(1, { side: 'BUY', qty: '0.6', price: '100000', leverage: 100 }).status, 'NEW', '60,000 at 100x');
    assert.equal(h.order(1, { side: 'BUY', qty: '1.9', price: '100000', leverage: 100 }).status, 'NEW', '250,000 total at 100x');
    assert.equal(h.order(1, { side: 'BUY', qty: '0.0001', price: '100000', leverage: 100 }).rejectedReason, 'Position size exceeds the maximum for 100x leverage');
    assert.equal(h.order(2, { side: 'SELL', qty: '3', price: '101000', leverage: 20 }).status, 'NEW', '303,000 at 20x');
    assert.equal(h.order(3, { side: 'BUY', qty: '2.5001', price: '100000', leverage: 100 }).status, 'REJECTED');
    assert.equal(h.order(3, { side: 'BUY', qty: '2.5', price: '99000', leverage: 50 }).status, 'NEW');
  });
});
