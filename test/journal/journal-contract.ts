/**
 * The contract every CommandJournal and SnapshotStore adapter keeps, run against each of them (SQLite and
 * files in sqlite-contract.test.ts, NATS JetStream in jetstream-contract.test.ts). A harness opens the
 * adapter on fresh storage, reopens the same storage, and damages it the way that storage can be damaged.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Command } from '../../src/engine/commands.js';
import { createEngine, restoreEngine } from '../../src/engine/engine.js';
import {
  JournalIntegrityError, JournalWriteError, serializeSnapshot, SnapshotIntegrityError,
  type CommandJournal, type JournalEntry, type JournalReader, type SnapshotStore,
} from '../../src/journal/ports.js';
import { restoreNewestVerified } from '../../src/sequencer/recovery.js';
import { deposit } from './helpers.js';

/** Fresh storage for one test; `open` may be called again for a second handle on the same storage. */
export interface JournalStorage {
  open(): Promise<CommandJournal>;
  /**
   * Damages stored commands behind the journal's back, after seqs 1..`durable` were flushed (the adapter's
   * kind of damage: a changed row, a damaged message). Reading from 0 must then fail with `where` in the error.
   */
  damage(durable: number): Promise<{ where: RegExp }>;
  dispose(): Promise<void>;
}

export interface SnapshotStorage {
  open(keep: number): Promise<SnapshotStore>;
  /** Rewrites the stored bytes of the snapshot at `seq` with one byte of its body changed. */
  damage(seq: number): Promise<void>;
  dispose(): Promise<void>;
}

const cmd = (i: number, transferId = `t${i}`): Command => ({ kind: 'funds.deposit', ts: 1000 + i, userId: 1 + (i % 5), amount: String(i), transferId });

export async function entries(reader: JournalReader): Promise<JournalEntry[]> {
  const out: JournalEntry[] = [];
  for await (const e of reader) out.push(e);
  return out;
}

const seqs = (n: number, from = 1) => Array.from({ length: n }, (_, k) => from + k);

async function using<T>(storage: { dispose(): Promise<void> }, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } finally {
    await storage.dispose();
  }
}

/** `skip`: false, or why the adapter's server is not there (test/services.ts decides). */
export function journalContract(adapter: string, fresh: () => Promise<JournalStorage>, skip: false | string = false): void {
  const opts = { skip };

  test(`${adapter} journal: appends are durable only after flush, read back in order, tail kept on reopen`, opts, async () => {
    const storage = await fresh();
    await using(storage, async () => {
      const j = await storage.open();
      assert.equal(j.lastSeq(), 0);
      assert.equal(j.lastTs(), 0);
      for (let i = 1; i <= 100; i++) j.append(i, cmd(i));
      assert.equal(j.lastSeq(), 100);
      assert.equal(j.durableSeq(), 0);
      assert.deepEqual(await entries(j.read(0)), [], 'nothing durable before flush');
      await j.flush();
      assert.equal(j.durableSeq(), 100);
      const all = await entries(j.read(0));
      assert.deepEqual(all.map((e) => e.seq), seqs(100));
      assert.deepEqual(all.map((e) => e.command), seqs(100).map((i) => cmd(i)));
      assert.deepEqual((await entries(j.read(95))).map((e) => e.seq), [96, 97, 98, 99, 100]);
      assert.deepEqual(await entries(j.read(100)), []);
      j.append(101, cmd(101));
      await j.close(); // close flushes

      const again = await storage.open();
      assert.equal(again.lastSeq(), 101);
      assert.equal(again.durableSeq(), 101);
      assert.equal(again.lastTs(), cmd(101).ts);
      assert.throws(() => again.append(103, cmd(103)), JournalIntegrityError, 'a gap is refused');
      assert.throws(() => again.append(101, cmd(101)), JournalIntegrityError, 'a repeat is refused');
      again.append(102, cmd(102));
      await again.close();
      const third = await storage.open();
      assert.deepEqual((await entries(third.read(99))).map((e) => e.seq), [100, 101, 102]);
      await third.close();
    });
  });

  test(`${adapter} journal: overlapping flushes and a large group all land, in order, read from any point`, opts, async () => {
    const storage = await fresh();
    await using(storage, async () => {
      const j = await storage.open();
      const flushes: Array<Promise<void>> = [];
      let seq = 0;
      // Many small groups in flight at once, then one of 30,000 commands (over a MiB of payload).
      for (let g = 0; g < 20; g++) {
        for (let k = 0; k < 5; k++) j.append(++seq, cmd(seq));
        flushes.push(j.flush());
      }
      for (let k = 0; k < 30_000; k++) j.append(++seq, cmd(seq));
      flushes.push(j.flush());
      await Promise.all(flushes);
      assert.equal(j.durableSeq(), seq);
      const all = await entries(j.read(0));
      assert.deepEqual(all.map((e) => e.seq), seqs(seq));
      assert.deepEqual(all[seq - 1].command, cmd(seq));
      for (const from of [1, 57, 100, 15_000, seq - 1]) {
        const tail = await entries(j.read(from));
        assert.equal(tail.length, seq - from, `read(${from})`);
        assert.equal(tail[0].seq, from + 1);
        assert.deepEqual(tail[0].command, cmd(from + 1));
      }
      await j.close();
    });
  });

  test(`${adapter} journal: damaged stored commands are refused on read, naming where`, opts, async () => {
    const storage = await fresh();
    await using(storage, async () => {
      const j = await storage.open();
      for (let i = 1; i <= 10; i++) j.append(i, cmd(i));
      await j.flush();
      await j.close();
      const { where } = await storage.damage(10);
      const reopened = await storage.open();
      await assert.rejects(entries(reopened.read(0)), (err: Error) => {
        assert.ok(err instanceof JournalIntegrityError, `${err.name}: ${err.message}`);
        assert.match(err.message, where);
        return true;
      });
      await reopened.close().catch(() => undefined);
    });
  });

  test(`${adapter} journal: a second writer on the same log is refused and fails stop`, opts, async () => {
    const storage = await fresh();
    await using(storage, async () => {
      const first = await storage.open();
      const second = await storage.open();
      for (let i = 1; i <= 3; i++) first.append(i, cmd(i));
      await first.flush();
      // The second writer opened at the same tail and now appends the same seqs: fenced.
      second.append(1, cmd(1, 'from-the-second-writer'));
      await assert.rejects(second.flush(), JournalWriteError);
      assert.throws(() => second.append(2, cmd(2)), JournalWriteError, 'fail-stop: later appends refused too');
      await assert.rejects(second.flush(), JournalWriteError);
      // The first writer goes on; the log holds only its commands.
      first.append(4, cmd(4));
      await first.flush();
      assert.deepEqual((await entries(first.read(0))).map((e) => e.command), seqs(4).map((i) => cmd(i)));
      await first.close();
      await second.close().catch(() => undefined);
    });
  });
}

/** A real engine with some state, snapshotted at each of `rounds` points. */
function engineSnapshots(rounds: number) {
  const engine = createEngine();
  const out = [];
  let ts = Date.UTC(2026, 0, 5);
  for (let r = 0; r < rounds; r++) {
    for (let u = 1; u <= 3; u++) engine.apply({ ...deposit(r * 10 + u, u), ts: ts++ } as Command);
    out.push(serializeSnapshot(engine, ts));
  }
  return out;
}

export function snapshotContract(adapter: string, fresh: () => Promise<SnapshotStorage>, skip: false | string = false): void {
  const opts = { skip };

  test(`${adapter} snapshots: save, list, load verified, pruned to the newest N`, opts, async () => {
    const storage = await fresh();
    await using(storage, async () => {
      const store = await storage.open(2);
      const taken = engineSnapshots(3);
      for (const s of taken) await store.save(s);
      const listed = await store.list();
      assert.deepEqual(listed.map((s) => s.seq), taken.slice(1).map((s) => s.seq), 'only the newest two kept, oldest first');
      for (const info of listed) assert.ok(info.bytes > taken[0].json.length && info.savedAt > 0);
      const newest = taken[2];
      const loaded = await store.load(newest.seq);
      assert.equal(loaded.stateHash, newest.stateHash);
      assert.equal(restoreEngine(loaded.snapshot).stateHash(), newest.stateHash, 'restores to the recorded state');
      await assert.rejects(store.load(taken[0].seq), SnapshotIntegrityError, 'a pruned snapshot is gone');
      await store.close();
      const reopened = await storage.open(2);
      assert.deepEqual((await reopened.list()).map((s) => s.seq), listed.map((s) => s.seq), 'kept across reopen');
      await reopened.close();
    });
  });

  test(`${adapter} snapshots: a damaged one is refused and recovery uses the one before`, opts, async () => {
    const storage = await fresh();
    await using(storage, async () => {
      const store = await storage.open(3);
      const taken = engineSnapshots(3);
      for (const s of taken) await store.save(s);
      await storage.damage(taken[2].seq);
      await assert.rejects(store.load(taken[2].seq), SnapshotIntegrityError);
      const { engine, skipped } = await restoreNewestVerified(store, restoreEngine);
      assert.deepEqual(skipped.map((s) => s.seq), [taken[2].seq]);
      assert.equal(engine?.seq, taken[1].seq);
      assert.equal(engine?.stateHash(), taken[1].stateHash);
      await store.close();
    });
  });
}
