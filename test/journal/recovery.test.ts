import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFileSync, readdirSync } from 'node:fs';
import Database from 'better-sqlite3';
import { openSqliteJournal } from '../../src/journal/sqlite-journal.js';
import { FileSnapshotStore } from '../../src/journal/file-snapshots.js';
import { serializeSnapshot } from '../../src/journal/ports.js';
import { Sequencer } from '../../src/sequencer/sequencer.js';
import { recover, recoverWithReport, verifyJournal, type ReplayProgress } from '../../src/sequencer/recovery.js';
import { createFakeEngine, restoreFakeEngine } from './fake-engine.js';
import { waitFor } from '../realtime/helpers.js';
import { deposit, silentLogger, tempDir } from './helpers.js';

const engines = { createEngine: createFakeEngine, restoreEngine: restoreFakeEngine };

test('snapshot + tail replay equals a full replay from zero', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const journal = await openSqliteJournal({ file: join(dir, 'journal.db') });
    const snapshots = new FileSnapshotStore({ dir: join(dir, 'snapshots'), keep: 2 });
    let now = 1_000;
    const seq = new Sequencer({
      engine: createFakeEngine(), journal, snapshots, snapshotEveryCommands: 300, snapshotOnStop: false,
      clock: () => now++, logger: silentLogger,
    });
    const ps = [];
    for (let i = 0; i < 1000; i++) {
      ps.push(seq.submit(deposit(i % 900))); // some duplicates → refusals in the journal
      if (i % 97 === 0) await new Promise((r) => setImmediate(r));
    }
    await Promise.all(ps);
    await seq.stop();
    const live = seq.engine.stateHash();
    await journal.close();

    const reopened = await openSqliteJournal({ file: join(dir, 'journal.db') });
    const progress: ReplayProgress[] = [];
    const recovered = await recover({ journal: reopened, snapshots, ...engines, onProgress: (p) => progress.push(p), progressEvery: 50 });
    assert.equal(recovered.seq, 1000);
    assert.equal(recovered.stateHash(), live);
    const fromSnapshot = progress[0].seq;
    assert.ok(fromSnapshot >= 600 && fromSnapshot < 1000, `recovered from snapshot at ${fromSnapshot}`);
    assert.equal(progress[progress.length - 1].replayed, 1000 - fromSnapshot);

    const verdict = await verifyJournal({ journal: reopened, createEngine: createFakeEngine, expected: { seq: 1000, stateHash: live } });
    assert.deepEqual({ ok: verdict.ok, seq: verdict.seq }, { ok: true, seq: 1000 });
    assert.equal(verdict.replayedHash, live);
    await reopened.close();
  } finally {
    cleanup();
  }
});

test('verifyJournal reports a mismatch', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const journal = await openSqliteJournal({ file: join(dir, 'journal.db') });
    const seq = new Sequencer({ engine: createFakeEngine(), journal });
    await Promise.all([seq.submit(deposit(1)), seq.submit(deposit(2))]);
    const verdict = await verifyJournal({ journal, createEngine: createFakeEngine, expected: { seq: 2, stateHash: 'nope' } });
    assert.equal(verdict.ok, false);
    assert.equal(verdict.replayedHash, seq.engine.stateHash());
    await journal.close();
  } finally {
    cleanup();
  }
});

test('snapshot store keeps the last N; recovery falls back past a damaged newest file and says so', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const journal = await openSqliteJournal({ file: join(dir, 'journal.db') });
    const store = new FileSnapshotStore({ dir: join(dir, 'snap'), keep: 3 });
    assert.deepEqual(await store.list(), []);
    const engine = createFakeEngine();
    for (let i = 1; i <= 6; i++) {
      const c = { kind: 'funds.deposit' as const, ts: i, userId: 1, amount: '1', transferId: `t${i}` };
      engine.apply(c);
      journal.append(i, c);
      await journal.flush();
      await store.save(serializeSnapshot(engine, i));
    }
    assert.deepEqual((await store.list()).map((s) => s.seq), [4, 5, 6]);
    assert.equal((await store.load(6)).snapshot.seq, 6);
    assert.equal((await store.load(6)).stateHash, engine.stateHash());
    assert.deepEqual(readdirSync(join(dir, 'snap')).filter((n) => n.endsWith('.tmp')), []);

    writeFileSync(join(dir, 'snap', 'snapshot-0000000000000006.json'), '{"version":1,"seq":6,"sta'); // torn / damaged
    writeFileSync(join(dir, 'snap', 'snapshot-0000000000000007.json.tmp'), 'garbage'); // crash mid-write
    await assert.rejects(store.load(6), /checksum header/);
    const { engine: recovered, report } = await recoverWithReport({ journal, snapshots: store, ...engines });
    assert.equal(report.snapshotSeq, 5);
    assert.deepEqual(report.skippedSnapshots.map((s) => s.seq), [6]);
    assert.equal(recovered.stateHash(), engine.stateHash());
    await store.close();
    await journal.close();
  } finally {
    cleanup();
  }
});

test('recovery refuses a snapshot ahead of the journal and a journal with a gap', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const journal = await openSqliteJournal({ file: join(dir, 'journal.db') });
    const store = new FileSnapshotStore({ dir: join(dir, 'snap') });
    const engine = createFakeEngine();
    for (let i = 1; i <= 3; i++) {
      const c = { kind: 'funds.deposit' as const, ts: i, userId: 1, amount: '1', transferId: `t${i}` };
      engine.apply(c);
      journal.append(i, c);
    }
    await journal.flush();
    await store.save(serializeSnapshot({ snapshot: () => ({ ...engine.snapshot(), seq: 9 }), stateHash: () => engine.stateHash() }, 9));
    await assert.rejects(recover({ journal, snapshots: store, ...engines }), /ahead of the journal/);
    await journal.close();

    const raw = new Database(join(dir, 'journal.db'));
    raw.prepare('INSERT INTO commands (seq, ts, body) VALUES (5, 5, ?)').run(
      JSON.stringify({ kind: 'matcher.state', ts: 5, state: 'active' }),
    );
    raw.close();
    const gappy = await openSqliteJournal({ file: join(dir, 'journal.db') });
    await assert.rejects(recover({ journal: gappy, ...engines }), /journal gap: engine at seq 3, next entry is 5/);
    await gappy.close();
  } finally {
    cleanup();
  }
});

test('recovery can start from an older snapshot (maxSnapshotSeq) and hands every replayed result to onApplied', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const journal = await openSqliteJournal({ file: join(dir, 'journal.db') });
    const snapshots = new FileSnapshotStore({ dir: join(dir, 'snapshots'), keep: 3 });
    let now = 1_000;
    const seq = new Sequencer({
      engine: createFakeEngine(), journal, snapshots, snapshotEveryCommands: 100, snapshotOnStop: true,
      clock: () => now++, logger: silentLogger,
    });
    // In chunks, each waiting until every snapshot taken so far is written, so none is superseded by the next.
    for (let i = 0; i < 350; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, j) => seq.submit(deposit(i + j))));
      await waitFor(() => seq.stats.snapshotsSaved === seq.stats.snapshotsTaken, 10_000, 'snapshots written');
    }
    await seq.stop();
    const live = seq.engine.stateHash();
    assert.deepEqual((await snapshots.list()).map((s) => s.seq), [200, 300, 350]);

    // A consumer (the read model) that has seen up to seq 250: start at the snapshot ≤ 250, replay 201…350.
    const applied: number[] = [];
    const { engine, report } = await recoverWithReport({
      journal, snapshots, ...engines, maxSnapshotSeq: 250,
      onApplied: (entry, result) => {
        assert.ok(result.reply, 'a command result');
        applied.push(entry.seq);
      },
    });
    assert.equal(engine.stateHash(), live);
    assert.equal(report.snapshotSeq, 200);
    assert.equal(report.replayed, 150);
    assert.deepEqual(applied, Array.from({ length: 150 }, (_, i) => 201 + i));
    for (const k of ['snapshotReadMs', 'snapshotRestoreMs', 'replayMs'] as const) assert.ok(report[k] >= 0, k);

    // Default: the newest snapshot, nothing to replay after a clean stop.
    const clean = await recoverWithReport({ journal, snapshots, ...engines });
    assert.deepEqual({ snapshotSeq: clean.report.snapshotSeq, replayed: clean.report.replayed }, { snapshotSeq: 350, replayed: 0 });
    await journal.close();
  } finally {
    cleanup();
  }
});
