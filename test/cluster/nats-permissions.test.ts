/**
 * The role permissions (src/cluster/nats-permissions.ts) on a nats-server of the test's own started with the
 * generated `authorization` block: each role's real code paths work as its user (the engine appends, snapshots,
 * publishes channels and answers commands; a gateway submits commands, follows the log, restores a snapshot,
 * reads channel history and sends revocations; a projector follows), and what a role must not do is refused by
 * the server: a gateway cannot append to, purge, delete or edit the command stream, a projector cannot even send
 * a command, and a connection without (or with wrong) credentials is turned away. The engine and gateway log in
 * with a password, the projector with a .creds file (NATS_CREDS).
 */
import { NatsPayoutLedger } from '../../src/chain/nats-payout-ledger.js';
import { NatsSimulatedChain } from '../../src/chain/nats-simulated-chain.js';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import { connect, nkeys, type NatsConnection } from '@nats-io/transport-node';
import { NatsSessionEvents } from '../../src/auth/nats-session-events.js';
import { Kvm } from '@nats-io/kv';
import { NatsCommandSubmitter, serveCommands } from '../../src/cluster/command-transport.js';
import { EngineStatusBoard, EngineStatusPublisher } from '../../src/cluster/engine-status.js';
import { LeaderDirectory, LeaderLease } from '../../src/cluster/leader-lease.js';
import { openEngineFollower } from '../../src/cluster/follower.js';
import { authorizationBlock, type NatsRole } from '../../src/cluster/nats-permissions.js';
import { createEngine, restoreEngine } from '../../src/engine/engine.js';
import { openJetStreamJournal } from '../../src/journal/jetstream-journal.js';
import { clusterNames } from '../../src/journal/jetstream-names.js';
import { connectNats, type NatsAuth } from '../../src/journal/nats-connection.js';
import { openObjectStoreSnapshots } from '../../src/journal/object-store-snapshots.js';
import { NatsBroker } from '../../src/realtime/nats-broker.js';
import type { SessionRevoked } from '../../src/auth/types.js';
import { silentLogger } from '../journal/helpers.js';
import { freePort, PrivateNats, skipUnlessNatsServerBinary } from '../journal/private-nats.js';
import { waitFor } from '../realtime/helpers.js';
import { sequencerOn, setupCommands, tradingCommands } from './workload.js';

const skip = skipUnlessNatsServerBinary();
const cluster = 'perm';
const names = clusterNames(cluster);
const PASSWORDS = { engine: 'engine-secret', gateway: 'gateway-secret' };
/** The projector logs in with a .creds file: an nkey user (the server checks the seed's signature; without an operator it reads no JWT). */
const projectorKey = nkeys.createUser();
let credsFile: string;
const as = (role: NatsRole): NatsAuth => (role === 'projector' ? { kind: 'creds', file: credsFile } : { kind: 'password', user: `u-${role}`, password: PASSWORDS[role] });
const HISTORY = { history: { size: 10, ttlMs: 60_000 } };

let dir: string;
let nats: PrivateNats;

before(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'perpx-nats-perm-'));
  const conf = join(dir, 'nats.conf');
  const users = { engine: { user: 'u-engine', password: PASSWORDS.engine }, gateway: { user: 'u-gateway', password: PASSWORDS.gateway }, projector: { nkey: projectorKey.getPublicKey() } };
  credsFile = join(dir, 'projector.creds');
  const seed = new TextDecoder().decode(projectorKey.getSeed());
  writeFileSync(credsFile, `-----BEGIN NATS USER JWT-----\neyJhbGciOiJlZDI1NTE5LW5rZXkifQ.e30.unused\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n${seed}\n------END USER NKEY SEED------\n`, { mode: 0o600 });
  writeFileSync(conf, authorizationBlock(cluster, users));
  nats = new PrivateNats(await freePort(), join(dir, 'store'), conf);
  await nats.start();
});

after(async () => {
  if (skip) return;
  await nats.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The call fails because the server refused the publish (not a timeout or any other error). */
async function refused(what: string, call: () => Promise<unknown>): Promise<void> {
  await assert.rejects(call(), (err: Error) => {
    assert.match(`${err.message} ${String((err as { cause?: unknown }).cause ?? '')}`, /Permissions Violation for Publish/, `${what}: ${err.message}`);
    return true;
  }, `${what} must be refused`);
}

test('connections without the right credentials are refused', { skip, timeout: 30_000 }, async () => {
  await assert.rejects(connect({ servers: nats.url, maxReconnectAttempts: 0 }), /authorization|auth/i, 'no credentials');
  await assert.rejects(connectNats(nats.url, 'wrong', { kind: 'password', user: 'u-gateway', password: 'guess' }), /authorization|auth/i, 'wrong password');
  await assert.rejects(connectNats(nats.url, 'token', { kind: 'token', token: PASSWORDS.engine }), /authorization|auth/i, 'a token the server does not know');
  const stranger = join(dir, 'stranger.creds');
  writeFileSync(stranger, readFileSync(credsFile, 'utf8').replace(new TextDecoder().decode(projectorKey.getSeed()), new TextDecoder().decode(nkeys.createUser().getSeed())));
  await assert.rejects(connectNats(nats.url, 'stranger', { kind: 'creds', file: stranger }), /authorization|auth/i, 'an nkey the server does not know');
});

test('each role works as its user; the gateway and projector cannot change the command log', { skip, timeout: 120_000 }, async () => {
  const open: NatsConnection[] = [];
  const connectAs = async (role: NatsRole) => {
    const nc = await connectNats(nats.url, `perpx ${role}`, as(role));
    open.push(nc);
    return nc;
  };
  try {
    // Engine: journal and snapshots created and written, channels published, commands answered.
    const engineNc = await connectAs('engine');
    const journal = await openJetStreamJournal({ nc: engineNc, cluster, timeoutMs: 2000 });
    const snapshots = await openObjectStoreSnapshots({ nc: engineNc, cluster, keep: 1 });
    // The payout ledger (issue 30): the engine creates the bucket, claims a withdrawal and records its result.
    const payouts = await NatsPayoutLedger.open(engineNc, cluster);
    assert.equal(await payouts.claim('perm-w1', 1), true);
    await payouts.recordOutcome('perm-w1', { confirmed: true, txHash: '0x1' });
    assert.equal((await payouts.get('perm-w1'))?.outcome?.txHash, '0x1');
    // The shared simulated chain: the engine broadcasts a withdrawal and looks it up.
    const simchain = await NatsSimulatedChain.open(engineNc, cluster, { delayMs: 0, failureRate: 0, seed: 'perm' });
    assert.equal((await simchain.sendWithdrawal({ transferId: 'perm-w1', userId: 1, amount: 1n, recipient: '0x' })).confirmed, true);
    assert.equal((await simchain.record('perm-w1'))?.broadcasts, 1);
    simchain.close();
    const leader = sequencerOn(journal, { snapshots });
    for (const c of [...setupCommands(), ...tradingCommands(0)]) await leader.submit(c);
    await leader.snapshotNow();
    for (const c of tradingCommands(1)) await leader.submit(c);
    await leader.snapshotNow();
    assert.deepEqual((await snapshots.list()).map((s) => s.seq), [leader.seq], 'the engine saved and pruned snapshots');
    const responder = serveCommands({ nc: engineNc, cluster, sequencer: leader, logger: silentLogger });
    const engineBroker = await NatsBroker.open({ nc: engineNc, stream: names.realtimeStream, subjectPrefix: names.realtimeSubjectPrefix, maxHistorySize: 10 });
    await engineBroker.publish('book', { n: 1 }, HISTORY);
    // A snapshot-sized object (several MB) read by a gateway exercises the object store's flow control.
    const big = new Uint8Array(12 << 20).map((_, i) => i % 251);
    await (await new Objm(engineNc).open(names.snapshotBucket)).putBlob({ name: 'large-object' }, big);

    // Gateway: snapshot restore + follower, command requests, channels and history, revocations.
    const gatewayNc = await connectAs('gateway');
    const gatewaySnapshots = await openObjectStoreSnapshots({ nc: gatewayNc, cluster });
    const follower = await openEngineFollower({ nc: gatewayNc, cluster, snapshots: gatewaySnapshots, createEngine, restoreEngine, logger: silentLogger });
    const submitter = new NatsCommandSubmitter({ nc: gatewayNc, cluster, timeoutMs: 5000 });
    let lastSeq = 0;
    for (const c of tradingCommands(2)) lastSeq = (await submitter.submit(c)).seq;
    await follower.waitFor(lastSeq, 10_000);
    assert.equal(follower.engine.stateHash(), (await leader.checkpoint()).stateHash, 'the gateway follows the leader');
    const read = await (await new Objm(gatewayNc).open(names.snapshotBucket)).getBlob('large-object');
    assert.equal(read?.length, big.length, 'the gateway reads a large object');
    assert.ok(read!.every((b, i) => b === big[i]));

    const gatewayBroker = await NatsBroker.open({ nc: gatewayNc, stream: names.realtimeStream, subjectPrefix: names.realtimeSubjectPrefix, maxHistorySize: 10, manageStream: false });
    const live: unknown[] = [];
    gatewayBroker.onPublication((channel, pub) => live.push([channel, pub.data]));
    await gatewayBroker.subscribe('book');
    await engineBroker.publish('book', { n: 2 }, HISTORY);
    await waitFor(() => live.length === 1, 5000);
    assert.deepEqual(live, [['book', { n: 2 }]]);
    const history = await gatewayBroker.history('book', { limit: 10 });
    assert.deepEqual(history.publications.map((p) => p.data), [{ n: 1 }, { n: 2 }], 'the gateway reads channel history');

    const engineEvents = new NatsSessionEvents({ nc: engineNc, subject: names.revocationSubject });
    const gatewayEvents = new NatsSessionEvents({ nc: gatewayNc, subject: names.revocationSubject });
    await Promise.all([engineEvents.ready(), gatewayEvents.ready()]);
    const heard: SessionRevoked[] = [];
    engineEvents.subscribe((e) => heard.push(e));
    gatewayEvents.publish({ sessionId: 's1', userId: 'u1', revokedAt: 1 });
    await waitFor(() => heard.length === 1, 5000);

    // What the gateway must not do to the command stream.
    const jsm = await jetstreamManager(gatewayNc);
    const before = (await jsm.streams.info(names.commandStream)).state;
    await refused('append', () => jetstream(gatewayNc).publish(names.commandSubject, new Uint8Array([1]), { timeout: 1000 }));
    await refused('purge', () => jsm.streams.purge(names.commandStream));
    await refused('message delete', () => jsm.streams.deleteMessage(names.commandStream, before.first_seq));
    await refused('stream update', () => jsm.streams.update(names.commandStream, { max_msgs: 1 }));
    await refused('stream delete', () => jsm.streams.delete(names.commandStream));
    await refused('a second stream on the command subject', () => jsm.streams.add({ name: 'SHADOW', subjects: [`${names.commandSubject}.>`] }));
    await refused('realtime publish', () => jetstream(gatewayNc).publish(`${names.realtimeSubjectPrefix}.h.book`, new Uint8Array([1]), { timeout: 1000 }));
    await refused('snapshot write', () => new Objm(gatewayNc).open(names.snapshotBucket).then((b) => b.putBlob({ name: 'forged' }, new Uint8Array(10))));
    const objects = await (await new Objm(engineNc).open(names.snapshotBucket)).list();
    assert.ok(!objects.some((o) => o.name === 'forged'), 'no object written by the gateway');
    const afterState = (await jsm.streams.info(names.commandStream)).state;
    assert.deepEqual([afterState.messages, afterState.last_seq], [before.messages, before.last_seq], 'the command stream is untouched');

    // Nor through the server: push consumers of other streams pointed at the append subject deliver nothing
    // into the log (the stream listens on a wildcard; see clusterNames), while the engine's next append lands.
    const deputies = [];
    for (const stream of [names.realtimeStream, names.snapshotStream]) {
      const info = await jsm.consumers.add(stream, { deliver_subject: names.commandSubject, ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All });
      deputies.push({ stream, name: info.name });
    }

    // The engine still appends where it left off (its expected last sequence holds), and the gateway sees it.
    lastSeq = (await submitter.submit(tradingCommands(3)[0])).seq;
    await follower.waitFor(lastSeq, 10_000);
    assert.equal((await jsm.streams.info(names.commandStream)).state.messages, before.messages + 1, 'only the engine\'s append was added');
    for (const { stream, name } of deputies) {
      const info = await jsm.consumers.info(stream, name);
      assert.equal(info.delivered.consumer_seq, 0, `${stream}'s push consumer delivered nothing`);
      assert.ok(info.num_pending > 0, `${stream} has messages it would deliver`);
    }

    // Engine status board: the engine takes the lease and reports; the gateway reads both, and may write neither.
    const lease = await LeaderLease.open(engineNc, cluster, { holderId: 'engine-1', ttlMs: 5000 });
    assert.ok(await lease.tryAcquire(), 'the engine takes the lease');
    const status = await EngineStatusPublisher.open(engineNc, cluster, {
      self: () => ({ id: 'engine-1', role: 'leader', appliedSeq: leader.seq, epoch: lease.epoch, takeovers: 1, lastTakeoverMs: 5 }),
      lease: () => lease.current(), leaseTtlMs: 5000, log: silentLogger,
    });
    await status.publish();
    assert.equal((await status.previousLeader('engine-2'))?.id, 'engine-1', 'the engine reads an entry back');
    const directory = await LeaderDirectory.open(gatewayNc, cluster);
    const board = new EngineStatusBoard(gatewayNc, cluster, () => directory.holder(), () => follower.seq);
    await waitFor(() => board.engines().length === 1, 5000);
    const view = await board.read();
    board.close();
    assert.deepEqual(view.engines.map((e) => [e.id, e.role, e.appliedSeq, e.lag]), [['engine-1', 'leader', lastSeq, 0]]);
    assert.deepEqual([view.lease?.holder, view.lease?.epoch, view.logSeq], ['engine-1', lease.epoch, lastSeq]);
    await refused('engine status write', () => new Kvm(gatewayNc).open(names.enginesBucket).then((kv) => kv.put('forged', '{}')));
    await refused('lease write', () => new Kvm(gatewayNc).open(names.leaseBucket).then((kv) => kv.put('leader', '{"holder":"gateway"}')));
    directory.close();
    await status.close();
    await lease.release();
    await refused('simulated chain broadcast by the projector', async () => (await NatsSimulatedChain.open(await connectAs('projector'), cluster, { delayMs: 0, failureRate: 0, seed: 'perm' })).lookupWithdrawal('perm-w1'));
    await refused('payout claim by the projector', async () => (await NatsPayoutLedger.open(await connectAs('projector'), cluster)).claim('perm-w2', 1));

    // Projector: follows from a snapshot; may not send commands nor append.
    const projectorNc = await connectAs('projector');
    const projectorSnapshots = await openObjectStoreSnapshots({ nc: projectorNc, cluster });
    const projector = await openEngineFollower({ nc: projectorNc, cluster, snapshots: projectorSnapshots, snapshotAtOrBefore: 0, createEngine, restoreEngine, logger: silentLogger });
    await projector.waitFor(lastSeq, 10_000);
    assert.equal(projector.engine.stateHash(), follower.engine.stateHash());
    await refused('command request', () => new NatsCommandSubmitter({ nc: projectorNc, cluster, timeoutMs: 1000 }).submit(tradingCommands(4)[0]));
    await refused('append', () => jetstream(projectorNc).publish(names.commandSubject, new Uint8Array([1]), { timeout: 1000 }));
    assert.equal(leader.seq, lastSeq, 'nothing the projector sent reached the engine');

    engineEvents.close();
    gatewayEvents.close();
    await Promise.all([engineBroker.close(), gatewayBroker.close(), projector.close(), follower.close()]);
    await responder.close();
    await leader.stop();
    await journal.close();
  } finally {
    for (const nc of open) await nc.close();
  }
});
