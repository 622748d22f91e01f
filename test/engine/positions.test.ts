/**
 * Netting positions, realized PnL, fees, leverage changes, position close, the available-balance formula
 * public clients use, withdrawals, and TpSl (attached, standalone, triggers, modify/cancel, cleanup).
 *
 * Every expected amount is computed by hand in the comments (USDT; M() converts to 1e-8 bigint units).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Command, TpSlInput } from '../../src/engine/commands.js';
import { restoreEngine } from '../../src/engine/engine.js';
import type { CommandResult, OrderView, PositionView, TpSlView } from '../../src/engine/records.js';
import { serializeState } from '../../src/engine/snapshot.js';
import { err, evs, Harness, M, mark, setup, U } from './harness.js';


function pos(h: Harness, userId: number, instrument = 'BTCUSDT'): PositionView | undefined {
  return h.engine.positions(userId).find((p) => p.instrument === instrument);
}

/** `maker` rests a SELL/BUY, `taker` takes it fully at the same price: the taker's position moves. */
function trade(h: Harness, taker: number, maker: number, side: 'BUY' | 'SELL', qty: string, price: string, leverage = 10, instrument = 'BTCUSDT'): CommandResult {
  const m = h.order(maker, { side: side === 'BUY' ? 'SELL' : 'BUY', qty, price, leverage: 10, instrument });
  assert.equal(m.status, 'NEW');
  const r = h.place(taker, { side, qty, price, leverage, instrument });
  assert.ok(r.reply.ok && r.reply.order!.status === 'FILLED', JSON.stringify(r.reply, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
  return r;
}

/** The final state of each TpSl the command changed (a fired one is published twice: triggered, then done). */
function tpslEvents(r: CommandResult): TpSlView[] {
  const last = new Map<string, TpSlView>();
  for (const e of evs(r, 'tpsl')) last.set(e.tpsl.id, e.tpsl);
  return [...last.values()];
}

function createTpSl(h: Harness, userId: number, t: TpSlInput, orderId: string | null = null, instrument = 'BTCUSDT'): CommandResult {
  return h.run({ kind: 'tpsl.create', userId, instrument, ...t, orderId });
}

describe('netting positions and realized PnL', () => {
  it('avgPrice after adds, realized PnL on partial reduce, full close and flip; fees accumulate', () => {
    const h = setup();
    // 0.01 @ 100000 (cost 1000, taker fee 0.5) + 0.03 @ 101000 (cost 3030, fee 1.515)
    trade(h, 1, 2, 'BUY', '0.01', '100000');
    trade(h, 1, 2, 'BUY', '0.03', '101000');
    let p = pos(h, 1)!;
    assert.equal(p.side, 'BUY');
    assert.equal(p.quantity, U('0.04'));
    assert.equal(p.costBasis, M('4030'));
    assert.equal(p.avgPrice, U('100750')); // 4030 / 0.04
    assert.equal(p.fee, M('2.015'));
    assert.equal(p.realizedPnL, 0n);
    const firstId = p.id;

    // partial reduce: sell 0.01 @ 102000 → releases 4030 × 1/4 = 1007.5 of cost; PnL = 1020 − 1007.5 = 12.5
    let r = trade(h, 1, 3, 'SELL', '0.01', '102000');
    const takerFill = evs(r, 'fill').find((e) => e.fill.userId === 1)!.fill;
    assert.equal(takerFill.realizedPnL, M('12.5'));
    assert.equal(takerFill.fee, M('0.51')); // 1020 × 0.0005
    const funding = evs(r, 'funding').filter((e) => e.funding.userId === 1).map((e) => [e.funding.reason, e.funding.quantity]);
    assert.deepEqual(funding, [['realized-pnl', M('12.5')], ['fee', -M('0.51')]]);
    p = pos(h, 1)!;
    assert.equal(p.id, firstId);
    assert.equal(p.quantity, U('0.03'));
    assert.equal(p.costBasis, M('3022.5'));
    assert.equal(p.avgPrice, U('100750'), 'a reduce does not move the average price');
    assert.equal(p.realizedPnL, M('12.5'));
    assert.equal(p.fee, M('2.525'));
    assert.equal(r.reply.ok && r.reply.order!.realizedPnL, M('12.5'));

    // full close: sell 0.03 @ 99000 → 2970 − 3022.5 = −52.5; fee 1.485
    r = trade(h, 1, 3, 'SELL', '0.03', '99000');
    const closed = evs(r, 'position').map((e) => e.position).find((x) => x.userId === 1)!;
    assert.equal(closed.id, firstId);
    assert.equal(closed.quantity, 0);
    assert.equal(closed.costBasis, 0n);
    assert.equal(closed.realizedPnL, M('-40')); // 12.5 − 52.5
    assert.equal(closed.fee, M('4.01')); // 2.015 + 0.51 + 1.485
    assert.equal(pos(h, 1), undefined, 'a closed position is no longer listed');
    assert.equal(h.engine.account(1).balance, M('1000000') - M('40') - M('4.01'));

    // a new position gets a new id; flip: long 0.02 @ 100000 (cost 2000), sell 0.05 @ 101000 (5050):
    // closing part 0.02 → 5050 × 2/5 = 2020, PnL 2020 − 2000 = 20; the rest opens short 0.03 at 3030
    trade(h, 1, 2, 'BUY', '0.02', '100000');
    assert.notEqual(pos(h, 1)!.id, firstId);
    r = trade(h, 1, 3, 'SELL', '0.05', '101000');
    assert.equal(evs(r, 'fill').find((e) => e.fill.userId === 1)!.fill.realizedPnL, M('20'));
    p = pos(h, 1)!;
    assert.equal(p.side, 'SELL');
    assert.equal(p.quantity, U('0.03'));
    assert.equal(p.costBasis, M('3030'));
    assert.equal(p.avgPrice, U('101000'));
    assert.equal(p.realizedPnL, M('20'));
    assert.equal(p.fee, M('1') + M('2.525')); // 2000 × 0.0005 + 5050 × 0.0005

    // short reduce: buy 0.01 @ 100000 → releases 3030 / 3 = 1010; PnL = 1010 − 1000 = 10
    r = trade(h, 1, 2, 'BUY', '0.01', '100000');
    assert.equal(evs(r, 'fill').find((e) => e.fill.userId === 1)!.fill.realizedPnL, M('10'));
    p = pos(h, 1)!;
    assert.equal(p.quantity, U('0.02'));
    assert.equal(p.costBasis, M('2020'));
    assert.equal(p.realizedPnL, M('30'));
  });

  it('realized PnL rounds the released cost half-up and loses nothing over a full close', () => {
    const h = setup();
    // cost = 10.00001 + 10.00003 + 10.00004 = 30.00008 USDT = 3_000_008_000 units
    trade(h, 1, 2, 'BUY', '0.0001', '100000.1');
    trade(h, 1, 2, 'BUY', '0.0001', '100000.3');
    trade(h, 1, 2, 'BUY', '0.0001', '100000.4');
    let p = pos(h, 1)!;
    assert.equal(p.costBasis, 3_000_008_000n);
    assert.equal(p.avgPrice, 10_000_026_666_667); // 100000.26666666|67 → half-up
    // sell 0.0001 @ 100000: released = 3_000_008_000 / 3 = 1_000_002_666.67 → 1_000_002_667 (half-up, not truncated)
    let r = trade(h, 1, 3, 'SELL', '0.0001', '100000');
    assert.equal(evs(r, 'fill').find((e) => e.fill.userId === 1)!.fill.realizedPnL, -2667n);
    p = pos(h, 1)!;
    assert.equal(p.costBasis, 2_000_005_333n);
    // close 0.0002 @ 100000: the rest of the cost is released: 2e9 − 2_000_005_333 = −5333
    r = trade(h, 1, 3, 'SELL', '0.0002', '100000');
    assert.equal(evs(r, 'fill').find((e) => e.fill.userId === 1)!.fill.realizedPnL, -5333n);
    const closed = evs(r, 'position').map((e) => e.position).find((x) => x.userId === 1)!;
    assert.equal(closed.realizedPnL, -8000n, 'Σ realized = proceeds − cost exactly');
  });

  it('open interest counts each side once and is reported on the instrument', () => {
    const h = setup();
    trade(h, 1, 2, 'BUY', '0.03', '100000');
    assert.equal(h.engine.instrumentState('BTCUSDT')!.openInterest, U('0.03'));
    trade(h, 3, 1, 'BUY', '0.01', '100000'); // user 1 sells 0.01 as maker to user 3
    assert.equal(h.engine.instrumentState('BTCUSDT')!.openInterest, U('0.03'));
    trade(h, 2, 3, 'BUY', '0.01', '100000'); // user 2 (short) buys back from user 3 (long)
    assert.equal(h.engine.instrumentState('BTCUSDT')!.openInterest, U('0.02'));
  });
});

describe('position leverage', () => {
  it('a change is refused when the margin does not allow it and accepted (exactly) when it does', () => {
    const h = new Harness();
    h.deposit(1, '1255');
    h.deposit(2, '1000000');
    // long 0.1 @ 100000 at 10x: cost 10000, IM 1000; taker fee 5 → balance 1250
    trade(h, 1, 2, 'BUY', '0.1', '100000', 10);
    mark(h, '100000');
    assert.equal(h.engine.account(1).availableBalance, M('250'));
    assert.equal(pos(h, 1)!.leverage, 10);

    // 7x: IM = ceil(10000 / 7) = 1428.57142858 > 1250 → refused, nothing changes
    let r = h.run({ kind: 'position.leverage', userId: 1, instrument: 'BTCUSDT', leverage: 7 });
    assert.deepEqual([err(r).status, err(r).code], [422, 'INSUFFICIENT_BALANCE']);
    assert.equal(r.events.length, 0);
    assert.equal(pos(h, 1)!.leverage, 10);
    // 8x: IM = 1250 = balance → available exactly 0 → accepted
    r = h.ok({ kind: 'position.leverage', userId: 1, instrument: 'BTCUSDT', leverage: 8 });
    assert.equal(r.reply.ok && r.reply.position!.leverage, 8);
    assert.deepEqual(evs(r, 'position').map((e) => e.position.leverage), [8]);
    assert.equal(h.engine.account(1).availableBalance, 0n);
    assert.equal(h.engine.account(1).positions[0].initialMargin, M('1250'));
    // up to 20x: IM 500 → available 750
    h.ok({ kind: 'position.leverage', userId: 1, instrument: 'BTCUSDT', leverage: 20 });
    assert.equal(h.engine.account(1).availableBalance, M('750'));
    assert.equal(pos(h, 1)!.leverage, 20);
    // 300x is allowed for a 10,000 notional position
    h.ok({ kind: 'position.leverage', userId: 1, instrument: 'BTCUSDT', leverage: 300 });
    // out of range
    for (const leverage of [0, 301, 1.5]) {
      assert.equal(err(h.run({ kind: 'position.leverage', userId: 1, instrument: 'BTCUSDT', leverage })).code, 'INVALID_LEVERAGE');
    }
  });

  it('a change above the tier allowed for the position size is refused (LEVERAGE_LIMIT)', () => {
    const h = setup(2, '10000000');
    trade(h, 1, 2, 'BUY', '0.6', '100000', 20); // 60,000 notional
    const r = h.run({ kind: 'position.leverage', userId: 1, instrument: 'BTCUSDT', leverage: 300 });
    assert.deepEqual([err(r).status, err(r).code], [422, 'LEVERAGE_LIMIT']);
    assert.equal(pos(h, 1)!.leverage, 20);
    h.ok({ kind: 'position.leverage', userId: 1, instrument: 'BTCUSDT', leverage: 100 }); // ≤ 250,000 at 100x
    assert.equal(pos(h, 1)!.leverage, 100);
  });

  it('a refused change leaves the state exactly as it was (also on an instrument the user never traded)', () => {
    const h = new Harness();
    h.deposit(1, '1100');
    h.deposit(2, '1000000');
    trade(h, 1, 2, 'BUY', '0.1', '100000', 10); // IM 1000, balance 1095
    mark(h, '90000'); // uPnL −1000 → available 1095 − 1000 − 1000 < 0
    const state = () => JSON.stringify({ ...serializeState(h.engine.s), seq: 0 });
    for (const [instrument, leverage] of [['ETHUSDT', 5], ['BTCUSDT', 5]] as const) {
      const before = state();
      const r = h.run({ kind: 'position.leverage', userId: 1, instrument, leverage });
      assert.equal(err(r).code, 'INSUFFICIENT_BALANCE', instrument);
      assert.equal(r.events.length, 0);
      assert.equal(state(), before, `refused ${instrument} leverage change changed the state`);
    }
  });

  it('a change also re-prices the margin of open orders', () => {
    const h = setup(1, '1000');
    h.order(1, { side: 'BUY', qty: '0.05', price: '100000', leverage: 10 }); // 5000 volume → 500
    assert.equal(h.engine.account(1).totalLock, M('500'));
    assert.equal(err(h.run({ kind: 'position.leverage', userId: 1, instrument: 'BTCUSDT', leverage: 4 })).code, 'INSUFFICIENT_BALANCE'); // 1250 > 1000
    h.ok({ kind: 'position.leverage', userId: 1, instrument: 'BTCUSDT', leverage: 5 }); // 1000 = 1000
    assert.equal(h.engine.account(1).totalLock, M('1000'));
    assert.equal(h.engine.account(1).availableBalance, 0n);
  });
});

describe('position.close', () => {
  it('closes part or all of the position with a reduce-only market order (quantity 0 = everything)', () => {
    const h = setup();
    mark(h, '100000');
    trade(h, 1, 2, 'BUY', '0.02', '100000');
    const bid = h.order(3, { side: 'BUY', qty: '0.05', price: '99000' });
    let r = h.ok({ kind: 'position.close', userId: 1, instrument: 'BTCUSDT', id: h.newId(), quantity: U('0.005'), leverage: 10 });
    assert.ok(r.reply.ok);
    const o = r.reply.order!;
    assert.deepEqual([o.type, o.side, o.timeInForce, o.status, o.filledQuantity], ['MARKET', 'SELL', 'IOC', 'FILLED', U('0.005')]);
    assert.equal(pos(h, 1)!.quantity, U('0.015'));
    // 0.005 closed at 99000 against an entry of 100000: −5
    assert.equal(pos(h, 1)!.realizedPnL, M('-5'));

    r = h.ok({ kind: 'position.close', userId: 1, instrument: 'BTCUSDT', id: h.newId(), quantity: 0, leverage: 10 });
    assert.equal(r.reply.ok && r.reply.order!.filledQuantity, U('0.015'));
    assert.equal(pos(h, 1), undefined);
    assert.equal(h.engine.getOrder(3, bid.id)!.unFilledQuantity, U('0.03'));

    const none = h.run({ kind: 'position.close', userId: 1, instrument: 'BTCUSDT', id: h.newId(), quantity: 0, leverage: 10 });
    assert.deepEqual([err(none).status, err(none).code], [409, 'NO_POSITION']);
  });

  it('never reverses the position: a quantity above the size closes only the size', () => {
    const h = setup();
    trade(h, 1, 2, 'BUY', '0.01', '100000');
    h.order(3, { side: 'BUY', qty: '1', price: '99500' });
    const r = h.ok({ kind: 'position.close', userId: 1, instrument: 'BTCUSDT', id: h.newId(), quantity: U('1'), leverage: 10 });
    assert.equal(r.reply.ok && r.reply.order!.filledQuantity, U('0.01'));
    assert.equal(pos(h, 1), undefined);
    assert.deepEqual(h.engine.positions(1), []);
  });

  it('closes a short with a BUY and needs no free margin', () => {
    const h = new Harness();
    h.deposit(1, '101');
    h.deposit(2, '1000000');
    trade(h, 1, 2, 'SELL', '0.01', '100000', 10); // IM 100, fee 0.5 → available 0.5
    h.order(2, { side: 'SELL', qty: '0.01', price: '100100' });
    h.ok({ kind: 'funds.withdraw', userId: 1, amount: M('0.5').toString(), transferId: 'w-all' });
    assert.equal(h.engine.account(1).availableBalance, 0n);
    const r = h.ok({ kind: 'position.close', userId: 1, instrument: 'BTCUSDT', id: h.newId(), quantity: 0, leverage: 10 });
    assert.equal(r.reply.ok && r.reply.order!.side, 'BUY');
    assert.equal(r.reply.ok && r.reply.order!.status, 'FILLED');
    assert.equal(pos(h, 1), undefined);
  });

  it('with no liquidity inside the slippage band it expires and the position stays', () => {
    const h = setup();
    mark(h, '100000');
    trade(h, 1, 2, 'BUY', '0.01', '100000');
    h.order(3, { side: 'BUY', qty: '0.01', price: '94000' }); // below mark − 5%
    const r = h.ok({ kind: 'position.close', userId: 1, instrument: 'BTCUSDT', id: h.newId(), quantity: 0, leverage: 10 });
    assert.equal(r.reply.ok && r.reply.order!.status, 'EXPIRED');
    assert.equal(pos(h, 1)!.quantity, U('0.01'));
  });
});

describe('available balance (wire-contract formula)', () => {
  it('balance − pending withdrawals + Σ negative uPnL − Σ max(IM + same/lev, |IM − opposite/lev|), never below 0', () => {
    const h = new Harness();
    h.deposit(1, '10000');
    h.deposit(2, '1000000');
    // long 0.1 BTC @ 100000 at 10x: cost 10000, IM 1000; taker fee 5 → balance 9995
    trade(h, 1, 2, 'BUY', '0.1', '100000', 10);
    // same side: BUY 0.05 @ 99000 = 4950 → 495; opposite: SELL 0.02 @ 101000 = 2020 → 202
    h.order(1, { side: 'BUY', qty: '0.05', price: '99000', leverage: 10 });
    h.order(1, { side: 'SELL', qty: '0.02', price: '101000', leverage: 10 });
    mark(h, '99500'); // uPnL = 0.1 × 99500 − 10000 = −50
    let a = h.engine.account(1);
    assert.equal(a.balance, M('9995'));
    assert.equal(a.pendingWithdrawals, 0n);
    assert.equal(a.negativeUnrealizedPnL, M('-50'));
    // lock = max(1000 + 495, |1000 − 202|) = 1495
    assert.equal(a.totalLock, M('1495'));
    assert.equal(a.availableBalance, M('9995') - M('50') - M('1495')); // 8450
    assert.deepEqual(a.positions, [{ instrument: 'BTCUSDT', side: 'BUY', volume: M('10000'), initialMargin: M('1000') }]);
    assert.deepEqual(a.openOrders, [
      { instrument: 'BTCUSDT', side: 'BUY', unFilledVolume: M('4950'), unFilledInitialMargin: M('495') },
      { instrument: 'BTCUSDT', side: 'SELL', unFilledVolume: M('2020'), unFilledInitialMargin: M('202') },
    ]);
    assert.equal(pos(h, 1)!.unRealizedPnL, M('-50'));

    // ETH short 1 @ 3500 at 5x: IM 700, fee 1.75 → balance 9993.25; mark 3400 → uPnL +100, which does not count
    trade(h, 1, 2, 'SELL', '1', '3500', 5, 'ETHUSDT');
    h.tick('ETHUSDT', '3400', '3400');
    a = h.engine.account(1);
    assert.equal(pos(h, 1, 'ETHUSDT')!.unRealizedPnL, M('100'));
    assert.equal(a.negativeUnrealizedPnL, M('-50'));
    assert.equal(a.totalLock, M('1495') + M('700'));
    assert.equal(a.availableBalance, M('9993.25') - M('50') - M('2195')); // 7748.25

    // a big SELL makes the opposite side dominate: sells 2020 + 50500 = 52520 → 5252; |1000 − 5252| = 4252 > 1495
    const big = h.order(1, { side: 'SELL', qty: '0.5', price: '101000', leverage: 10 });
    assert.equal(big.status, 'NEW');
    a = h.engine.account(1);
    assert.equal(a.totalLock, M('4252') + M('700'));
    assert.equal(a.availableBalance, M('9993.25') - M('50') - M('4952')); // 4991.25

    // a pending withdrawal comes off
    h.ok({ kind: 'funds.withdraw', userId: 1, amount: M('1000').toString(), transferId: 'w-1' });
    a = h.engine.account(1);
    assert.equal(a.pendingWithdrawals, M('1000'));
    assert.equal(a.availableBalance, M('3991.25'));

    // a crash of the mark makes it negative: reported as 0
    mark(h, '50000'); // uPnL −5000
    a = h.engine.account(1);
    assert.equal(a.negativeUnrealizedPnL, M('-5000'));
    assert.equal(a.availableBalance, 0n);
    // and nothing new can be opened or withdrawn
    assert.equal(h.order(1, { side: 'SELL', qty: '0.1', price: '3400', instrument: 'ETHUSDT', leverage: 5 }).rejectedReason, 'Insufficient available balance');
    assert.equal(err(h.run({ kind: 'funds.withdraw', userId: 1, amount: '1', transferId: 'w-2' })).code, 'INSUFFICIENT_BALANCE');
  });

  it('margin uses the ceiling of volume / leverage', () => {
    const h = setup(1, '1000');
    h.order(1, { side: 'BUY', qty: '0.0001', price: '99999.9', leverage: 3 }); // 9.99999 / 3 = 3.33333 → 3.33333000
    h.order(1, { side: 'BUY', qty: '0.0001', price: '99999.8', leverage: 3 }); // Σ 19.99997 / 3 = 6.66665666… → ceil
    const a = h.engine.account(1);
    assert.equal(a.openOrders[0].unFilledVolume, 1_999_997_000n);
    assert.equal(a.totalLock, 666_665_667n);
  });
});

describe('withdrawals', () => {
  it('lock funds while pending; a failed one returns exactly the locked amount; a successful one leaves', () => {
    const h = new Harness();
    h.deposit(1, '1000');
    let r = h.ok({ kind: 'funds.withdraw', userId: 1, amount: M('400').toString(), transferId: 'w1' });
    assert.equal(r.reply.ok && r.reply.transfer!.status, 'pending');
    assert.equal(h.engine.transfer('w1')!.status, 'pending');
    assert.deepEqual(evs(r, 'funding'), [], 'a pending withdrawal does not touch the balance');
    let a = h.engine.account(1);
    assert.equal(a.balance, M('1000'));
    assert.equal(a.pendingWithdrawals, M('400'));
    assert.equal(a.availableBalance, M('600'));

    // more than available
    r = h.run({ kind: 'funds.withdraw', userId: 1, amount: M('600.00000001').toString(), transferId: 'w-too-much' });
    assert.deepEqual([err(r).status, err(r).message], [422, 'Insufficient available balance']);
    // the locked funds cannot back an order either: 0.06 BTC at 10x needs 600 + 3 (fee headroom) > 600 free
    assert.equal(h.order(1, { side: 'BUY', qty: '0.06', price: '100000', leverage: 10 }).rejectedReason, 'Insufficient available balance');
    const held = h.engine.account(1).availableBalance;

    // failure: the lock goes away, the balance never moved
    r = h.ok({ kind: 'funds.withdraw.settle', transferId: 'w1', success: false });
    assert.equal(r.reply.ok && r.reply.transfer!.status, 'error');
    assert.deepEqual(evs(r, 'funding'), []);
    a = h.engine.account(1);
    assert.equal(a.pendingWithdrawals, 0n);
    assert.equal(a.balance, M('1000'));
    assert.equal(a.availableBalance - held, M('400'), 'exactly the locked amount comes back');
    assert.equal(h.engine.transfer('w1'), undefined);
    assert.equal(err(h.run({ kind: 'funds.withdraw.settle', transferId: 'w1', success: true })).status, 404);

    // success: the money leaves
    h.ok({ kind: 'funds.withdraw', userId: 1, amount: M('300').toString(), transferId: 'w2' });
    r = h.ok({ kind: 'funds.withdraw.settle', transferId: 'w2', success: true });
    assert.equal(r.reply.ok && r.reply.transfer!.status, 'done');
    assert.deepEqual(evs(r, 'funding').map((e) => [e.funding.reason, e.funding.quantity, e.funding.balance]), [['withdraw', -M('300'), M('700')]]);
    assert.deepEqual(evs(r, 'transfer').map((e) => e.transfer.status), ['done']);
    a = h.engine.account(1);
    assert.equal(a.balance, M('700'));
    assert.equal(a.availableBalance, M('700'));
    assert.equal(h.engine.ledger().withdrawals, M('300'));

    // ids are single-use (deposits and withdrawals share them)
    assert.equal(err(h.run({ kind: 'funds.withdraw', userId: 1, amount: '1', transferId: 'w2' })).status, 409);
    assert.equal(err(h.run({ kind: 'funds.deposit', userId: 1, amount: '1', transferId: 'w1' })).status, 409);
    // bad input
    assert.equal(err(h.run({ kind: 'funds.withdraw', userId: 1, amount: '0', transferId: 'w3' })).status, 400);
    assert.equal(err(h.run({ kind: 'funds.withdraw', userId: 1, amount: '1.5', transferId: 'w4' })).status, 400);
    assert.equal(err(h.run({ kind: 'funds.withdraw', userId: 99, amount: '1', transferId: 'w5' })).status, 422);
  });

  it('the whole available amount can be withdrawn, not one unit more', () => {
    const h = setup(1, '1000');
    h.order(1, { side: 'BUY', qty: '0.01', price: '100000', leverage: 10 }); // lock 100
    assert.equal(err(h.run({ kind: 'funds.withdraw', userId: 1, amount: (M('900') + 1n).toString(), transferId: 'a' })).code, 'INSUFFICIENT_BALANCE');
    h.ok({ kind: 'funds.withdraw', userId: 1, amount: M('900').toString(), transferId: 'b' });
    assert.equal(h.engine.account(1).availableBalance, 0n);
  });
});

describe('TpSl', () => {
  const TP_SELL_110K: TpSlInput = { type: 'take-profit', side: 'SELL', quantity: 0, price: U('110000') };
  const SL_SELL_95K: TpSlInput = { type: 'stop-loss', side: 'SELL', quantity: 0, price: U('95000') };

  it('attached at creation: waitOrder → active on fill → the stop-loss fires on the mark, a tpsl MARKET order closes the position', () => {
    const h = setup();
    mark(h, '100000');
    let r = h.place(1, { side: 'BUY', qty: '0.01', price: '100000', tpsl: [TP_SELL_110K, SL_SELL_95K] });
    assert.ok(r.reply.ok);
    const order = r.reply.order!;
    assert.equal(order.status, 'NEW');
    let ts = tpslEvents(r);
    assert.deepEqual(ts.map((t) => [t.type, t.status, t.orderId]), [['take-profit', 'waitOrder', order.id], ['stop-loss', 'waitOrder', order.id]]);
    const [tpId, slId] = ts.map((t) => t.id);
    assert.deepEqual(h.engine.tpsls(1).map((t) => t.status), ['waitOrder', 'waitOrder']);

    r = h.place(2, { side: 'SELL', qty: '0.01', price: '100000' });
    ts = tpslEvents(r);
    assert.deepEqual(ts.map((t) => [t.id, t.status]).sort(), [[tpId, 'active'], [slId, 'active']].sort());

    h.order(3, { side: 'BUY', qty: '0.05', price: '94500' });
    r = mark(h, '95000.1');
    assert.deepEqual(tpslEvents(r), [], 'not crossed yet');

    r = mark(h, '95000');
    ts = tpslEvents(r);
    const sl = ts.find((t) => t.id === slId)!;
    const tp = ts.find((t) => t.id === tpId)!;
    assert.equal(sl.status, 'done');
    assert.ok(sl.triggerOrder);
    assert.equal(sl.triggeredQuantity, U('0.01'));
    // Published as the spec's states: triggered, then done, with strictly increasing updatedAt.
    const slSteps = evs(r, 'tpsl').map((e) => e.tpsl).filter((t) => t.id === slId);
    assert.deepEqual(slSteps.map((t) => t.status), ['triggered', 'done']);
    assert.ok(slSteps[1].updatedAt > slSteps[0].updatedAt);
    assert.equal(tp.status, 'cancelled');
    assert.equal(tp.cancelledReason, 'Position closed');
    const closing = evs(r, 'order').map((e) => e.order).find((o) => o.id === sl.triggerOrder)!;
    assert.deepEqual([closing.type, closing.group, closing.side, closing.status, closing.filledQuantity, closing.userId], ['MARKET', 'tpsl', 'SELL', 'FILLED', U('0.01'), 1]);
    const fill = evs(r, 'fill').find((e) => e.fill.orderId === closing.id)!.fill;
    assert.equal(fill.price, U('94500'));
    assert.equal(fill.realizedPnL, M('-55')); // 945 − 1000
    assert.equal(pos(h, 1), undefined);
    assert.deepEqual(h.engine.tpsls(1), []);
  });

  it('fires only when the mark crosses in the right direction (long: TP ≥, SL ≤; short: TP ≤, SL ≥)', () => {
    const h = setup();
    mark(h, '100000');
    trade(h, 1, 2, 'BUY', '0.01', '100000'); // user 1 long, user 2 short
    const tp1 = createTpSl(h, 1, TP_SELL_110K);
    const sl1 = createTpSl(h, 1, SL_SELL_95K);
    const tp2 = createTpSl(h, 2, { type: 'take-profit', side: 'BUY', quantity: 0, price: U('90000') });
    const sl2 = createTpSl(h, 2, { type: 'stop-loss', side: 'BUY', quantity: 0, price: U('105000') });
    for (const r of [tp1, sl1, tp2, sl2]) assert.equal(r.reply.ok && r.reply.tpsl!.status, 'active');
    const id = (r: CommandResult) => (r.reply.ok ? r.reply.tpsl!.id : '');
    h.order(4, { side: 'SELL', qty: '0.01', price: '105500' });

    assert.deepEqual(tpslEvents(mark(h, '104999.9')), []);
    // the short's stop-loss fires at mark ≥ 105000 (a BUY closes it, at the ask 105500)
    let r = mark(h, '105000');
    let ts = tpslEvents(r);
    assert.deepEqual(ts.map((t) => [t.id, t.status]).sort(), [[id(sl2), 'done'], [id(tp2), 'cancelled']].sort());
    assert.equal(pos(h, 2), undefined);
    assert.equal(pos(h, 1)!.quantity, U('0.01'), 'the long is untouched');

    h.order(3, { side: 'BUY', qty: '0.01', price: '108000' });
    assert.deepEqual(tpslEvents(mark(h, '109999.9')), []);
    // the long's take-profit fires at mark ≥ 110000
    r = mark(h, '110000');
    ts = tpslEvents(r);
    assert.deepEqual(ts.map((t) => [t.id, t.status]).sort(), [[id(sl1), 'cancelled'], [id(tp1), 'done']].sort());
    const fill = evs(r, 'fill').find((e) => e.fill.userId === 1)!.fill;
    assert.deepEqual([fill.side, fill.price, fill.realizedPnL], ['SELL', U('108000'), M('80')]);
    assert.equal(pos(h, 1), undefined);
  });

  it('a short\'s take-profit fires when the mark falls to its price, not when it rises', () => {
    const h = setup();
    mark(h, '100000');
    trade(h, 1, 2, 'SELL', '0.01', '100000');
    const tp = createTpSl(h, 1, { type: 'take-profit', side: 'BUY', quantity: 0, price: U('95000') });
    assert.ok(tp.reply.ok);
    h.order(3, { side: 'SELL', qty: '0.01', price: '95500' });
    assert.deepEqual(tpslEvents(mark(h, '108000')), []);
    assert.deepEqual(tpslEvents(mark(h, '95000.1')), []);
    const r = mark(h, '95000');
    assert.equal(tpslEvents(r)[0].status, 'done');
    assert.equal(evs(r, 'fill').find((e) => e.fill.userId === 1)!.fill.realizedPnL, M('45')); // 1000 − 955
  });

  it('standalone creation is checked against the position and the mark', () => {
    const h = setup();
    mark(h, '100000');
    assert.deepEqual([err(createTpSl(h, 1, TP_SELL_110K)).status, err(createTpSl(h, 1, TP_SELL_110K)).code], [409, 'NO_POSITION']);
    trade(h, 1, 2, 'BUY', '0.01', '100000');
    assert.equal(err(createTpSl(h, 1, { ...TP_SELL_110K, side: 'BUY' })).code, 'INVALID_TPSL'); // does not close a long
    assert.match(err(createTpSl(h, 1, { ...TP_SELL_110K, price: U('99000') })).message, /already crossed/);
    assert.match(err(createTpSl(h, 1, { ...SL_SELL_95K, price: U('100000') })).message, /already crossed/);
    assert.equal(err(createTpSl(h, 1, { ...TP_SELL_110K, price: U('110000.05') })).code, 'INVALID_TPSL');
    assert.equal(err(createTpSl(h, 1, { ...TP_SELL_110K, quantity: U('0.00005') })).code, 'INVALID_TPSL');
    assert.equal(createTpSl(h, 1, TP_SELL_110K).reply.ok, true);
    assert.equal(h.engine.tpsls(1).length, 1);
    assert.deepEqual(h.engine.tpsls(2), []);
  });

  it('cancel: the TpSl ends (cancelled) and never fires; a second cancel is 404', () => {
    const h = setup();
    mark(h, '100000');
    trade(h, 1, 2, 'BUY', '0.01', '100000');
    const c = createTpSl(h, 1, SL_SELL_95K);
    const id = c.reply.ok ? c.reply.tpsl!.id : '';
    assert.equal(err(h.run({ kind: 'tpsl.cancel', userId: 2, instrument: 'BTCUSDT', id })).status, 404, 'only the owner');
    const r = h.ok({ kind: 'tpsl.cancel', userId: 1, instrument: 'BTCUSDT', id });
    assert.deepEqual(tpslEvents(r).map((t) => [t.id, t.status, t.cancelledReason]), [[id, 'cancelled', 'Cancelled by user']]);
    assert.deepEqual(h.engine.tpsls(1), []);
    assert.equal(err(h.run({ kind: 'tpsl.cancel', userId: 1, instrument: 'BTCUSDT', id })).status, 404);
    h.order(3, { side: 'BUY', qty: '0.01', price: '94000' });
    const t = mark(h, '94000');
    assert.deepEqual(tpslEvents(t), []);
    assert.equal(pos(h, 1)!.quantity, U('0.01'));
  });

  it('modify changes price and quantity (a partial TpSl closes only its quantity); the side cannot change', () => {
    const h = setup();
    mark(h, '100000');
    trade(h, 1, 2, 'BUY', '0.01', '100000');
    const c = createTpSl(h, 1, TP_SELL_110K);
    const id = c.reply.ok ? c.reply.tpsl!.id : '';
    const bad = h.run({ kind: 'tpsl.modify', userId: 1, instrument: 'BTCUSDT', id, type: 'take-profit', side: 'BUY', quantity: 0, price: U('105000') });
    assert.equal(err(bad).code, 'INVALID_TPSL');
    const r = h.ok({ kind: 'tpsl.modify', userId: 1, instrument: 'BTCUSDT', id, type: 'take-profit', side: 'SELL', quantity: U('0.004'), price: U('105000') });
    assert.ok(r.reply.ok);
    assert.deepEqual([r.reply.tpsl!.price, r.reply.tpsl!.quantity, r.reply.tpsl!.status], [U('105000'), U('0.004'), 'active']);
    assert.deepEqual(tpslEvents(r).map((t) => t.price), [U('105000')]);
    h.order(3, { side: 'BUY', qty: '0.05', price: '104000' });
    assert.deepEqual(tpslEvents(mark(h, '104999.9')), []);
    const fired = mark(h, '105000');
    const t = tpslEvents(fired)[0];
    assert.equal(t.status, 'done');
    assert.equal(t.triggeredQuantity, U('0.004'));
    assert.equal(pos(h, 1)!.quantity, U('0.006'));
    assert.equal(err(h.run({ kind: 'tpsl.modify', userId: 1, instrument: 'BTCUSDT', id, type: 'take-profit', side: 'SELL', quantity: 0, price: U('106000') })).status, 404, 'a finished TpSl cannot be modified');
  });

  it('is cancelled when its position is closed (by position.close or by a trade)', () => {
    const h = setup();
    mark(h, '100000');
    trade(h, 1, 2, 'BUY', '0.01', '100000');
    const c = createTpSl(h, 1, TP_SELL_110K);
    const id = c.reply.ok ? c.reply.tpsl!.id : '';
    h.order(3, { side: 'BUY', qty: '0.01', price: '99900' });
    let r = h.ok({ kind: 'position.close', userId: 1, instrument: 'BTCUSDT', id: h.newId(), quantity: 0, leverage: 10 });
    assert.deepEqual(tpslEvents(r).map((t) => [t.id, t.status, t.cancelledReason]), [[id, 'cancelled', 'Position closed']]);
    assert.deepEqual(h.engine.tpsls(1), []);

    // by a plain trade that closes it
    trade(h, 1, 2, 'BUY', '0.01', '100000');
    createTpSl(h, 1, SL_SELL_95K);
    r = trade(h, 1, 3, 'SELL', '0.01', '100000');
    assert.deepEqual(tpslEvents(r).map((t) => [t.status, t.cancelledReason]), [['cancelled', 'Position closed']]);
    assert.deepEqual(h.engine.tpsls(1), []);
  });

  it('a TpSl waiting on an order that ends without a fill is cancelled with it', () => {
    const h = setup();
    const r = h.place(1, { side: 'BUY', qty: '0.01', price: '99000', tpsl: [SL_SELL_95K] });
    const orderId = r.reply.ok ? r.reply.order!.id : '';
    const c = h.ok({ kind: 'order.cancel', userId: 1, orderId });
    assert.deepEqual(tpslEvents(c).map((t) => [t.status, t.cancelledReason]), [['cancelled', 'Order cancelled without a fill']]);
    assert.deepEqual(h.engine.tpsls(1), []);
    // a rejected order's TpSl never becomes active either
    const rej = h.place(1, { side: 'BUY', qty: '0.01', price: '200000', tpsl: [SL_SELL_95K] });
    assert.equal(rej.reply.ok && rej.reply.order!.status, 'REJECTED');
    assert.deepEqual(tpslEvents(rej).map((t) => t.status), ['cancelled']);
    assert.deepEqual(h.engine.tpsls(1), []);
  });

  it('a TpSl attached to an order whose fill closes the position does not stay waiting (taker and maker alike)', () => {
    const h = setup();
    mark(h, '100000');
    const slBuy: TpSlInput = { type: 'stop-loss', side: 'BUY', quantity: 0, price: U('105000') };
    // taker: user 1 long 0.01 sells 0.01 into a bid, with a TpSl attached to that sell
    trade(h, 1, 2, 'BUY', '0.01', '100000');
    h.order(3, { side: 'BUY', qty: '0.01', price: '100000' });
    let r = h.place(1, { side: 'SELL', qty: '0.01', price: '100000', tpsl: [slBuy] });
    assert.equal(r.reply.ok && r.reply.order!.status, 'FILLED');
    assert.equal(pos(h, 1), undefined);
    const taker = h.engine.tpsls(1);
    assert.equal(taker.length, 1);
    assert.notEqual(taker[0].status, 'waitOrder', 'the order is finished: nothing is left to wait for');
    // maker: the same through a resting sell
    trade(h, 4, 2, 'BUY', '0.01', '100000');
    const rest = h.order(4, { side: 'SELL', qty: '0.01', price: '100000', tpsl: [slBuy] });
    r = h.place(3, { side: 'BUY', qty: '0.01', price: '100000' });
    assert.equal(tpslEvents(r).find((t) => t.orderId === rest.id)?.status, taker[0].status, 'same outcome as the taker path');
    // with no position to protect, the trigger cancels them instead of trading
    r = mark(h, '105000');
    assert.deepEqual(tpslEvents(r).map((t) => [t.status, t.cancelledReason]), [['cancelled', 'No position to close'], ['cancelled', 'No position to close']]);
    assert.equal(evs(r, 'order').length, 0);
    assert.deepEqual([...h.engine.tpsls(1), ...h.engine.tpsls(4)], []);
  });

  it('among many users\' TpSl, a fill activates and a cancel ends only those waiting on that order, also after a snapshot restore', () => {
    const h = setup(6);
    mark(h, '100000');
    // users 1..5 each rest two bids with a stop-loss each; user 2 also has one on a position-less order of ETH
    const bids = new Map<number, OrderView[]>();
    for (let u = 1; u <= 5; u++) bids.set(u, [1, 2].map((k) => h.order(u, { side: 'BUY', qty: '0.01', price: String(99000 - k * 100), tpsl: [SL_SELL_95K] })));
    assert.equal(h.order(2, { side: 'BUY', qty: '0.1', price: '3400', instrument: 'ETHUSDT', tpsl: [{ type: 'stop-loss', side: 'SELL', quantity: 0, price: U('3000') }] }).status, 'NEW');
    const restored = restoreEngine(JSON.parse(JSON.stringify(h.engine.snapshot())));
    restored.checkInvariants(); // the TpSl index rebuilt from the restored state agrees with it
    const sell: Command = { kind: 'order.place', ts: h.ts + 1, userId: 6, order: {
      id: h.newId(), instrument: 'BTCUSDT', side: 'SELL', type: 'LIMIT', timeInForce: 'IOC', leverage: 10, quantity: U('0.01'), limitPrice: U('98900'),
    } };
    for (const engine of [h.engine, restored]) {
      const waiting = (u: number) => engine.tpsls(u).filter((t) => t.status === 'waitOrder').map((t) => t.orderId);
      assert.equal(engine.tpsls(2).length, 3);
      // user 6 sells into the best bid only: the TpSl on that order becomes active, nobody else's changes
      const fill = engine.apply(structuredClone(sell));
      const best = [...bids.values()].flat().filter((o) => o.limitPrice === U('98900'))[0]; // time priority: user 1's
      assert.deepEqual(tpslEvents(fill).map((t) => [t.orderId, t.status]), [[best.id, 'active']]);
      assert.deepEqual(waiting(best.userId), [bids.get(best.userId)![1].id]);
      assert.deepEqual(waiting(3), bids.get(3)!.map((o) => o.id));
      // cancelling user 4's second bid cancels its TpSl and no other
      const cancel = engine.apply({ kind: 'order.cancel', ts: h.ts + 2, userId: 4, orderId: bids.get(4)![1].id });
      assert.deepEqual(tpslEvents(cancel).map((t) => [t.orderId, t.status]), [[bids.get(4)![1].id, 'cancelled']]);
      assert.deepEqual(waiting(4), [bids.get(4)![0].id]);
      engine.checkInvariants();
    }
    assert.equal(restored.stateHash(), h.engine.stateHash());
  });

  it('tpsl.create with an orderId waits on a live order; a TpSl on the order\'s own side is refused', () => {
    const h = setup();
    mark(h, '100000');
    const o = h.order(1, { side: 'BUY', qty: '0.01', price: '100000' });
    assert.equal(err(createTpSl(h, 1, { ...SL_SELL_95K, side: 'BUY' }, o.id)).code, 'INVALID_TPSL');
    assert.equal(err(createTpSl(h, 2, SL_SELL_95K, o.id)).status, 404, 'another user\'s order');
    const c = createTpSl(h, 1, SL_SELL_95K, o.id);
    assert.equal(c.reply.ok && c.reply.tpsl!.status, 'waitOrder');
    assert.equal(c.reply.ok && c.reply.tpsl!.orderId, o.id);
    const f = h.place(2, { side: 'SELL', qty: '0.01', price: '100000' });
    assert.deepEqual(tpslEvents(f).map((t) => t.status), ['active']);
  });

  it('a triggered TpSl while trading is halted produces a REJECTED tpsl order and leaves the position', () => {
    const h = setup();
    mark(h, '100000');
    trade(h, 1, 2, 'BUY', '0.01', '100000');
    createTpSl(h, 1, SL_SELL_95K);
    h.order(3, { side: 'BUY', qty: '0.01', price: '94000' });
    h.ok({ kind: 'matcher.state', state: 'me-dead' });
    const r = mark(h, '94500');
    const t = tpslEvents(r)[0];
    assert.equal(t.status, 'done');
    assert.equal(t.triggeredQuantity, 0);
    const o = evs(r, 'order').map((e) => e.order).find((x) => x.id === t.triggerOrder)!;
    assert.deepEqual([o.group, o.status, o.rejectedReason], ['tpsl', 'REJECTED', 'Trading is halted']);
    assert.equal(pos(h, 1)!.quantity, U('0.01'));
  });
});
