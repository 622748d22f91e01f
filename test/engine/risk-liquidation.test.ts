// Liquidation, reserve fund and ADL scenarios: marginCall warnings, liquidation through the book at no worse
// than the bankruptcy price, fee to the reserve fund, loss beyond collateral paid by the fund, a cascade that
// exhausts the fund and auto-deleverages the most profitable, most leveraged opposite positions.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { restoreEngine } from '../../src/engine/engine.js';
import type { CommandResult, EngineEvent, OrderView } from '../../src/engine/records.js';
import { Harness, M, U } from './harness.js';

const orders = (r: CommandResult, f: (o: OrderView) => boolean = () => true) =>
  r.events.flatMap((e) => (e.type === 'order' && f(e.order) ? [e.order] : []));
const accountEvents = (r: CommandResult) =>
  r.events.flatMap((e) => (e.type === 'account' ? [e] : [])) as Array<Extract<EngineEvent, { type: 'account' }>>;

function conserved(h: Harness): void {
  const l = h.engine.ledger();
  assert.equal(l.balances + l.fees + l.reserveFund - l.openCost, l.deposits - l.withdrawals, 'money conserved to the last unit');
}

/** User `u` goes long `qty` BTC at 100000 with `lev`x against maker 9's ask. */
function openLong(h: Harness, u: number, qty: string, lev: number, deposit: string): void {
  h.deposit(u, deposit);
  h.order(9, { side: 'SELL', qty, price: '100000', leverage: 1 });
  h.order(u, { side: 'BUY', qty, price: '100000', leverage: lev });
}

function withMaker(): Harness {
  const h = new Harness();
  h.deposit(9, '1000000');
  return h;
}

describe('margin call and liquidation', () => {
  it('marginCall turns on near maintenance and off again (AccountEvent, account view)', () => {
    const h = withMaker();
    openLong(h, 1, '0.1', 50, '300'); // IM 200; equity 295 after the taker fee
    assert.equal(h.engine.account(1).marginCall, false);
    // maintenance 0.4% × ~9.8k ≈ 39; marginCall at maintenance ≥ 80% of equity → equity ≤ ~49 → price ≈ 97 540
    const r = h.tick('BTCUSDT', '97500', '97500');
    assert.deepEqual(accountEvents(r).map((e) => [e.userId, e.marginCall]), [[1, true]]);
    assert.equal(h.engine.account(1).marginCall, true);
    assert.equal(h.engine.positions(1).length, 1, 'not liquidated yet: equity 45 > maintenance 39');
    const back = h.tick('BTCUSDT', '99000', '99000');
    assert.deepEqual(accountEvents(back).map((e) => [e.userId, e.marginCall]), [[1, false]]);
  });

  it('at breach: orders and TpSl cancelled, position closed in the book by a liquidation order no worse than bankruptcy', () => {
    const h = withMaker();
    openLong(h, 1, '0.1', 50, '300');
    const tp = h.ok({ kind: 'tpsl.create', userId: 1, instrument: 'BTCUSDT', type: 'take-profit', side: 'SELL', quantity: U('0.1'), price: U('110000'), orderId: null });
    assert.ok(tp.reply.ok);
    const resting = h.order(1, { side: 'BUY', qty: '0.001', price: '95000', leverage: 50, tpsl: [{ type: 'take-profit', side: 'SELL', quantity: 0, price: U('120000') }] });
    const pb = h.engine.positions(1)[0].bankruptcyPrice!;
    // cross margin: (cost − equity without uPnL) / size = (10000 − 295) / 0.1
    assert.equal(pb, U('97050'));
    h.deposit(3, '100000');
    h.order(3, { side: 'BUY', qty: '0.2', price: '97300', leverage: 10 });
    const fundBefore = h.engine.ledger().reserveFund;
    const r = h.tick('BTCUSDT', '97400', '97400'); // equity 35 ≤ maintenance ≈ 39
    const liq = orders(r, (o) => o.group === 'liquidation');
    assert.equal(liq.length, 1);
    assert.equal(liq[0].side, 'SELL');
    assert.equal(liq[0].filledQuantity, U('0.1'));
    assert.ok(liq[0].limitPrice >= pb, 'limit no worse than the bankruptcy price');
    const cancelled = orders(r, (o) => o.id === resting.id)[0];
    assert.equal(cancelled.status, 'CANCELLED');
    assert.equal(cancelled.rejectedReason, 'Liquidation');
    const tpsls = r.events.flatMap((e) => (e.type === 'tpsl' ? [e.tpsl] : []));
    assert.deepEqual(tpsls.map((t) => [t.status, t.cancelledReason]), [['cancelled', 'Liquidation'], ['cancelled', 'Liquidation']], 'active and waiting TpSl');
    assert.equal(h.engine.positions(1).length, 0);
    assert.equal(h.engine.openOrders(1).length, 0);
    assert.equal(h.engine.tpsls(1).length, 0);
    // Fee 0.75% of 9730 = 72.975 to the fund; the account's loss beyond its collateral (−47.975) paid back out of it.
    const fees = r.events.flatMap((e) => (e.type === 'orderFee' && e.fee.userId === 1 ? [e.fee] : []));
    assert.deepEqual(fees.map((f) => [f.type, f.quantity]), [['liquidation', M('72.975')]]);
    assert.equal(h.engine.account(1).balance, 0n);
    assert.equal(h.engine.ledger().reserveFund - fundBefore, M('25'));
    const covered = r.events.find((e) => e.type === 'funding' && e.funding.reason === 'reserve-fund');
    assert.ok(covered && covered.type === 'funding' && covered.funding.quantity === M('47.975'));
    assert.equal(h.engine.account(1).marginCall, false);
    conserved(h);
  });

  it('a fill at a bad price is checked at once: the maker is liquidated in the same command', () => {
    const h = withMaker();
    h.deposit(1, '50');
    h.order(1, { side: 'BUY', qty: '0.01', price: '100000', leverage: 100 }); // rests, IM 10
    h.tick('BTCUSDT', '94000', '94000'); // no position yet: nothing to check
    h.deposit(3, '100000');
    h.order(3, { side: 'BUY', qty: '0.01', price: '95000', leverage: 10 }); // liquidity for the liquidation
    const r = h.run({ kind: 'order.place', userId: 9, order: { id: h.newId(), instrument: 'BTCUSDT', side: 'SELL', type: 'LIMIT', timeInForce: 'IOC', leverage: 10, quantity: U('0.01'), limitPrice: U('99000') } });
    assert.ok(r.reply.ok);
    assert.equal(h.engine.positions(1).length, 0, 'bought at 100000 with mark 94000 and 50 USDT: liquidated');
    assert.equal(orders(r, (o) => o.group === 'liquidation').length, 1);
    assert.ok(h.engine.account(1).balance >= 0n);
    conserved(h);
  });

  it('no liquidation while the matcher is halted (marginCall only); it runs at the next check after resuming', () => {
    const h = withMaker();
    openLong(h, 1, '0.1', 50, '300');
    h.deposit(3, '100000');
    h.order(3, { side: 'BUY', qty: '0.2', price: '97300', leverage: 10 });
    h.ok({ kind: 'matcher.state', state: 'me-dead' });
    const r = h.tick('BTCUSDT', '97400', '97400');
    assert.equal(h.engine.positions(1).length, 1);
    assert.deepEqual(accountEvents(r).map((e) => e.marginCall), [true]);
    h.ok({ kind: 'matcher.state', state: 'active' });
    h.tick('BTCUSDT', '97400', '97400');
    assert.equal(h.engine.positions(1).length, 0);
    conserved(h);
  });
});

describe('reserve fund and ADL', () => {
  it('a cascade exhausts the reserve fund, then auto-deleverages the best-ranked shorts; money conserved exactly', () => {
    const h = withMaker();
    // 1. Seed the fund with one ordinary liquidation (user 10), as above: +25 USDT.
    openLong(h, 10, '0.1', 50, '300');
    h.deposit(3, '100000');
    h.order(3, { side: 'BUY', qty: '0.1', price: '97300', leverage: 10 });
    h.tick('BTCUSDT', '97400', '97400');
    assert.equal(h.engine.positions(10).length, 0);
    const fund0 = h.engine.ledger().reserveFund;
    assert.equal(fund0, M('25'));
    h.tick('BTCUSDT', '100000', '100000');

    // 2. Two shorts (user 5 at 10x, user 6 at 50x) and two leveraged longs (users 1, 2).
    h.deposit(5, '5000');
    h.deposit(6, '1000');
    h.deposit(1, '300');
    h.deposit(2, '300');
    h.order(5, { side: 'SELL', qty: '0.1', price: '100000', leverage: 10 });
    h.order(1, { side: 'BUY', qty: '0.1', price: '100000', leverage: 50 });
    h.order(6, { side: 'SELL', qty: '0.1', price: '100000', leverage: 50 });
    h.order(2, { side: 'BUY', qty: '0.1', price: '100000', leverage: 50 });
    // shorts now: 9 (1x, from seeding), 5 (10x), 6 (50x)
    const pb1 = h.engine.positions(1)[0].bankruptcyPrice!;
    const pb2 = h.engine.positions(2)[0].bankruptcyPrice!;
    assert.equal(pb1, U('97050'));
    // 3. Bids exactly where the fund can carry user 1's loss: P_b − fund / size.
    const limit1 = pb1 - Number((fund0 * 100_000_000n) / BigInt(U('0.1')));
    assert.equal(limit1, U('96800'));
    h.deposit(7, '100000');
    h.order(7, { side: 'BUY', qty: '0.1', price: '96800', leverage: 10 });
    h.order(7, { side: 'BUY', qty: '0.3', price: '90000', leverage: 10 }); // too deep for anyone's limit
    const before = h.engine.ledger();

    // 4. Gap to 95000: both longs are past bankruptcy (equity −205 each).
    const r = h.tick('BTCUSDT', '95000', '95000');
    conserved(h);
    const liq = orders(r, (o) => o.group === 'liquidation');
    assert.deepEqual(liq.map((o) => [o.userId, o.filledQuantity]), [[1, U('0.1')], [2, 0]]);
    assert.equal(liq[0].limitPrice, U('96800'));
    // user 1's loss beyond collateral (25 + fee) took the whole fund
    assert.ok(h.engine.ledger().reserveFund < M('0.01'), `fund left: ${h.engine.ledger().reserveFund}`);
    assert.ok(before.reserveFund > 0n);
    // user 2: nothing in the book within its limit → ADL at its bankruptcy price, user 6 (50x) before user 5 (10x)
    const adl = orders(r, (o) => o.group === 'adl');
    assert.deepEqual(adl.map((o) => [o.userId, o.side, o.filledQuantity, o.limitPrice]), [
      [2, 'SELL', U('0.1'), pb2], [6, 'BUY', U('0.1'), pb2],
    ]);
    const adlFills = r.events.flatMap((e) => (e.type === 'fill' && e.fill.role === 'NONE' ? [e.fill] : []));
    assert.equal(adlFills.length, 2);
    assert.ok(adlFills.every((f) => f.fee === 0n && f.price === pb2));
    for (const u of [1, 2]) {
      assert.equal(h.engine.positions(u).length, 0, `user ${u} closed`);
      assert.ok(h.engine.account(u).balance >= 0n, `user ${u} not below zero`);
    }
    assert.equal(h.engine.positions(6).length, 0, 'user 6 fully deleveraged');
    assert.equal(h.engine.positions(5)[0].quantity, U('0.1'), 'user 5 untouched');
    assert.equal(h.engine.positions(9)[0].quantity, U('0.1'), 'user 9 (1x) untouched');
    // open interest: shorts 5 and 9 against longs 3 (seeding liquidation) and 7 (user 1's liquidation)
    assert.equal(h.engine.instrumentState('BTCUSDT')!.openInterest, U('0.2'));
    assert.ok(h.engine.ledger().reserveFund >= 0n);
  });

  it('adlLevel ranks profitable, leveraged positions 1–5 in the position list', () => {
    const h = withMaker();
    h.deposit(5, '5000');
    h.deposit(6, '5000');
    h.order(5, { side: 'SELL', qty: '0.1', price: '100000', leverage: 3 });
    h.order(6, { side: 'SELL', qty: '0.1', price: '100000', leverage: 50 });
    h.deposit(1, '50000');
    h.order(1, { side: 'BUY', qty: '0.2', price: '100000', leverage: 5 });
    h.tick('BTCUSDT', '97000', '97000'); // shorts +3%: 3x → 9% (level 1), 50x → 150% (level 3)
    assert.equal(h.engine.positions(5)[0].adlLevel, 1);
    assert.equal(h.engine.positions(6)[0].adlLevel, 3);
    assert.equal(h.engine.positions(1)[0].adlLevel, 1, 'losing positions rank lowest');
  });

  it('liquidation state survives snapshot/restore: restored and uninterrupted engines liquidate identically', () => {
    const h = withMaker();
    openLong(h, 1, '0.1', 50, '300');
    h.deposit(3, '100000');
    h.order(3, { side: 'BUY', qty: '0.2', price: '97300', leverage: 10 });
    h.tick('BTCUSDT', '97500', '97500'); // marginCall on
    const copy = restoreEngine(JSON.parse(JSON.stringify(h.engine.snapshot())));
    assert.equal(copy.account(1).marginCall, true);
    const cmd = { kind: 'price.tick' as const, instrument: 'BTCUSDT', indexPrice: U('97400'), markPrice: U('97400'), ts: h.ts + 5 };
    const big = (_k: string, v: unknown) => (typeof v === 'bigint' ? String(v) : v);
    assert.equal(JSON.stringify(copy.apply(cmd), big), JSON.stringify(h.engine.apply(cmd), big));
    assert.equal(copy.stateHash(), h.engine.stateHash());
  });
});

describe('margin call ends with more collateral', () => {
  it('a deposit clears marginCall at once', () => {
    const h = withMaker();
    openLong(h, 1, '0.1', 50, '300');
    h.tick('BTCUSDT', '97500', '97500');
    assert.equal(h.engine.account(1).marginCall, true);
    const r = h.ok({ kind: 'funds.deposit', userId: 1, amount: M('1000').toString(), transferId: 'top-up' });
    assert.deepEqual(accountEvents(r).map((e) => e.marginCall), [false]);
    assert.equal(h.engine.account(1).marginCall, false);
  });
});
