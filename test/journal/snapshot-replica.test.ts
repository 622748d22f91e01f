import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import fc from 'fast-check';
import { createEngine, restoreEngine } from '../../src/engine/engine.js';
import type { Command, CommandInput } from '../../src/engine/commands.js';
import { openSqliteJournal, type SqliteJournal } from '../../src/journal/sqlite-journal.js';
import { openThreadedSqliteJournal } from '../../src/journal/threaded-sqlite-journal.js';
import { FileSnapshotStore } from '../../src/journal/file-snapshots.js';
import { readJournalFile } from '../../src/journal/sqlite-journal-reader.js';
import { Sequencer } from '../../src/sequencer/sequencer.js';
import { recover, replayJournal } from '../../src/sequencer/recovery.js';
import { ThreadedSnapshotReplica } from '../../src/sequencer/snapshot-replica.js';
import { materialize, opsArb } from '../engine/random-ops.js';
import { waitFor } from '../realtime/helpers.js';
import { silentLogger, tempDir } from './helpers.js';

/** A random but fixed stream of real engine commands (orders, fills, cancels, funds, ticks, …). */
function commands(n: number, seed: number): Command[] {
  const [ops] = fc.sample(opsArb(n, n), { seed, numRuns: 1 });
  return materialize(ops);
}

/** Submits each command at its own ts (the order-id date rule and DAY expiry depend on it). */
async function submitAll(seq: Sequencer, cmds: Command[], clock: { now: number }): Promise<void> {
  const acks: Promise<unknown>[] = [];
  for (let i = 0; i < cmds.length; i++) {
    const { ts, ...input } = cmds[i];
    clock.now = ts;
    acks.push(seq.submit(input as CommandInput));
    if (i % 50 === 49) await new Promise((r) => setImmediate(r));
  }
  await Promise.all(acks);
}

/** State hash of a clean replay of the journal file up to `seq`. */
async function hashAt(file: string, seq: number): Promise<string> {
  const engine = createEngine();
  await replayJournal(engine, readJournalFile(file, 0), seq);
  assert.equal(engine.seq, seq);
  return engine.stateHash();
}

test('replica snapshots: each stored snapshot is the state a clean replay reaches at its seq; nothing is captured on the sequencer thread', async () => {
  const { dir, cleanup } = tempDir();
  const file = join(dir, 'journal.db');
  const snapshotDir = join(dir, 'snapshots');
  try {
    const journal = await openThreadedSqliteJournal({ file });
    const snapshots = new FileSnapshotStore({ dir: snapshotDir, keep: 10 });
    const replica = new ThreadedSnapshotReplica({ location: { kind: 'files', journalFile: file, snapshotDir }, keep: 10 });
    const clock = { now: 0 };
    const seq = new Sequencer({
      engine: createEngine(), journal, snapshots, replica, snapshotEveryCommands: 120, snapshotOnStop: false,
      clock: () => clock.now, logger: silentLogger,
    });
    const cmds = commands(500, 4242);
    for (let from = 0; from < cmds.length; from += 130) {
      const saved = seq.stats.snapshotsSaved;
      await submitAll(seq, cmds.slice(from, from + 130), clock);
      // A snapshot still waiting when the next one falls due is superseded: let each finish.
      await waitFor(() => seq.stats.snapshotsSaved !== saved || seq.stats.snapshotsTaken === saved, 20_000, 'the snapshot due written');
    }

    // An explicit snapshot while running also comes from the replica, at the live state.
    // Refused commands are not journaled (nor counted), so the live seq is below the commands sent.
    const [liveHash, liveSeq] = [seq.engine.stateHash(), seq.engine.seq];
    const at = await seq.snapshotNow();
    assert.equal(at, liveSeq);
    await seq.stop();
    await replica.close();
    await journal.close();

    assert.equal(seq.stats.snapshotCaptureLatency.count, 0, 'no snapshot was captured on the sequencer thread');
    assert.ok(seq.stats.snapshotReplicaLatency.count >= 4, 'the replica took them');
    assert.equal(seq.stats.snapshotFailures, 0);
    const stored = (await snapshots.list()).map((s) => s.seq);
    assert.ok(stored.length >= 4, `snapshots at ${stored.join(', ')}`);
    assert.equal(stored[stored.length - 1], liveSeq);
    for (const s of stored) {
      const { snapshot, stateHash } = await snapshots.load(s);
      assert.equal(snapshot.seq, s);
      assert.equal(restoreEngine(snapshot).stateHash(), await hashAt(file, s), `snapshot at ${s}`);
      assert.equal(stateHash, await hashAt(file, s), `recorded state hash at ${s}`);
    }
    assert.equal(restoreEngine((await snapshots.load((await snapshots.list()).at(-1)!.seq)).snapshot).stateHash(), liveHash);

    // And recovery from them gives the live state.
    const reopened = await openSqliteJournal({ file });
    const recovered = await recover({ journal: reopened, snapshots, createEngine, restoreEngine });
    assert.equal(recovered.stateHash(), liveHash);
    await reopened.close();
    await snapshots.close();
  } finally {
    cleanup();
  }
});

test('replica snapshots: a replica that fails is dropped and later snapshots are captured on the sequencer thread', async () => {
  const { dir, cleanup } = tempDir();
  const file = join(dir, 'journal.db');
  const snapshotDir = join(dir, 'snapshots');
  try {
    const journal: SqliteJournal = await openSqliteJournal({ file });
    const snapshots = new FileSnapshotStore({ dir: snapshotDir, keep: 10 });
    // Pointed at a journal file that does not exist: every replica snapshot fails.
    const replica = new ThreadedSnapshotReplica({ location: { kind: 'files', journalFile: join(dir, 'missing.db'), snapshotDir }, keep: 10 });
    const clock = { now: 0 };
    const seq = new Sequencer({
      engine: createEngine(), journal, snapshots, replica, snapshotEveryCommands: 100, snapshotOnStop: false,
      clock: () => clock.now, logger: silentLogger,
    });
    const cmds = commands(300, 77);
    await submitAll(seq, cmds.slice(0, 150), clock);
    await assert.rejects(seq.snapshotNow());
    await submitAll(seq, cmds.slice(150), clock);
    const [liveHash, liveSeq] = [seq.engine.stateHash(), seq.engine.seq];
    assert.equal(await seq.snapshotNow(), liveSeq);
    await seq.stop();
    await replica.close();
    await journal.close();
    assert.ok(seq.stats.snapshotFailures >= 1);
    assert.ok(seq.stats.snapshotCaptureLatency.count >= 1, 'captured on the sequencer thread after the replica failed');
    assert.equal(restoreEngine((await snapshots.load((await snapshots.list()).at(-1)!.seq)).snapshot).stateHash(), liveHash);
    await snapshots.close();
  } finally {
    cleanup();
  }
});
