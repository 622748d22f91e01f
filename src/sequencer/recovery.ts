/**
 * Startup recovery (latest snapshot + journal tail) and journal verification (replay from zero and compare
 * state hashes). Both only use the ports, so they work for any journal/snapshot adapter.
 */
import { performance } from 'node:perf_hooks';
import type { EngineSnapshot, ExchangeEngine } from '../engine/api.js';
import type { CommandResult } from '../engine/records.js';
import { JournalIntegrityError, type CommandJournal, type JournalEntry, type JournalReader, type SnapshotStore } from '../journal/ports.js';

export interface ReplayProgress {
  phase: 'snapshot' | 'replay' | 'done';
  /** Seq the engine is at. */
  seq: number;
  /** Seq the replay will end at (the journal's last durable seq when it started). */
  targetSeq: number;
  /** Commands replayed so far in this run. */
  replayed: number;
}

export type ProgressCallback = (p: ReplayProgress) => void;

export interface RecoverOptions<E extends ExchangeEngine = ExchangeEngine> {
  journal: CommandJournal;
  snapshots?: SnapshotStore;
  createEngine: () => E;
  restoreEngine: (snapshot: EngineSnapshot) => E;
  onProgress?: ProgressCallback;
  /** Commands between progress reports (default 10,000). */
  progressEvery?: number;
  /**
   * Start from the newest snapshot at or before this seq (default: the newest). The composition root
   * passes the read model's last projected seq, so the one replay also yields every event it lacks.
   */
  maxSnapshotSeq?: number;
  /** Called with each replayed command's result (e.g. to project its events into a read model that lags). */
  onApplied?: (entry: JournalEntry, result: CommandResult) => void;
}

/** What a recovery did and where its time went (start-up logs, admin status, the start-up benchmark). */
export interface RecoveryReport {
  /** Seq of the snapshot the engine was restored from (0: none, replayed from the start). */
  snapshotSeq: number;
  /** Journal commands applied after the snapshot. */
  replayed: number;
  /** Reading + parsing the snapshot file. */
  snapshotReadMs: number;
  /** Building engine state from the parsed snapshot. */
  snapshotRestoreMs: number;
  /** Replaying the journal tail. */
  replayMs: number;
}

/**
 * Rebuilds the engine: newest snapshot (if any), then every journaled command after it. Throws
 * JournalIntegrityError on a gap, or when the snapshot is newer than the journal (the sequencer writes a
 * snapshot only after the journal covers it, so that means the journal was lost or swapped).
 */
export async function recover<E extends ExchangeEngine>(options: RecoverOptions<E>): Promise<E> {
  return (await recoverWithReport(options)).engine;
}

/** `recover`, also saying how: snapshot used, commands replayed, and the time of each phase. */
export async function recoverWithReport<E extends ExchangeEngine>(options: RecoverOptions<E>): Promise<{ engine: E; report: RecoveryReport }> {
  const { journal, snapshots, onProgress } = options;
  const targetSeq = journal.durableSeq();
  const t0 = performance.now();
  const snapshot = snapshots ? await snapshots.latest(options.maxSnapshotSeq) : undefined;
  const t1 = performance.now();
  if (snapshot && snapshot.seq > targetSeq) {
    throw new JournalIntegrityError(`snapshot at seq ${snapshot.seq} is ahead of the journal (ends at ${targetSeq})`);
  }
  const engine = snapshot ? options.restoreEngine(snapshot) : options.createEngine();
  if (snapshot && engine.seq !== snapshot.seq) {
    throw new JournalIntegrityError(`restored engine is at seq ${engine.seq}, snapshot says ${snapshot.seq}`);
  }
  const t2 = performance.now();
  onProgress?.({ phase: 'snapshot', seq: engine.seq, targetSeq, replayed: 0 });
  const replayed = await replay(engine, journal.read(engine.seq), targetSeq, onProgress, options.progressEvery, options.onApplied);
  if (engine.seq !== journal.lastSeq()) {
    throw new JournalIntegrityError(`recovered to seq ${engine.seq} but the journal ends at ${journal.lastSeq()}`);
  }
  const t3 = performance.now();
  onProgress?.({ phase: 'done', seq: engine.seq, targetSeq, replayed });
  const ms = (a: number, b: number) => Math.round((b - a) * 10) / 10;
  return {
    engine,
    report: { snapshotSeq: snapshot?.seq ?? 0, replayed, snapshotReadMs: ms(t0, t1), snapshotRestoreMs: ms(t1, t2), replayMs: ms(t2, t3) },
  };
}

export interface VerifyOptions {
  journal: CommandJournal;
  createEngine: () => ExchangeEngine;
  /** The state to check against, typically `await sequencer.checkpoint()` or a recovered engine's. */
  expected: { seq: number; stateHash: string };
  onProgress?: ProgressCallback;
  progressEvery?: number;
  /** Also run engine.checkInvariants() on the replayed state. Default true. */
  checkInvariants?: boolean;
}

export interface VerifyResult {
  ok: boolean;
  seq: number;
  expectedHash: string;
  replayedHash: string;
  /** Message from checkInvariants, if it threw. */
  invariantError?: string;
}

/** Replays the journal from zero into a fresh engine up to `expected.seq` and compares state hashes. */
export async function verifyJournal(options: VerifyOptions): Promise<VerifyResult> {
  const { expected } = options;
  const engine = options.createEngine();
  options.onProgress?.({ phase: 'snapshot', seq: 0, targetSeq: expected.seq, replayed: 0 });
  const replayed = await replay(engine, options.journal.read(0), expected.seq, options.onProgress, options.progressEvery);
  if (engine.seq !== expected.seq) {
    throw new JournalIntegrityError(`journal ends at seq ${engine.seq}, expected state is at ${expected.seq}`);
  }
  let invariantError: string | undefined;
  if (options.checkInvariants ?? true) {
    try {
      engine.checkInvariants();
    } catch (err) {
      invariantError = err instanceof Error ? err.message : String(err);
    }
  }
  const replayedHash = engine.stateHash();
  options.onProgress?.({ phase: 'done', seq: engine.seq, targetSeq: expected.seq, replayed });
  return {
    ok: replayedHash === expected.stateHash && invariantError === undefined,
    seq: engine.seq,
    expectedHash: expected.stateHash,
    replayedHash,
    invariantError,
  };
}

/**
 * Brings `engine` forward to `untilSeq` with the journal's entries after its seq (no progress reports):
 * what a snapshot replica does between two snapshots. Returns the commands applied.
 */
export function replayJournal(engine: ExchangeEngine, reader: JournalReader, untilSeq: number): Promise<number> {
  return replay(engine, reader, untilSeq, undefined, Number.MAX_SAFE_INTEGER);
}

/**
 * Applies entries up to `untilSeq` (inclusive), checking they are contiguous. Yields to the event loop
 * between progress reports so a CLI can redraw and a live server keeps serving during verification.
 */
async function replay(
  engine: ExchangeEngine,
  reader: JournalReader,
  untilSeq: number,
  onProgress: ProgressCallback | undefined,
  progressEvery = 10_000,
  onApplied?: (entry: JournalEntry, result: CommandResult) => void,
): Promise<number> {
  let replayed = 0;
  const step = (entry: JournalEntry): boolean => {
    if (entry.seq > untilSeq) return false;
    if (entry.seq !== engine.seq + 1) {
      throw new JournalIntegrityError(`journal gap: engine at seq ${engine.seq}, next entry is ${entry.seq}`);
    }
    const result = engine.apply(entry.command);
    if (engine.seq !== entry.seq) {
      throw new JournalIntegrityError(`engine at seq ${engine.seq} after replaying entry ${entry.seq}`);
    }
    onApplied?.(entry, result);
    replayed++;
    return true;
  };
  const report = async (): Promise<void> => {
    onProgress?.({ phase: 'replay', seq: engine.seq, targetSeq: untilSeq, replayed });
    await new Promise((r) => setImmediate(r));
  };
  if (Symbol.iterator in reader) {
    // Synchronous reader (SQLite): plain loop, no per-entry await.
    const it = reader[Symbol.iterator]();
    try {
      for (let r = it.next(); !r.done; r = it.next()) {
        if (!step(r.value)) break;
        if (replayed % progressEvery === 0) await report();
      }
    } finally {
      it.return?.();
    }
  } else {
    for await (const entry of reader) {
      if (!step(entry)) break;
      if (replayed % progressEvery === 0) await report();
    }
  }
  return replayed;
}
