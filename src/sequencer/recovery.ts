/**
 * Startup recovery (latest snapshot + journal tail) and journal verification (replay from zero and compare
 * state hashes). Both only use the ports, so they work for any journal/snapshot adapter.
 */
import { performance } from 'node:perf_hooks';
import type pino from 'pino';
import type { EngineSnapshot, ExchangeEngine } from '../engine/api.js';
import type { CommandResult } from '../engine/records.js';
import {
  JournalIntegrityError, SnapshotIntegrityError, type CommandJournal, type JournalEntry, type JournalReader, type SnapshotStore,
} from '../journal/ports.js';

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
  /** Where skipped snapshots are reported (warn), besides the report. */
  logger?: pino.Logger;
}

/** A stored snapshot recovery did not use, and why. */
export interface SkippedSnapshot {
  seq: number;
  reason: string;
}

/** What a recovery did and where its time went (start-up logs, admin status, the start-up benchmark). */
export interface RecoveryReport {
  /** Seq of the snapshot the engine was restored from (0: none, replayed from the start). */
  snapshotSeq: number;
  /** Journal commands applied after the snapshot. */
  replayed: number;
  /** Reading + parsing the snapshot file. */
  snapshotReadMs: number;
  /** Building engine state from the parsed snapshot, and checking its state hash and invariants. */
  snapshotRestoreMs: number;
  /** Newer snapshots that failed verification (newest first); recovery fell back past them. */
  skippedSnapshots: SkippedSnapshot[];
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
  const timing = { readMs: 0, restoreMs: 0 };
  const chosen = snapshots
    ? await restoreNewestVerified(snapshots, options.restoreEngine, { atOrBefore: options.maxSnapshotSeq, journalSeq: targetSeq, logger: options.logger, timing })
    : { engine: undefined, skipped: [] };
  const engine = chosen.engine ?? options.createEngine();
  const snapshotSeq = chosen.engine?.seq ?? 0;
  const t2 = performance.now();
  onProgress?.({ phase: 'snapshot', seq: engine.seq, targetSeq, replayed: 0 });
  const replayed = await replay(engine, journal.read(engine.seq), targetSeq, onProgress, options.progressEvery, options.onApplied);
  if (engine.seq !== journal.lastSeq()) {
    throw new JournalIntegrityError(`recovered to seq ${engine.seq} but the journal ends at ${journal.lastSeq()}`);
  }
  const t3 = performance.now();
  onProgress?.({ phase: 'done', seq: engine.seq, targetSeq, replayed });
  const ms = (a: number) => Math.round(a * 10) / 10;
  return {
    engine,
    report: {
      snapshotSeq, replayed, snapshotReadMs: ms(timing.readMs), snapshotRestoreMs: ms(t2 - t0 - timing.readMs), replayMs: ms(t3 - t2),
      skippedSnapshots: chosen.skipped,
    },
  };
}

export interface RestoreVerifiedOptions {
  /** Only snapshots at or before this seq (default: any). */
  atOrBefore?: number;
  /**
   * The journal's durable end: a snapshot past it means the journal lost commands (or was swapped), which
   * recovery must not paper over, so that throws JournalIntegrityError.
   */
  journalSeq?: number;
  logger?: pino.Logger;
  /** Accumulates the time spent reading + checksumming files (the rest is restoring and checking). */
  timing?: { readMs: number };
}

/**
 * The newest stored snapshot that passes every check, restored: its bytes match their checksum (the
 * store's load), and the restored engine is at the snapshot's seq, has the state hash recorded when it was
 * taken, and passes the engine invariants. A snapshot failing any of them is skipped (logged, and listed in
 * `skipped`) for the next older one; with none left the caller starts from an empty engine and replays the
 * whole journal. Either way the state equals a clean replay.
 */
export async function restoreNewestVerified<E extends ExchangeEngine>(
  store: SnapshotStore,
  restore: (snapshot: EngineSnapshot) => E,
  options: RestoreVerifiedOptions = {},
): Promise<{ engine: E | undefined; skipped: SkippedSnapshot[] }> {
  const atOrBefore = options.atOrBefore ?? Number.MAX_SAFE_INTEGER;
  const seqs = (await store.list()).map((s) => s.seq).filter((seq) => seq <= atOrBefore);
  const newest = seqs.at(-1);
  if (options.journalSeq !== undefined && newest !== undefined && newest > options.journalSeq) {
    throw new JournalIntegrityError(`snapshot at seq ${newest} is ahead of the journal (ends at ${options.journalSeq})`);
  }
  const skipped: SkippedSnapshot[] = [];
  for (let i = seqs.length - 1; i >= 0; i--) {
    const seq = seqs[i];
    try {
      const t0 = performance.now();
      const { snapshot, stateHash } = await store.load(seq);
      if (options.timing) options.timing.readMs += performance.now() - t0;
      let engine: E;
      try {
        engine = restore(snapshot);
      } catch (err) {
        throw new SnapshotIntegrityError(`cannot be restored: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (engine.seq !== seq) throw new SnapshotIntegrityError(`restored engine is at seq ${engine.seq}`);
      const restoredHash = engine.stateHash();
      if (restoredHash !== stateHash) throw new SnapshotIntegrityError(`state hash ${restoredHash} ≠ recorded ${stateHash}`);
      try {
        engine.checkInvariants();
      } catch (err) {
        throw new SnapshotIntegrityError(err instanceof Error ? err.message : String(err));
      }
      return { engine, skipped };
    } catch (err) {
      if (!(err instanceof SnapshotIntegrityError)) throw err;
      skipped.push({ seq, reason: err.message });
      options.logger?.warn({ snapshotSeq: seq, reason: err.message }, 'snapshot failed verification; skipped (an older snapshot or the journal is used)');
    }
  }
  return { engine: undefined, skipped };
}

export interface VerifyOptions {
  /** Only read: a reader of another process's journal will do. */
  journal: Pick<CommandJournal, 'read'>;
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
 * Applies one journaled command as replay does (no refusal retracted, so a journal holding refusals replays),
 * checking it is the next seq: recovery, the snapshot replica and the cluster's engine followers share it.
 */
export function applyJournalEntry(engine: ExchangeEngine, entry: JournalEntry): CommandResult {
  if (entry.seq !== engine.seq + 1) {
    throw new JournalIntegrityError(`journal gap: engine at seq ${engine.seq}, next entry is ${entry.seq}`);
  }
  const result = engine.apply(entry.command);
  if (engine.seq !== entry.seq) {
    throw new JournalIntegrityError(`engine at seq ${engine.seq} after replaying entry ${entry.seq}`);
  }
  return result;
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
    const result = applyJournalEntry(engine, entry);
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
