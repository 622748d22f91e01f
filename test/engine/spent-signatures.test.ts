/**
 * Signed instructions take effect at most once (spent-signatures.ts): a withdraw, replace or TpSl command
 * carrying a digest the user already spent is refused with SIGNATURE_ALREADY_USED and changes nothing; a
 * refused command spends nothing; replace digests end with their order, withdraw and TpSl digests are kept;
 * snapshots (version 2) carry them and version 1 snapshots still restore.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { restoreEngine } from '../../src/engine/engine.js';
import type { CommandResult } from '../../src/engine/records.js';
import { serializeState, type StateJson } from '../../src/engine/snapshot.js';
import { Harness, M, U } from './harness.js';

const digest = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const RECIPIENT = '0x' + '12'.repeat(20);
const stateWithoutSeq = (h: Harness) => JSON.stringify({ ...serializeState(h.engine.s), seq: 0 });

function refusal(r: CommandResult) {
  assert.ok(!r.reply.ok, `expected a refusal, got ${JSON.stringify(r.reply)}`);
  assert.equal(r.events.length, 0, 'a refusal emits nothing');
  return r.reply.error;
}

function assertUsed(r: CommandResult): void {
  const e = refusal(r);
  assert.equal(e.status, 409);
  assert.equal(e.code, 'SIGNATURE_ALREADY_USED');
  assert.match(e.message, /already used; change one signed field by one unit/);
}

const withdraw = (h: Harness, userId: number, usdt: string, d: string | undefined, transferId = `w-${h.ts}`) =>
  h.run({ kind: 'funds.withdraw', userId, amount: M(usdt).toString(), transferId, recipient: RECIPIENT, digest: d });

describe('spent signatures: withdraw', () => {
  it('the same signed withdrawal locks the funds once; the repeat is refused and changes nothing', () => {
    const h = new Harness();
    h.deposit(1, '1000');
    assert.ok(withdraw(h, 1, '100', digest(1)).reply.ok);
    const before = stateWithoutSeq(h);
    assertUsed(withdraw(h, 1, '100', digest(1)));
    assert.equal(stateWithoutSeq(h), before, 'state unchanged');
    assert.equal(h.engine.account(1).pendingWithdrawals, M('100'), 'locked once');
    assert.equal(h.engine.pendingTransfers(1).length, 1);
    // another digest (the amount changed by one unit) goes through; another user's identical digest is theirs
    assert.ok(withdraw(h, 1, '100.00000001', digest(2)).reply.ok);
    h.deposit(2, '1000');
    assert.ok(withdraw(h, 2, '100', digest(1)).reply.ok);
  });

  it('is kept after the withdrawal settles (done or failed): kept for good', () => {
    const h = new Harness();
    h.deposit(1, '1000');
    assert.ok(withdraw(h, 1, '100', digest(1), 'w1').reply.ok);
    h.ok({ kind: 'funds.withdraw.settle', transferId: 'w1', success: false });
    assertUsed(withdraw(h, 1, '100', digest(1)));
    assert.ok(withdraw(h, 1, '100', digest(2), 'w2').reply.ok);
    h.ok({ kind: 'funds.withdraw.settle', transferId: 'w2', success: true });
    assertUsed(withdraw(h, 1, '100', digest(2)));
    assert.equal(h.engine.account(1).balance, M('900'), 'withdrawn once');
  });

  it('a refused withdrawal spends nothing: after a deposit the same signed body goes through', () => {
    const h = new Harness();
    h.deposit(1, '50');
    assert.equal(refusal(withdraw(h, 1, '100', digest(1))).code, 'INSUFFICIENT_BALANCE');
    h.deposit(1, '100');
    assert.ok(withdraw(h, 1, '100', digest(1)).reply.ok);
    assertUsed(withdraw(h, 1, '100', digest(1)));
  });

  it('a malformed digest is refused; commands without one (system, older journals) are not tracked', () => {
    const h = new Harness();
    h.deposit(1, '1000');
    for (const bad of ['0x' + 'AB'.repeat(32), digest(1).slice(0, 65), 'ab'.repeat(32), 42 as unknown as string]) {
      assert.equal(refusal(withdraw(h, 1, '1', bad)).code, 'INVALID_DIGEST');
    }
    assert.ok(withdraw(h, 1, '1', undefined).reply.ok);
    assert.ok(withdraw(h, 1, '1', undefined).reply.ok);
    assert.equal(h.engine.s.spent.size, 0);
  });
});

describe('spent signatures: replace', () => {
  function resting(h: Harness) {
    h.deposit(1, '100000');
    return h.order(1, { side: 'BUY', qty: '0.01', price: '99000' });
  }
  const replace = (h: Harness, orderId: string, price: string, d: string | undefined, qty = '0.01') =>
    h.run({ kind: 'order.replace', userId: 1, replace: { orderId, quantity: U(qty), limitPrice: U(price), digest: d } });

  it('an old replace replayed after a newer one is refused: the order keeps the newer price', () => {
    const h = new Harness();
    const o = resting(h);
    assert.ok(replace(h, o.id, '99100', digest(1)).reply.ok);
    assert.ok(replace(h, o.id, '99200', digest(2)).reply.ok);
    assertUsed(replace(h, o.id, '99100', digest(1)));
    assert.equal(h.engine.getOrder(1, o.id)!.limitPrice, U('99200'));
    // going back to 99100 takes a changed field: the quantity by one increment
    assert.ok(replace(h, o.id, '99100', digest(3), '0.011').reply.ok);
    assert.equal(h.engine.getOrder(1, o.id)!.limitPrice, U('99100'));
  });

  it('replace digests end with their order (cancel, or a fill caused by the replace itself)', () => {
    const h = new Harness();
    const o = resting(h);
    assert.ok(replace(h, o.id, '99100', digest(1)).reply.ok);
    assert.ok(replace(h, o.id, '99200', digest(2)).reply.ok);
    assert.equal(h.engine.s.spent.size, 2);
    h.ok({ kind: 'order.cancel', userId: 1, orderId: o.id });
    assert.equal(h.engine.s.spent.size, 0, 'forgotten with the order');
    assert.equal(refusal(replace(h, o.id, '99100', digest(1))).code, 'ORDER_NOT_OPEN', 'the replay still changes nothing');

    // a replace that crosses and fills the order at once spends and ends in the same command
    h.deposit(2, '100000');
    h.order(2, { side: 'SELL', qty: '0.01', price: '99500' });
    const p = h.order(1, { side: 'BUY', qty: '0.01', price: '99000' });
    assert.ok(replace(h, p.id, '99500', digest(4)).reply.ok);
    assert.equal(h.engine.getOrder(1, p.id), undefined, 'filled');
    assert.equal(h.engine.s.spent.size, 0);
  });

  it('a refused replace spends nothing; batch items are checked one by one (a repeated digest in one batch fails)', () => {
    const h = new Harness();
    const o = resting(h);
    h.deposit(2, '100000');
    h.order(2, { side: 'SELL', qty: '0.01', price: '99500' });
    const r = h.run({ kind: 'order.replace', userId: 1, replace: { orderId: o.id, quantity: U('0.01'), limitPrice: U('99600'), postOnly: true, digest: digest(1) } });
    assert.equal(refusal(r).code, 'POST_ONLY');
    assert.equal(h.engine.s.spent.size, 0);

    const b = h.ok({
      kind: 'order.replaceBatch', userId: 1, instrument: 'BTCUSDT', items: [
        { orderId: o.id, quantity: U('0.01'), limitPrice: U('99100'), digest: digest(5) },
        { orderId: o.id, quantity: U('0.01'), limitPrice: U('99100'), digest: digest(5) },
        { orderId: o.id, quantity: U('0.01'), limitPrice: U('99200'), digest: digest(6) },
      ],
    });
    const batch = b.reply.ok ? b.reply.batch! : [];
    assert.deepEqual(batch.map((x) => x.success), [true, false, true]);
    assert.match(batch[1].failReason!, /already used/);
    assert.equal(h.engine.getOrder(1, o.id)!.limitPrice, U('99200'));
    assertUsed(replace(h, o.id, '99100', digest(5)));
  });

  it('stop-limit replaces are covered the same way', () => {
    const h = new Harness();
    h.deposit(1, '100000');
    const o = h.order(1, { side: 'BUY', qty: '0.01', price: '101100', stop: '101000' });
    const rep = (stop: string, d: string) =>
      h.run({ kind: 'order.replace', userId: 1, replace: { orderId: o.id, quantity: U('0.01'), limitPrice: U('101100'), stopPrice: U(stop), digest: d } });
    assert.ok(rep('101500', digest(1)).reply.ok);
    assert.ok(rep('101600', digest(2)).reply.ok);
    assertUsed(rep('101500', digest(1)));
    assert.equal(h.engine.getOrder(1, o.id)!.stopPrice, U('101600'));
  });
});

describe('spent signatures: TpSl', () => {
  function withPosition(h: Harness) {
    h.deposit(1, '100000');
    h.deposit(2, '100000');
    h.order(2, { side: 'SELL', qty: '0.1', price: '100000' });
    h.order(1, { side: 'BUY', qty: '0.1', price: '100000' });
  }
  const tpsl = (price: string, d: string) => ({ instrument: 'BTCUSDT', type: 'take-profit' as const, side: 'SELL' as const, quantity: 0, price: U(price), digest: d });

  it("a create's signature cannot modify another TpSl, and no TpSl signature applies twice", () => {
    const h = new Harness();
    withPosition(h);
    const a = h.ok({ kind: 'tpsl.create', userId: 1, orderId: null, ...tpsl('110000', digest(1)) });
    const b = h.ok({ kind: 'tpsl.create', userId: 1, orderId: null, ...tpsl('111000', digest(2)) });
    const idA = a.reply.ok ? a.reply.tpsl!.id : '';
    const idB = b.reply.ok ? b.reply.tpsl!.id : '';
    assertUsed(h.run({ kind: 'tpsl.modify', userId: 1, id: idB, ...tpsl('110000', digest(1)) }));
    assert.equal(h.engine.tpsls(1).find((t) => t.id === idB)!.price, U('111000'), 'B unchanged');
    assertUsed(h.run({ kind: 'tpsl.create', userId: 1, orderId: null, ...tpsl('110000', digest(1)) }));
    assert.ok(h.run({ kind: 'tpsl.modify', userId: 1, id: idA, ...tpsl('112000', digest(3)) }).reply.ok);
    assertUsed(h.run({ kind: 'tpsl.modify', userId: 1, id: idB, ...tpsl('112000', digest(3)) }));
    // kept after the TpSl is gone
    h.ok({ kind: 'tpsl.cancel', userId: 1, instrument: 'BTCUSDT', id: idA });
    assertUsed(h.run({ kind: 'tpsl.create', userId: 1, orderId: null, ...tpsl('112000', digest(3)) }));
    assert.equal(h.engine.tpsls(1).length, 1);
  });

  it('a refused TpSl spends nothing', () => {
    const h = new Harness();
    h.deposit(1, '100000');
    assert.equal(refusal(h.run({ kind: 'tpsl.create', userId: 1, orderId: null, ...tpsl('110000', digest(1)) })).code, 'NO_POSITION');
    h.deposit(2, '100000');
    h.order(2, { side: 'SELL', qty: '0.1', price: '100000' });
    h.order(1, { side: 'BUY', qty: '0.1', price: '100000' });
    assert.ok(h.run({ kind: 'tpsl.create', userId: 1, orderId: null, ...tpsl('110000', digest(1)) }).reply.ok);
    assertUsed(h.run({ kind: 'tpsl.create', userId: 1, orderId: null, ...tpsl('110000', digest(1)) }));
  });
});

describe('spent signatures: snapshots and the state hash', () => {
  function history() {
    const h = new Harness();
    h.deposit(1, '100000');
    assert.ok(withdraw(h, 1, '100', digest(1)).reply.ok);
    const o = h.order(1, { side: 'BUY', qty: '0.01', price: '99000' });
    h.ok({ kind: 'order.replace', userId: 1, replace: { orderId: o.id, quantity: U('0.01'), limitPrice: U('99100'), digest: digest(2) } });
    return { h, o };
  }

  it('version 2 snapshots carry the spent keys; a restored engine refuses the same repeats and ends replace keys with the order', () => {
    const { h, o } = history();
    const snap = JSON.parse(JSON.stringify(h.engine.snapshot()));
    assert.equal(snap.version, 2);
    assert.deepEqual((snap.state as StateJson).spent, [[1, 'replace', digest(2), o.id.slice(6)], [1, 'withdraw', digest(1), '']]);
    const restored = restoreEngine(snap);
    assert.equal(restored.stateHash(), h.engine.stateHash());
    restored.checkInvariants();
    const next = h.ts + 1;
    assert.equal((restored.apply({ kind: 'funds.withdraw', ts: next, userId: 1, amount: M('100').toString(), transferId: 'again', digest: digest(1) }).reply as { error: { code: string } }).error.code, 'SIGNATURE_ALREADY_USED');
    const again = restored.apply({ kind: 'order.replace', ts: next, userId: 1, replace: { orderId: o.id, quantity: U('0.01'), limitPrice: U('99100'), digest: digest(2) } });
    assert.equal((again.reply as { error: { code: string } }).error.code, 'SIGNATURE_ALREADY_USED');
    restored.apply({ kind: 'order.cancel', ts: next + 1, userId: 1, orderId: o.id });
    restored.checkInvariants();
    assert.equal(restored.s.spent.size, 1, 'the withdraw key stays, the replace key ended with the order');
  });

  it('a version 1 snapshot (no spent keys) still restores; a state without spent keys hashes as before (no section)', () => {
    const h = new Harness();
    h.deposit(1, '1000');
    h.order(1, { side: 'BUY', qty: '0.001', price: '99000' });
    assert.equal('spent' in serializeState(h.engine.s), false);
    const v1 = { ...JSON.parse(JSON.stringify(h.engine.snapshot())), version: 1 };
    const restored = restoreEngine(v1);
    assert.equal(restored.stateHash(), h.engine.stateHash());
    assert.throws(() => restoreEngine({ ...v1, version: 3 }), /unsupported engine snapshot version/);
  });
});
