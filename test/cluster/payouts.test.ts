/**
 * Withdrawals across a takeover (issue 30), with the payout ledger in real NATS KV and a simulated chain shared
 * by an old and a new leader: whatever point the old leader stops at (before sending, after sending, resumed
 * after being deposed), the chain sees each transfer id paid exactly once and both leaders see one outcome.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChainBridge } from '../../src/chain/chain-bridge.js';
import { NatsPayoutLedger } from '../../src/chain/nats-payout-ledger.js';
import { payOnce, type PayoutGuard } from '../../src/chain/pay-once.js';
import { NatsSimulatedChain } from '../../src/chain/nats-simulated-chain.js';
import { SimulatedChain } from '../../src/chain/simulated-chain.js';
import type { WithdrawalRequest } from '../../src/chain/ports.js';
import { dropCluster, freshCluster, natsConnection } from '../journal/jetstream-helpers.js';
import type { CommandInput } from '../../src/engine/commands.js';
import { MemoryJournal } from '../../src/journal/memory-journal.js';
import { silentLogger } from '../journal/helpers.js';
import { skipUnless } from '../services.js';
import { sequencerOn } from './workload.js';

const skip = await skipUnless('nats');
const notStopped = () => false;
const request = (transferId: string): WithdrawalRequest => ({ transferId, userId: 7, recipient: '0xabc', amount: 12_345_678n });

test('each withdrawal reaches the chain once whatever the old leader was doing', { skip, timeout: 60_000 }, async () => {
  const nc = await natsConnection();
  const cluster = freshCluster();
  const chain = new SimulatedChain({ delayMs: 150, failureRate: 0, seed: 'payouts' });
  try {
    const ledger = await NatsPayoutLedger.open(nc, cluster);
    let oldLeads = true;
    const oldLeader: PayoutGuard = { ledger, epoch: 3, stillLeading: async () => oldLeads, claimTimeoutMs: 400, pollMs: 50 };
    const newLeader: PayoutGuard = { ledger, epoch: 8, stillLeading: async () => true, claimTimeoutMs: 400, pollMs: 50 };

    // 1. The old leader claimed, then was deposed before sending (SIGSTOP between claim and send): it does not
    // send; the new leader asks the chain, which never saw it, and takes the stale claim over after the timeout.
    await ledger.claim('w-claimed-only', oldLeader.epoch);
    oldLeads = false;
    assert.equal(await payOnce(request('w-claimed-only'), chain, oldLeader, notStopped), undefined, 'a deposed leader does not send');
    const taken = await payOnce(request('w-claimed-only'), chain, newLeader, notStopped);
    assert.equal(taken?.confirmed, true);
    assert.equal(chain.broadcasts.get('w-claimed-only'), 1);

    // 2. The old leader sent, then died before recording the result (SIGKILL): the new leader finds the claim,
    // sees the payout pending on chain and waits for it; no second transaction.
    oldLeads = true;
    assert.equal(await ledger.claim('w-sent', oldLeader.epoch), true);
    void chain.sendWithdrawal(request('w-sent'));
    const waited = await payOnce(request('w-sent'), chain, newLeader, notStopped);
    assert.equal(waited?.confirmed, true);
    assert.equal(chain.broadcasts.get('w-sent'), 1);
    assert.equal((await ledger.get('w-sent'))?.outcome?.txHash, waited?.txHash, 'the new leader recorded the chain result');

    // 3. Both leaders at once (the old one resumes with SIGCONT while the new one resends everything unsettled):
    // one sends, the other waits for its result.
    const ids = Array.from({ length: 10 }, (_, i) => `w-both-${i}`);
    const both = await Promise.all(ids.flatMap((id) => [payOnce(request(id), chain, oldLeader, notStopped), payOnce(request(id), chain, newLeader, notStopped)]));
    for (const [i, id] of ids.entries()) {
      assert.equal(chain.broadcasts.get(id), 1, `${id} paid once`);
      assert.deepEqual(both[2 * i], both[2 * i + 1], `${id}: both leaders see the same outcome`);
    }

    // 4. A leader resumed after being deposed finds a recorded result and does not send again.
    oldLeads = false;
    assert.equal(await payOnce(request('w-both-0'), chain, oldLeader, notStopped), undefined);
    assert.equal((await payOnce(request('w-both-0'), chain, newLeader, notStopped))?.txHash, both[0]?.txHash, 'a resend answers from the ledger');
    assert.equal(chain.broadcasts.get('w-both-0'), 1);

    // 5. A claim of the current epoch from before a restart of the same leader, never sent: sent once now.
    await ledger.claim('w-own', newLeader.epoch);
    assert.equal((await payOnce(request('w-own'), chain, newLeader, notStopped))?.confirmed, true);
    assert.equal(chain.broadcasts.get('w-own'), 1);
  } finally {
    chain.close();
    await dropCluster(nc, cluster).catch(() => {});
  }
});

test('two leaders\' chain bridges settle each in-flight withdrawal once', { skip, timeout: 60_000 }, async () => {
  const nc = await natsConnection();
  const cluster = freshCluster();
  const chain = new SimulatedChain({ delayMs: 200, failureRate: 0, seed: 'bridges' });
  const sequencer = sequencerOn(new MemoryJournal());
  const settles: string[] = [];
  const submit = async (cmd: CommandInput) => {
    const r = await sequencer.submit(cmd);
    if (cmd.kind === 'funds.withdraw.settle' && r.reply.ok) settles.push(cmd.transferId);
    return r;
  };
  try {
    const ledger = await NatsPayoutLedger.open(nc, cluster);
    await submit({ kind: 'funds.deposit', userId: 1, amount: (1_000n * 10n ** 8n).toString(), transferId: 'dep-1' });
    const ids = Array.from({ length: 12 }, (_, i) => `wd-${i}`);
    for (const id of ids) assert.ok((await submit({ kind: 'funds.withdraw', userId: 1, amount: (10n * 10n ** 8n).toString(), transferId: id })).reply.ok);
    const balanceBefore = sequencer.engine.ledger!().balances;

    // The old leader starts paying, then is deposed (lease lost) while its payouts are pending on chain.
    let oldLeads = true;
    const bridge = (epoch: number, leading: () => boolean) => new ChainBridge({
      network: chain, engine: sequencer.engine, submit, logger: silentLogger,
      payouts: { ledger, epoch, stillLeading: async () => leading(), claimTimeoutMs: 500, pollMs: 50 },
    });
    const oldBridge = bridge(4, () => oldLeads);
    oldBridge.start();
    await new Promise((r) => setTimeout(r, 50));
    oldLeads = false;
    const newBridge = bridge(9, () => true);
    newBridge.start();
    await Promise.all([oldBridge.idle(), newBridge.idle()]);

    for (const id of ids) {
      assert.equal(chain.broadcasts.get(id), 1, `${id}: paid once on chain`);
      assert.equal(settles.filter((s) => s === id).length, 1, `${id}: settled once`);
    }
    assert.deepEqual(sequencer.engine.pendingTransfers?.() ?? [], [], 'no withdrawal left unsettled');
    assert.equal(sequencer.engine.ledger!().withdrawals, 120n * 10n ** 8n, 'the user was debited once per withdrawal');
    assert.equal(sequencer.engine.ledger!().balances, balanceBefore - 120n * 10n ** 8n, 'the locked funds left the balance once, nothing returned');
    await Promise.all([oldBridge.stop(), newBridge.stop()]);
  } finally {
    chain.close();
    await dropCluster(nc, cluster).catch(() => {});
  }
});

test('the shared simulated chain: a new leader sees what the old one broadcast', { skip, timeout: 30_000 }, async () => {
  const nc = await natsConnection();
  const cluster = freshCluster();
  const opts = { delayMs: 300, failureRate: 0.5, seed: 'shared' };
  const [oldChain, newChain] = [await NatsSimulatedChain.open(nc, cluster, opts), await NatsSimulatedChain.open(nc, cluster, opts)];
  try {
    const ids = Array.from({ length: 6 }, (_, i) => `s-${i}`);
    // The old leader broadcasts and "dies": its promises are dropped, the network finalizes them anyway.
    for (const id of ids) void oldChain.sendWithdrawal(request(id));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(await newChain.lookupWithdrawal('s-unknown'), undefined);
    for (const id of ids) assert.equal(await newChain.lookupWithdrawal(id), 'pending', `${id} pending on the shared network`);
    await new Promise((r) => setTimeout(r, 400));
    const single = new SimulatedChain(opts);
    for (const id of ids) {
      const seen = await newChain.lookupWithdrawal(id);
      assert.ok(seen !== 'pending' && seen !== undefined, `${id} final`);
      assert.equal(seen.confirmed, !single.willFail(id), `${id}: the same seeded outcome as SimulatedChain`);
      assert.equal((await newChain.record(id))?.broadcasts, 1);
    }
    single.close();
    // Within one process a resend joins the pending one; from another process while pending it is a second
    // transaction, counted (so the end-to-end test would see it), and so is one after it is final.
    const [x, y, z] = await Promise.all([newChain.sendWithdrawal(request('s-dup')), newChain.sendWithdrawal(request('s-dup')), oldChain.sendWithdrawal(request('s-dup'))]);
    assert.deepEqual(x, y);
    assert.deepEqual(z, x, 'the same outcome on the network');
    assert.equal((await newChain.record('s-dup'))?.broadcasts, 2, 'a cross-process resend while pending is counted');
    assert.deepEqual(await oldChain.sendWithdrawal(request('s-dup')), x, 'final: the same outcome at once');
    assert.equal((await newChain.record('s-dup'))?.broadcasts, 3, 'and the resend is counted');
  } finally {
    oldChain.close();
    newChain.close();
    await dropCluster(nc, cluster).catch(() => {});
  }
});
