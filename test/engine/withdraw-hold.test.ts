/**
 * Operator hold on withdrawals (funds.withdraw.hold): the transfer turns blocked, settlement is refused
 * while held, the funds stay locked, release makes it pending again; the state survives snapshot/restore.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { restoreEngine } from '../../src/engine/engine.js';
import type { CommandResult } from '../../src/engine/records.js';
import { Harness, M } from './harness.js';

const err = (r: CommandResult) => {
  assert.ok(!r.reply.ok, 'expected a refusal');
  return r.reply.error;
};
const transferEvents = (r: CommandResult) => r.events.flatMap((e) => (e.type === 'transfer' ? [e.transfer] : []));

describe('withdrawal hold', () => {
  it('blocks settlement until released; the lock stays and an error returns exactly the locked amount', () => {
    const h = new Harness();
    h.deposit(1, '1000');
    h.ok({ kind: 'funds.withdraw', userId: 1, amount: M('250.5').toString(), transferId: 'w1', recipient: '0x' + '12'.repeat(20) });
    assert.equal(h.engine.transfer('w1')!.recipient, '0x' + '12'.repeat(20));

    let r = h.ok({ kind: 'funds.withdraw.hold', transferId: 'w1', hold: true });
    assert.deepEqual(transferEvents(r).map((t) => t.status), ['blocked']);
    assert.equal(h.engine.transfer('w1')!.status, 'blocked');
    assert.equal(h.engine.account(1).availableBalance, M('749.5'), 'held funds stay locked');
    assert.equal(err(h.run({ kind: 'funds.withdraw.settle', transferId: 'w1', success: true })).code, 'TRANSFER_BLOCKED');
    assert.equal(err(h.run({ kind: 'funds.withdraw.hold', transferId: 'w1', hold: true })).status, 409);
    assert.equal(h.engine.account(1).balance, M('1000'), 'a refused settle moved nothing');

    // snapshot/restore keeps the hold (and the hash)
    const restored = restoreEngine(JSON.parse(JSON.stringify(h.engine.snapshot())));
    assert.equal(restored.stateHash(), h.engine.stateHash());
    assert.equal(restored.transfer('w1')!.status, 'blocked');

    r = h.ok({ kind: 'funds.withdraw.hold', transferId: 'w1', hold: false });
    const released = transferEvents(r)[0]!;
    assert.equal(released.status, 'pending');
    const before = h.engine.account(1).availableBalance;
    r = h.ok({ kind: 'funds.withdraw.settle', transferId: 'w1', success: false });
    const settled = transferEvents(r)[0]!;
    assert.equal(settled.status, 'error');
    assert.ok(settled.updatedAt > released.updatedAt, 'updatedAt strictly increases per transfer');
    assert.equal(h.engine.account(1).availableBalance - before, M('250.5'));
    assert.equal(h.engine.account(1).balance, M('1000'));
    assert.deepEqual(h.engine.pendingTransfers?.(1), []);
  });

  it('lists unsettled withdrawals per user; unknown ids are 404', () => {
    const h = new Harness();
    h.deposit(1, '100');
    h.deposit(2, '100');
    h.ok({ kind: 'funds.withdraw', userId: 1, amount: M('10').toString(), transferId: 'a' });
    h.ok({ kind: 'funds.withdraw', userId: 2, amount: M('20').toString(), transferId: 'b' });
    h.ok({ kind: 'funds.withdraw', userId: 1, amount: M('30').toString(), transferId: 'c' });
    h.ok({ kind: 'funds.withdraw.hold', transferId: 'c', hold: true });
    assert.deepEqual(h.engine.pendingTransfers(1).map((t) => [t.id, t.status]), [['a', 'pending'], ['c', 'blocked']]);
    assert.deepEqual(h.engine.pendingTransfers().map((t) => t.id), ['a', 'b', 'c']);
    assert.equal(err(h.run({ kind: 'funds.withdraw.hold', transferId: 'nope', hold: true })).status, 404);
    h.ok({ kind: 'funds.withdraw.settle', transferId: 'a', success: true });
    assert.equal(err(h.run({ kind: 'funds.withdraw.hold', transferId: 'a', hold: true })).status, 404, 'settled transfers cannot be held');
    const l = h.engine.ledger();
    assert.equal(l.withdrawals, M('10'));
    assert.equal(l.balances + l.fees + l.reserveFund - l.openCost, l.deposits - l.withdrawals);
  });
});
