// Funding: premium index sampled on price ticks, Binance-style rate, exact zero-sum payments between longs and
// shorts (rounding residue to the reserve fund), funding events, Position.fundingPaid, snapshot round trip.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { restoreEngine } from '../../src/engine/engine.js';
import type { EngineEvent } from '../../src/engine/records.js';
import { serializeState } from '../../src/engine/snapshot.js';
import { Harness, U } from './harness.js';

const H8 = 8 * 3600_000;

/** Long user 1 against three shorts of unequal sizes (2, 3, 6) at 100000: 0.0011 BTC open interest. */
function market(): Harness {
  const h = new Harness();
  for (const u of [1, 2, 3, 4, 9]) h.deposit(u, '100000');
  h.order(2, { side: 'SELL', qty: '0.0002', price: '100000' });
  h.order(3, { side: 'SELL', qty: '0.0003', price: '100000' });
  h.order(4, { side: 'SELL', qty: '0.0006', price: '100000' });
  h.order(1, { side: 'BUY', qty: '0.0011', price: '100000' });
  return h;
}

function stateWithoutSeq(h: Harness): string {
  return JSON.stringify({ ...serializeState(h.engine.s), seq: 0 });
}

function settle(h: Harness, intervalMs = H8) {
  return h.ok({ kind: 'funding.settle', instrument: 'BTCUSDT', intervalMs });
}

const fundingOf = (events: EngineEvent[]) =>
  events.flatMap((e) => (e.type === 'funding' && e.funding.reason === 'funding' ? [e.funding] : []));

describe('funding', () => {
  it('without premium samples the rate is the interest rate (0.01% per 8 h), scaled to the interval', () => {
    const h = new Harness();
    const r = settle(h);
    const ev = r.events.find((e) => e.type === 'fundingRate');
    assert.ok(ev && ev.type === 'fundingRate');
    assert.equal(ev.rate, 10_000n); // 0.0001 in 1e-8 units
    // one hour: 1/8 of that; and the rate shows on the instrument state
    const r1 = settle(h, 3600_000);
    const ev1 = r1.events.find((e) => e.type === 'fundingRate');
    assert.ok(ev1 && ev1.type === 'fundingRate' && ev1.rate === 1_250n);
    assert.equal(h.engine.instrumentState('BTCUSDT')!.fundingRate, 1_250n);
  });

  it('the premium index of impact prices over lotSize drives the rate, clamped around the interest rate and capped', () => {
    const h = new Harness();
    settle(h); // consumes the harness's start-price sample
    h.deposit(9, '1000000');
    // A book entirely above the index: impact bid 100200 → premium +0.2% per sample.
    h.order(9, { side: 'BUY', qty: '0.01', price: '100200' });
    h.order(9, { side: 'SELL', qty: '0.01', price: '100400' });
    for (let i = 0; i < 4; i++) h.tick('BTCUSDT', '100000');
    const r = settle(h);
    const ev = r.events.find((e) => e.type === 'fundingRate');
    // P = 0.002; F = P + clamp(0.0001 − P, ±0.0005) = 0.002 − 0.0005 = 0.0015
    assert.ok(ev && ev.type === 'fundingRate');
    assert.equal(ev.rate, 150_000n);
    // Samples were consumed: the next interval without ticks pays the interest rate again.
    const again = settle(h).events.find((e) => e.type === 'fundingRate');
    assert.ok(again && again.type === 'fundingRate' && again.rate === 10_000n);
    // A premium beyond the cap: the book 5% over the index (mark is clamped, the premium sample is not).
    h.ok({ kind: 'order.cancelAll', userId: 9, instrument: 'BTCUSDT' });
    h.order(9, { side: 'SELL', qty: '0.01', price: '105100' });
    h.order(9, { side: 'BUY', qty: '0.01', price: '105000' });
    h.tick('BTCUSDT', '100000');
    const capped = settle(h).events.find((e) => e.type === 'fundingRate');
    assert.ok(capped && capped.type === 'fundingRate' && capped.rate === 750_000n, 'capped at 0.75%');
  });

  it('longs pay shorts exactly: payments by size, residue to the reserve fund, fundingPaid and events', () => {
    const h = market();
    h.tick('BTCUSDT', '100000.3', '100000.3');
    const before = h.engine.ledger();
    const balances = new Map([1, 2, 3, 4].map((u) => [u, h.engine.account(u).balance]));
    // The sample of that tick is 0 (no book): rate = interest 0.0001, at mark 100000.3.
    const r = settle(h);
    const rate = 10_000n;
    const mark = BigInt(U('100000.3'));
    // Independent computation of the rule.
    const paid = (BigInt(U('0.0011')) * mark * rate) / 10n ** 16n;
    const shares = [2, 3, 6].map((n) => (paid * BigInt(n)) / 11n);
    const residue = paid - shares.reduce((a, b) => a + b, 0n);
    const f = fundingOf(r.events);
    assert.deepEqual(f.map((x) => [x.userId, x.quantity]), [[1, -paid], [2, shares[0]], [3, shares[1]], [4, shares[2]]]);
    assert.equal(h.engine.account(1).balance, balances.get(1)! - paid);
    for (const [i, u] of [2, 3, 4].entries()) assert.equal(h.engine.account(u).balance, balances.get(u)! + shares[i]);
    const after = h.engine.ledger();
    assert.equal(after.reserveFund - before.reserveFund, residue);
    assert.equal(after.balances - before.balances, -residue);
    const pos1 = h.engine.positions(1)[0];
    assert.equal(pos1.fundingPaid, -paid);
    assert.equal(h.engine.positions(4)[0].fundingPaid, shares[2]);
    assert.ok(r.events.some((e) => e.type === 'position' && e.position.userId === 1 && e.position.fundingPaid === -paid));
    assert.equal(paid, 1_100_003n, '0.0011 BTC × 100000.3 × 0.0001 = 0.01100003 USDT (rounded down)');
    assert.equal(residue, 2n, 'shares 200000 + 300000 + 600001: 2 units of residue');
  });

  it('a negative rate makes shorts pay longs', () => {
    const h = market();
    h.deposit(8, '1000000');
    // Book below the index: impact ask 99600 → premium −0.4%.
    h.order(8, { side: 'SELL', qty: '0.01', price: '99600' });
    h.order(8, { side: 'BUY', qty: '0.01', price: '99500' });
    h.tick('BTCUSDT', '100000');
    const r = settle(h);
    const ev = r.events.find((e) => e.type === 'fundingRate');
    assert.ok(ev && ev.type === 'fundingRate' && ev.rate < 0n);
    const f = fundingOf(r.events);
    assert.ok(f.find((x) => x.userId === 1)!.quantity > 0n, 'the long receives');
    for (const u of [2, 3, 4]) assert.ok(f.find((x) => x.userId === u)!.quantity < 0n, `short ${u} pays`);
    const total = f.reduce((a, x) => a + x.quantity, 0n);
    assert.ok(total <= 0n && total > -3n, 'payments sum to minus the residue (< 1 unit per receiver)');
  });

  it('refuses an unknown instrument or a bad interval and changes nothing', () => {
    const h = market();
    const state = stateWithoutSeq(h);
    const a = h.run({ kind: 'funding.settle', instrument: 'NOPE', intervalMs: H8 });
    const b = h.run({ kind: 'funding.settle', instrument: 'BTCUSDT', intervalMs: 0 });
    const c = h.run({ kind: 'funding.settle', instrument: 'BTCUSDT', intervalMs: 1.5 });
    assert.ok(!a.reply.ok && a.reply.error.status === 404);
    assert.ok(!b.reply.ok && b.reply.error.code === 'INVALID_INTERVAL');
    assert.ok(!c.reply.ok);
    assert.equal(a.events.length + b.events.length + c.events.length, 0);
    assert.equal(stateWithoutSeq(h), state);
  });

  it('premium samples survive a snapshot: restored and uninterrupted engines settle the same', () => {
    const h = market();
    h.order(9, { side: 'BUY', qty: '0.01', price: '100150' });
    h.tick('BTCUSDT', '100000');
    h.tick('BTCUSDT', '100050');
    const copy = restoreEngine(JSON.parse(JSON.stringify(h.engine.snapshot())));
    assert.equal(copy.stateHash(), h.engine.stateHash());
    const cmd = { kind: 'funding.settle' as const, instrument: 'BTCUSDT', intervalMs: H8, ts: h.ts + 10 };
    const a = h.engine.apply(cmd);
    const b = copy.apply(cmd);
    assert.deepEqual(JSON.stringify(a, (_k, v) => (typeof v === 'bigint' ? String(v) : v)), JSON.stringify(b, (_k, v) => (typeof v === 'bigint' ? String(v) : v)));
    assert.equal(copy.stateHash(), h.engine.stateHash());
    assert.ok(fundingOf(a.events).length > 0);
  });
});
