import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { MemoryJournal } from '../../src/journal/memory-journal.js';
import type { EventBatch } from '../../src/engine/commands.js';
import { InProcessEventBroker } from '../../src/sequencer/event-bus.js';
import { EngineFaultError, Sequencer, SequencerStoppedError } from '../../src/sequencer/sequencer.js';
import type { SerializedSnapshot, SnapshotStore, SnapshotInfo, StoredSnapshot } from '../../src/journal/ports.js';
import type { EngineSnapshot } from '../../src/engine/api.js';
import { createEngine } from '../../src/engine/engine.js';
import { FakeEngine, createFakeEngine } from './fake-engine.js';
import { deposit, silentLogger } from './helpers.js';

/** Memory journal whose flushes wait for the test to open the gate (an fsync that takes as long as we like). */
class GatedJournal extends MemoryJournal {
  private gates: Array<() => void> = [];
  flushCalls = 0;
  override async flush(): Promise<void> {
    this.flushCalls++;
    await new Promise<void>((resolve) => this.gates.push(resolve));
    return super.flush();
  }
  openGates(): void {
    const g = this.gates;
    this.gates = [];
    for (const open of g) open();
  }
  get waiting(): number {
    return this.gates.length;
  }
}

class MemorySnapshots implements SnapshotStore {
  saved: SerializedSnapshot[] = [];
  async save(s: SerializedSnapshot): Promise<void> {
    this.saved.push(s);
  }
  async load(seq: number): Promise<StoredSnapshot> {
    const s = this.saved.find((x) => x.seq === seq)!;
    return { snapshot: JSON.parse(s.json) as EngineSnapshot, stateHash: s.stateHash };
  }
  async list(): Promise<SnapshotInfo[]> {
    return this.saved.map((s) => ({ seq: s.seq, savedAt: 0, bytes: s.json.length }));
  }
  async close(): Promise<void> {}
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

function make(overrides: Partial<ConstructorParameters<typeof Sequencer>[0]> = {}) {
  const journal = overrides.journal ?? new MemoryJournal();
  const bus = new InProcessEventBroker({ logger: silentLogger });
  const seen: EventBatch[] = [];
  bus.subscribe('test', (b) => void seen.push(b));
  const engine = overrides.engine ?? createFakeEngine();
  const seq = new Sequencer({ engine, journal, bus, logger: silentLogger, ...overrides });
  return { seq, journal, bus, seen, engine };
}

test('group commit: every submit of one tick shares one flush; replies resolve in seq order', async () => {
  const { seq, journal, seen } = make();
  const order: number[] = [];
  const promises = Array.from({ length: 500 }, (_, i) => seq.submit(deposit(i)).then((r) => {
    order.push(i);
    return r;
  }));
  const results = await Promise.all(promises);
  const mj = journal as MemoryJournal;
  assert.equal(mj.commits, 1);
  assert.equal(seq.stats.flushes, 1);
  assert.equal(seq.stats.flushedCommands, 500);
  assert.deepEqual(order, Array.from({ length: 500 }, (_, i) => i));
  assert.ok(results.every((r) => r.reply.ok));
  assert.deepEqual(mj.entries.map((e) => e.seq), Array.from({ length: 500 }, (_, i) => i + 1));
  assert.deepEqual(seen.map((b) => b.seq), Array.from({ length: 500 }, (_, i) => i + 1));
  assert.equal(seq.stats.commandsByKind['funds.deposit'], 500);

  // A second burst in a later tick is a second group.
  await Promise.all([seq.submit(deposit(1000)), seq.submit(deposit(1001))]);
  assert.equal(mj.commits, 2);
});

test('a refusal the engine does not retract is journaled too and replays to the same refusal', async () => {
  const { seq, journal } = make();
  await seq.submit(deposit(1));
  const dup = await seq.submit(deposit(1));
  assert.equal(dup.reply.ok, false);
  assert.equal((journal as MemoryJournal).entries.length, 2);
  assert.equal(seq.stats.refusedByKind['funds.deposit'], 1);
});

test('a refusal that changed nothing uses no seq, is not journaled nor published, and waits for the commands before it', async () => {
  const journal = new GatedJournal();
  const { seq, seen, engine } = make({ journal, engine: createEngine() });
  const first = seq.submit(deposit(1));
  let refusedAt = 0;
  let firstAt = 0;
  void first.then(() => (firstAt = performance.now()));
  const dup = seq.submit(deposit(1)).then((r) => ((refusedAt = performance.now()), r));
  await tick();
  await tick();
  assert.equal(refusedAt, 0, 'the refusal is not answered before the deposit before it is durable');
  assert.equal(engine.seq, 1, 'the refusal used no seq');
  journal.openGates();
  const [ok, refused] = await Promise.all([first, dup]);
  assert.equal(ok.reply.ok, true);
  assert.equal(refused.reply.ok, false);
  assert.equal(refused.retracted, true);
  assert.ok(firstAt > 0 && refusedAt >= firstAt, 'answered in order');
  assert.deepEqual(journal.entries.map((e) => e.seq), [1]);
  assert.deepEqual(seen.map((b) => b.seq), [1]);
  assert.equal(seq.stats.refusedByKind['funds.deposit'], 1);
  // The next command takes the next seq: no gap in the journal or on the bus.
  const next = seq.submit(deposit(2));
  await tick();
  journal.openGates();
  await next;
  assert.deepEqual(journal.entries.map((e) => e.seq), [1, 2]);
  assert.deepEqual(seen.map((b) => b.seq), [1, 2]);
  const replayed = createEngine();
  for (const e of journal.entries) replayed.apply(e.command);
  assert.equal(replayed.stateHash(), engine.stateHash(), 'the journal replays to the live state');
});

test('nothing is acknowledged or published before the flush covering it completes (one flush at a time)', async () => {
  const journal = new GatedJournal();
  const { seq, seen } = make({ journal, maxFlushesInFlight: 1 });
  let acked = 0;
  const first = Array.from({ length: 3 }, (_, i) => seq.submit(deposit(i)).then(() => acked++));
  await tick();
  await tick();
  assert.equal(journal.waiting, 1, 'one flush in flight');
  // Commands arriving while the fsync runs wait for the next group.
  const second = Array.from({ length: 4 }, (_, i) => seq.submit(deposit(10 + i)).then(() => acked++));
  await tick();
  assert.equal(acked, 0);
  assert.equal(seen.length, 0);
  assert.equal(journal.flushCalls, 1, 'no second flush while the first is in flight');
  journal.openGates();
  await Promise.all(first);
  assert.equal(acked, 3);
  assert.deepEqual(seen.map((b) => b.seq), [1, 2, 3]);
  await tick();
  assert.equal(journal.flushCalls, 2);
  journal.openGates();
  await Promise.all(second);
  assert.deepEqual(seen.map((b) => b.seq), [1, 2, 3, 4, 5, 6, 7]);
});

/** Each flush covers what was appended before it and waits for its own gate (opened in any order). */
class PerFlushGateJournal extends MemoryJournal {
  gates: Array<{ open: () => void; fail: (err: Error) => void }> = [];
  override flush(): Promise<void> {
    const covered = super.flush(); // moves the buffer to `entries` at once; durability is what the gate decides
    return new Promise<void>((resolve, reject) => {
      this.gates.push({ open: () => void covered.then(resolve, reject), fail: reject });
    });
  }
}

test('pipelined group commit: a new group is flushed while the previous one commits; acks and events stay in seq order', async () => {
  const journal = new PerFlushGateJournal();
  const { seq, seen } = make({ journal, maxFlushesInFlight: 2 });
  const acked: number[] = [];
  const all: Array<Promise<unknown>> = [];
  const burst = (from: number, n: number) => {
    for (let i = from; i < from + n; i++) all.push(seq.submit(deposit(i)).then(() => acked.push(i)));
  };
  burst(0, 3);
  await tick();
  burst(10, 4);
  await tick();
  burst(20, 2);
  await tick();
  assert.equal(journal.gates.length, 2, 'two flushes in flight, the third group waits');
  journal.gates[1].open(); // the second group's flush finishes first
  await tick();
  assert.deepEqual(acked, [], 'nothing acknowledged before the older flush');
  assert.equal(seen.length, 0);
  journal.gates[0].open();
  await tick();
  assert.deepEqual(acked, [0, 1, 2, 10, 11, 12, 13]);
  assert.deepEqual(seen.map((b) => b.seq), [1, 2, 3, 4, 5, 6, 7]);
  await tick();
  assert.equal(journal.gates.length, 3, 'the waiting group is flushed once a slot frees');
  journal.gates[2].open();
  await Promise.all(all);
  assert.deepEqual(acked, [0, 1, 2, 10, 11, 12, 13, 20, 21]);
  assert.equal(seq.stats.flushes, 3);
});

test('pipelined group commit: a failed flush rejects its group and every later one, even if their flushes succeeded', async () => {
  const journal = new PerFlushGateJournal();
  let fatal = 0;
  const { seq, seen } = make({ journal, maxFlushesInFlight: 4, onFatal: () => void fatal++ });
  const first = [seq.submit(deposit(1)), seq.submit(deposit(2))];
  await tick();
  const second = [seq.submit(deposit(3))];
  await tick();
  assert.equal(journal.gates.length, 2);
  journal.gates[1].open();
  journal.gates[0].fail(new Error('disk full'));
  for (const p of [...first, ...second]) await assert.rejects(p, /disk full/);
  await tick();
  assert.equal(seen.length, 0, 'nothing published');
  assert.equal(seq.state, 'failed');
  await assert.rejects(seq.submit(deposit(4)), /disk full/);
  assert.equal(fatal, 1, 'onFatal once');
});

test('ts is stamped from the clock and never goes backwards, also across a restart', async () => {
  let now = 5000;
  const journal = new MemoryJournal();
  const { seq } = make({ journal, clock: () => now });
  await seq.submit(deposit(1));
  now = 4000; // clock stepped back (NTP)
  await seq.submit(deposit(2));
  now = 6000;
  await seq.submit(deposit(3));
  assert.deepEqual(journal.entries.map((e) => e.command.ts), [5000, 5000, 6000]);

  // Same journal, new sequencer (as after recovery) with a clock behind the last ts.
  const engine = new FakeEngine();
  for (const e of journal.entries) engine.apply(e.command);
  now = 100;
  const again = new Sequencer({ engine, journal, clock: () => now, logger: silentLogger });
  await again.submit(deposit(4));
  assert.equal(journal.entries[3].command.ts, 6000);
});

test('fail-stop: a journal write failure rejects what is not durable and refuses new commands', async () => {
  const journal = new GatedJournal();
  let fatal: Error | undefined;
  const { seq, seen } = make({ journal, onFatal: (e) => (fatal = e) });
  const ok = seq.submit(deposit(1));
  await tick();
  journal.openGates();
  await ok;
  const doomed = [seq.submit(deposit(2)), seq.submit(deposit(3))];
  await tick();
  journal.fail(new Error('disk full'));
  journal.openGates();
  for (const p of doomed) await assert.rejects(p, /disk full/);
  assert.equal(seq.state, 'failed');
  await assert.rejects(seq.submit(deposit(4)), /disk full/);
  assert.deepEqual(seen.map((b) => b.seq), [1], 'events of lost commands were never published');
  await tick();
  assert.match(String(fatal), /disk full/);
  assert.equal(journal.entries.length, 1);
});

test('an engine that throws halts the sequencer but earlier commands still become durable', async () => {
  const engine = new FakeEngine();
  engine.throwOn = 't2';
  let fatal: Error | undefined;
  const { seq, journal } = make({ engine, onFatal: (e) => (fatal = e) });
  const p0 = seq.submit(deposit(0));
  const p1 = seq.submit(deposit(1));
  const p2 = seq.submit(deposit(2));
  const p3 = seq.submit(deposit(3));
  await assert.rejects(p2, EngineFaultError);
  await assert.rejects(p3, EngineFaultError);
  assert.equal((await p0).reply.ok, true);
  assert.equal((await p1).reply.ok, true);
  assert.deepEqual((journal as MemoryJournal).entries.map((e) => e.seq), [1, 2]);
  await tick();
  assert.ok(fatal instanceof EngineFaultError);
});

test('snapshots every N commands, written only once the journal covers them', async () => {
  const journal = new GatedJournal();
  const snapshots = new MemorySnapshots();
  const { seq } = make({ journal, snapshots, snapshotEveryCommands: 5 });
  const ps = Array.from({ length: 12 }, (_, i) => seq.submit(deposit(i)));
  await tick();
  assert.equal(seq.stats.snapshotsTaken, 2, 'captured at seq 5 and 10');
  assert.equal(snapshots.saved.length, 0, 'but not written: the journal is not durable yet');
  journal.openGates();
  await Promise.all(ps);
  await tick();
  // The one at seq 5 was superseded while waiting; only the newest covered one is written.
  assert.deepEqual(snapshots.saved.map((s) => s.seq), [10]);
  const snap = JSON.parse(snapshots.saved[0].json) as EngineSnapshot;
  assert.equal(snap.seq, 10);
});

test('snapshots by elapsed time', async () => {
  let now = 0;
  const snapshots = new MemorySnapshots();
  const { seq } = make({ snapshots, snapshotEveryMs: 1000, clock: () => now });
  for (let i = 0; i < 10; i++) {
    now += 300;
    await seq.submit(deposit(i));
  }
  await tick();
  // ts 300..3000: the interval starts at the first command (300, not 0); snapshots when 1000 ms passed
  // since the last: at 1500 (seq 5), 2700 (seq 9)
  assert.deepEqual(snapshots.saved.map((s) => s.seq), [5, 9]);
});

test('a fresh exchange does not snapshot its first command (the time interval starts there, not at epoch 0)', async () => {
  let now = Date.UTC(2026, 10, 22);
  const snapshots = new MemorySnapshots();
  const { seq } = make({ snapshots, snapshotEveryMs: 300_000, clock: () => now });
  for (let i = 0; i < 5; i++) {
    now += 1000;
    await seq.submit(deposit(i));
  }
  await tick();
  assert.deepEqual(snapshots.saved.map((s) => s.seq), []);
  now += 300_000;
  await seq.submit(deposit(5));
  await tick();
  assert.deepEqual(snapshots.saved.map((s) => s.seq), [6]);
});

test('stop: refuses new commands, acknowledges in-flight ones, takes a final snapshot', async () => {
  const snapshots = new MemorySnapshots();
  const { seq, journal } = make({ snapshots });
  const inFlight = Array.from({ length: 20 }, (_, i) => seq.submit(deposit(i)));
  const stopped = seq.stop();
  await assert.rejects(seq.submit(deposit(99)), SequencerStoppedError);
  await stopped;
  assert.equal(seq.state, 'stopped');
  assert.equal((await Promise.all(inFlight)).length, 20);
  assert.equal((journal as MemoryJournal).entries.length, 20);
  assert.deepEqual(snapshots.saved.map((s) => s.seq), [20]);
});

test('checkpoint resolves with a hash once its seq is durable', async () => {
  const journal = new GatedJournal();
  const { seq, engine } = make({ journal });
  void seq.submit(deposit(1));
  const cp = seq.checkpoint();
  let done = false;
  void cp.then(() => (done = true));
  await tick();
  assert.equal(done, false);
  journal.openGates();
  const { seq: at, stateHash } = await cp;
  assert.equal(at, 1);
  assert.equal(stateHash, engine.stateHash());
});

test('refuses to start when engine and journal disagree', () => {
  const journal = new MemoryJournal();
  journal.append(1, { kind: 'matcher.state', ts: 1, state: 'active' });
  assert.throws(() => new Sequencer({ engine: createFakeEngine(), journal, logger: silentLogger }), /recover first/);
});
