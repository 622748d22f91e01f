// Over 400 lines: submit, group commit, snapshots and fail-stop share one ordering, kept in one place.
/**
 * The single writer. Every state change goes through `submit`, which
 *   1. stamps `ts` (monotonic non-decreasing, from an injectable clock),
 *   2. applies the command to the engine synchronously (arrival order = seq order),
 *   3. appends it to the journal, unless the engine refused it without changing anything: such a refusal
 *      uses no seq and is never journaled (a refused request leaves the sequence where it was),
 *   4. after the group-commit flush covering it, publishes its events and resolves the caller.
 * Nobody sees a reply or an event that a crash could take back: a retracted refusal is answered only after
 * the commands before it are durable, since what it says may depend on them.
 *
 * Fail-stop: if the journal cannot write, the sequencer refuses everything from then on and rejects
 * whatever is not durable. The in-memory engine is then ahead of the journal and must not be trusted:
 * the process should exit (`onFatal`) and recover from disk.
 */
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import type { ExchangeEngine } from '../engine/api.js';
import type { Command, CommandInput, CommandKind } from '../engine/commands.js';
import type { CommandResult } from '../engine/records.js';
import { JournalIntegrityError, serializeSnapshot, type CommandJournal, type SerializedSnapshot, type SnapshotStore } from '../journal/ports.js';
import type { EventBroker, SnapshotReplica } from './ports.js';
import { newSequencerStats, type SequencerStats } from './stats.js';


export interface SequencerOptions {
  engine: ExchangeEngine;
  journal: CommandJournal;
  snapshots?: SnapshotStore;
  /**
   * Takes the snapshots (all but the one on stop) off the event loop, from a replica that follows the
   * journal and writes to the same store as `snapshots`. Without it they are captured on this thread.
   */
  replica?: SnapshotReplica;
  bus?: EventBroker;
  /** Epoch ms; injectable so tests drive time. Default Date.now. */
  clock?: () => number;
  /**
   * Group-commit window. 0 (default): flush at the end of the current event-loop turn, so every submit of
   * that turn shares one transaction. > 0: wait this many ms to gather more (fewer fsyncs, more latency).
   */
  flushDelayMs?: number;
  /**
   * Group commits that may be in flight at once (default 8). A new group is cut and handed to the journal
   * while earlier ones are still being made durable (a journal answers flushes in order), so commands are
   * not held back a whole fsync just because the previous group is still committing; acknowledgements stay
   * in seq order. 1 = one flush at a time.
   */
  maxFlushesInFlight?: number;
  /**
   * A group is also cut as soon as this many commands wait (default 1,024), without waiting for the end of
   * the turn: under a burst the writer commits the first part while the rest is still being applied, so
   * most of a long turn is durable — and acknowledged right after it — instead of being held (with its
   * results) through the next turn. 0 = only at the end of the turn / flushDelayMs.
   */
  maxGroupCommands?: number;
  /** Take a snapshot after this many commands since the last one (0 = never by count). */
  snapshotEveryCommands?: number;
  /** …or when this much command time has passed since the last one (0 = never by time). */
  snapshotEveryMs?: number;
  /** Snapshot on `stop()` so the next start replays nothing. Default true when a store is given. */
  snapshotOnStop?: boolean;
  logger?: pino.Logger;
  /** Called once when the sequencer halts on an error; the app should exit and let recovery run. */
  onFatal?: (err: Error) => void;
}

export type SequencerState = 'running' | 'stopping' | 'stopped' | 'failed';

export class SequencerStoppedError extends Error {
  override name = 'SequencerStoppedError';
}

/** The engine threw (a bug: it must refuse bad input, not throw). Its state may be half-changed. */
export class EngineFaultError extends Error {
  override name = 'EngineFaultError';
}

interface Pending {
  /** Its own seq; for a retracted refusal, the seq of the command before it. */
  seq: number;
  retracted: boolean;
  ts: number;
  kind: CommandKind;
  result: CommandResult;
  submittedAt: number;
  resolve: (r: CommandResult) => void;
  reject: (err: Error) => void;
}

/** A group handed to the journal: acknowledged once its flush (and every earlier one) has resolved. */
interface InFlightFlush {
  batch: Pending[];
  startedAt: number;
  /** undefined while the flush is pending; true once durable; the error if it failed. */
  outcome: true | Error | undefined;
  finishedAt: number;
}

interface DurableWaiter {
  seq: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class Sequencer {
  readonly engine: ExchangeEngine;
  readonly stats: SequencerStats = newSequencerStats();

  private readonly journal: CommandJournal;
  private readonly snapshots: SnapshotStore | undefined;
  private readonly bus: EventBroker | undefined;
  private readonly clock: () => number;
  private readonly flushDelayMs: number;
  private readonly maxFlushesInFlight: number;
  private readonly maxGroupCommands: number;
  private readonly snapshotEveryCommands: number;
  private readonly snapshotEveryMs: number;
  private readonly snapshotOnStop: boolean;
  private readonly log: pino.Logger;
  private readonly onFatal: ((err: Error) => void) | undefined;

  private status: SequencerState = 'running';
  private failure: Error | undefined;
  private lastTs: number;
  private pending: Pending[] = [];
  private flushScheduled = false;
  /** Flushes handed to the journal and not yet acknowledged, oldest first. */
  private inFlight: InFlightFlush[] = [];
  private journalError: Error | undefined;
  private fatalReported = false;
  private durableSeq: number;
  private durableWaiters: DurableWaiter[] = [];

  private lastSnapshotSeq: number;
  private lastSnapshotTs: number;
  /**
   * Due, waiting for the journal to cover it (a snapshot must never be ahead of the journal): captured
   * already (`snapshot`), or to be taken by the replica at `seq`.
   */
  private snapshotWaiting: { seq: number; ts: number; snapshot?: SerializedSnapshot; done: Array<(err?: Error) => void> } | undefined;
  private snapshotSaving = false;
  /** Dropped after a failure: snapshots are then captured on this thread again. */
  private replica: SnapshotReplica | undefined;

  constructor(options: SequencerOptions) {
    this.engine = options.engine;
    this.journal = options.journal;
    this.snapshots = options.snapshots;
    this.replica = options.snapshots ? options.replica : undefined;
    this.bus = options.bus;
    this.clock = options.clock ?? Date.now;
    this.flushDelayMs = options.flushDelayMs ?? 0;
    this.maxFlushesInFlight = Math.max(1, Math.floor(options.maxFlushesInFlight ?? 8));
    const maxGroup = Math.floor(options.maxGroupCommands ?? 1024);
    this.maxGroupCommands = maxGroup > 0 ? maxGroup : Infinity;
    this.snapshotEveryCommands = options.snapshotEveryCommands ?? 0;
    this.snapshotEveryMs = options.snapshotEveryMs ?? 0;
    this.snapshotOnStop = options.snapshotOnStop ?? options.snapshots !== undefined;
    this.log = options.logger ?? pino({ name: 'sequencer', level: process.env.LOG_LEVEL ?? 'info' });
    this.onFatal = options.onFatal;
    if (this.engine.seq !== this.journal.lastSeq()) {
      throw new JournalIntegrityError(
        `engine is at seq ${this.engine.seq} but the journal ends at ${this.journal.lastSeq()}; recover first`,
      );
    }
    this.durableSeq = this.journal.durableSeq();
    this.lastTs = this.journal.lastTs();
    this.lastSnapshotSeq = this.engine.seq;
    this.lastSnapshotTs = this.lastTs;
  }

  get state(): SequencerState {
    return this.status;
  }

  /** Seq of the last command applied (may not be durable yet). */
  get seq(): number {
    return this.engine.seq;
  }

  /** `requestId`: the gateway request that carried the command, journaled with it (JournalEntry.requestId). */
  submit(input: CommandInput, requestId?: string): Promise<CommandResult> {
    if (this.status !== 'running') {
      return Promise.reject(this.failure ?? new SequencerStoppedError(`sequencer is ${this.status}`));
    }
    const now = this.clock();
    const ts = now > this.lastTs ? now : this.lastTs;
    // Same as `{ ...input, ts }` (every own property of the input, then the stamped ts), written so V8 stays
    // on its fast paths: adding `ts` after the spread takes a slow path (docs/performance.md, "Engine").
    const command = { ts: 0, ...input } as Command;
    command.ts = ts;
    const seq = this.engine.seq + 1;

    const t0 = performance.now();
    let result: CommandResult;
    try {
      result = this.engine.apply(command, true);
    } catch (err) {
      const fault = new EngineFaultError(`engine threw on seq ${seq} (${command.kind}): ${String(err)}`, { cause: err });
      // Commands before this one are fine: let them become durable and be acknowledged.
      this.halt(fault, true);
      return Promise.reject(fault);
    }
    const t1 = performance.now();
    if (result.retracted === true) return this.answerRetracted(command, result, t0, t1);
    if (this.engine.seq !== seq) {
      const err = new JournalIntegrityError(`engine seq ${this.engine.seq} after applying seq ${seq}`);
      this.halt(err, true);
      return Promise.reject(err);
    }
    try {
      this.journal.append(seq, command, requestId);
    } catch (err) {
      // E.g. the command is not JSON-serializable. The engine has applied it, so this process must not go on;
      // earlier commands are unaffected and still get flushed.
      const e = err instanceof Error ? err : new Error(String(err));
      this.halt(e, true);
      return Promise.reject(e);
    }
    this.lastTs = ts;

    const stats = this.stats;
    stats.commandsByKind[command.kind] = (stats.commandsByKind[command.kind] ?? 0) + 1;
    if (!result.reply.ok) stats.refusedByKind[command.kind] = (stats.refusedByKind[command.kind] ?? 0) + 1;
    stats.applyLatency.observe((t1 - t0) / 1000);

    const promise = new Promise<CommandResult>((resolve, reject) => {
      this.pending.push({ seq, retracted: false, ts, kind: command.kind, result, submittedAt: t0, resolve, reject });
    });
    this.maybeSnapshot(seq, ts);
    if (this.pending.length >= this.maxGroupCommands) this.runFlush();
    else this.scheduleFlush();
    return promise;
  }

  /** A refusal that changed nothing: queued behind the commands before it, with no journal entry and no event. */
  private answerRetracted(command: Command, result: CommandResult, t0: number, t1: number): Promise<CommandResult> {
    const stats = this.stats;
    stats.commandsByKind[command.kind] = (stats.commandsByKind[command.kind] ?? 0) + 1;
    stats.refusedByKind[command.kind] = (stats.refusedByKind[command.kind] ?? 0) + 1;
    stats.applyLatency.observe((t1 - t0) / 1000);
    const promise = new Promise<CommandResult>((resolve, reject) => {
      this.pending.push({ seq: this.engine.seq, retracted: true, ts: command.ts, kind: command.kind, result, submittedAt: t0, resolve, reject });
    });
    if (this.pending.length >= this.maxGroupCommands) this.runFlush();
    else this.scheduleFlush();
    return promise;
  }

  /**
   * Consistent point for `verifyJournal`: the state hash at a seq, resolved once that seq is durable
   * (so a replay of the journal can reach it).
   */
  async checkpoint(): Promise<{ seq: number; stateHash: string }> {
    const seq = this.engine.seq;
    const stateHash = this.engine.stateHash();
    await this.whenDurable(seq);
    return { seq, stateHash };
  }

  /** Takes a snapshot now (between commands) and resolves when it is stored. Returns its seq. */
  async snapshotNow(): Promise<number> {
    if (!this.snapshots) throw new Error('no snapshot store configured');
    if (this.status === 'failed') throw this.failure ?? new SequencerStoppedError('sequencer failed');
    const seq = this.engine.seq;
    await new Promise<void>((resolve, reject) => {
      const done = (err?: Error) => (err ? reject(err) : resolve());
      // While stopping nothing else runs: capturing here is quicker than the replica catching up.
      if (this.replica && this.status === 'running') this.requestSnapshot(seq, this.lastTs, done);
      else this.captureSnapshot(this.lastTs, done);
    });
    return seq;
  }

  /** Stops accepting commands, makes everything accepted durable and acknowledged, then snapshots. */
  async stop(): Promise<void> {
    if (this.status === 'running') this.status = 'stopping';
    await this.whenDurable(this.engine.seq).catch(() => undefined);
    await this.idleSnapshots(); // a replica snapshot in flight finishes first: one writer of the store at a time
    if (this.status === 'stopping' && this.snapshots && this.snapshotOnStop && this.engine.seq > this.lastSnapshotSeq) {
      await this.snapshotNow().catch((err: unknown) => this.log.error({ err }, 'final snapshot failed'));
    }
    await this.idleSnapshots();
    await this.bus?.drain();
    if (this.status === 'stopping') this.status = 'stopped';
  }

  // ---- group commit ----

  private scheduleFlush(): void {
    // With the maximum in flight, the next group is cut when the oldest one is acknowledged.
    if (this.flushScheduled || this.inFlight.length >= this.maxFlushesInFlight) return;
    this.flushScheduled = true;
    const run = (): void => {
      this.flushScheduled = false;
      this.runFlush();
    };
    if (this.flushDelayMs > 0) setTimeout(run, this.flushDelayMs);
    else setImmediate(run);
  }

  private runFlush(): void {
    // (A flush cut early by size leaves the scheduled one in place: it takes the rest of the turn.)
    if (this.pending.length === 0 || this.inFlight.length >= this.maxFlushesInFlight) return;
    // Cut the batch and call flush() with no await in between: the flush covers exactly this batch.
    const batch = this.pending;
    this.pending = [];
    const f: InFlightFlush = { batch, startedAt: performance.now(), outcome: undefined, finishedAt: 0 };
    this.inFlight.push(f);
    let flushed: Promise<void>;
    try {
      flushed = this.journal.flush();
    } catch (err) {
      flushed = Promise.reject(err);
    }
    flushed.then(
      () => {
        f.outcome = true;
        f.finishedAt = performance.now();
        this.settleFlushes();
      },
      (err: unknown) => {
        f.outcome = err instanceof Error ? err : new Error(String(err));
        this.settleFlushes();
      },
    );
  }

  /** Acknowledges (or rejects) the finished flushes at the head of the queue, in seq order. */
  private settleFlushes(): void {
    const stats = this.stats;
    while (this.inFlight.length > 0 && this.inFlight[0].outcome !== undefined) {
      const f = this.inFlight.shift()!;
      const batch = f.batch;
      // Fail-stop: after a failed flush nothing later is acknowledged, whatever its own flush said.
      const outcome = this.journalError ?? f.outcome!;
      if (outcome !== true) {
        this.journalError = outcome;
        for (const p of batch) p.reject(outcome);
        this.halt(outcome, false);
        continue;
      }
      const t1 = f.finishedAt;
      stats.flushLatency.observe((t1 - f.startedAt) / 1000);
      stats.flushes++;
      this.durableSeq = batch[batch.length - 1].seq;
      const bus = this.bus;
      const ack = stats.ackLatency;
      for (let i = 0; i < batch.length; i++) {
        const p = batch[i];
        if (bus && !p.retracted) {
          try {
            bus.publish({ seq: p.seq, ts: p.ts, kind: p.kind, events: p.result.events });
          } catch (err) {
            this.log.error({ err, seq: p.seq }, 'event bus publish failed');
          }
        }
        if (!p.retracted) stats.flushedCommands++;
        ack.observe((t1 - p.submittedAt) / 1000);
        p.resolve(p.result);
      }
    }
    this.releaseDurableWaiters();
    this.trySaveSnapshot();
    if (this.pending.length > 0) this.scheduleFlush();
    else if (this.status === 'failed' && this.inFlight.length === 0) this.fatal();
  }

  private whenDurable(seq: number): Promise<void> {
    if (seq <= this.durableSeq) return Promise.resolve();
    if (this.status === 'failed' && this.pending.length === 0 && this.inFlight.length === 0) {
      return Promise.reject(this.failure);
    }
    return new Promise((resolve, reject) => {
      this.durableWaiters.push({ seq, resolve, reject });
      this.scheduleFlush();
    });
  }

  private releaseDurableWaiters(): void {
    if (this.durableWaiters.length === 0) return;
    const still: DurableWaiter[] = [];
    for (const w of this.durableWaiters) (w.seq <= this.durableSeq ? w.resolve() : still.push(w));
    this.durableWaiters = still;
  }

  /**
   * Stops accepting commands. With `flushPending` the commands already journaled still get flushed and
   * acknowledged (used when the fault is in the command being submitted, not in the journal).
   */
  private halt(err: Error, flushPending: boolean): void {
    if (this.status === 'failed') return;
    this.status = 'failed';
    this.failure = err;
    this.log.fatal({ err, seq: this.engine.seq, durableSeq: this.durableSeq }, 'sequencer halted');
    if (flushPending && (this.pending.length > 0 || this.inFlight.length > 0)) {
      this.scheduleFlush(); // settleFlushes calls fatal() once the tail is durable
      return;
    }
    this.fatal();
  }

  private fatal(): void {
    const err = this.failure ?? new SequencerStoppedError('sequencer failed');
    for (const p of this.pending) p.reject(err);
    this.pending = [];
    for (const w of this.durableWaiters) w.reject(err);
    this.durableWaiters = [];
    const cb = this.onFatal;
    if (cb && !this.fatalReported) queueMicrotask(() => cb(err));
    this.fatalReported = true;
  }

  // ---- snapshots ----

  private maybeSnapshot(seq: number, ts: number): void {
    if (!this.snapshots) return;
    const byCount = this.snapshotEveryCommands > 0 && seq - this.lastSnapshotSeq >= this.snapshotEveryCommands;
    // An empty journal has no time yet: the interval starts at the first command, not at 1970.
    if (this.lastSnapshotTs === 0) this.lastSnapshotTs = ts;
    const byTime = this.snapshotEveryMs > 0 && ts - this.lastSnapshotTs >= this.snapshotEveryMs;
    if (!byCount && !byTime) return;
    if (this.replica) this.requestSnapshot(seq, ts);
    else this.captureSnapshot(ts);
  }

  /** Due at `seq`: the replica takes it once the journal holds `seq` durably; nothing is captured here. */
  private requestSnapshot(seq: number, ts: number, done?: (err?: Error) => void): void {
    this.stats.snapshotsTaken++;
    this.lastSnapshotSeq = seq;
    this.lastSnapshotTs = ts;
    this.queueSnapshot({ seq, ts }, done);
  }

  /** Captures synchronously (between two commands, so consistent); the write waits for the journal. */
  private captureSnapshot(ts: number, done?: (err?: Error) => void): void {
    const t0 = performance.now();
    let snapshot: SerializedSnapshot;
    try {
      snapshot = serializeSnapshot(this.engine, ts);
    } catch (err) {
      this.stats.snapshotFailures++;
      this.log.error({ err }, 'snapshot capture failed');
      done?.(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    this.stats.snapshotCaptureLatency.observe((performance.now() - t0) / 1000);
    this.stats.snapshotsTaken++;
    this.lastSnapshotSeq = snapshot.seq;
    this.lastSnapshotTs = ts;
    this.queueSnapshot({ seq: snapshot.seq, ts, snapshot }, done);
  }

  private queueSnapshot(due: { seq: number; ts: number; snapshot?: SerializedSnapshot }, done?: (err?: Error) => void): void {
    // Only the newest waiting snapshot matters; an older one still waiting is superseded.
    const dones = this.snapshotWaiting?.done ?? [];
    if (done) dones.push(done);
    this.snapshotWaiting = { ...due, done: dones };
    if (due.seq > this.durableSeq) this.scheduleFlush();
    this.trySaveSnapshot();
  }

  private trySaveSnapshot(): void {
    const waiting = this.snapshotWaiting;
    if (!waiting || this.snapshotSaving || !this.snapshots) return;
    if (waiting.seq > this.durableSeq) return;
    this.snapshotWaiting = undefined;
    this.snapshotSaving = true;
    const { snapshot } = waiting;
    const replica = this.replica;
    const saved: Promise<Record<string, number> | undefined> = snapshot
      ? this.snapshots.save(snapshot).then(() => ({ bytes: snapshot.json.length }))
      : replica
        ? replica.snapshotAt(waiting.seq, waiting.ts).then(({ seq, bytes, replayed, ms, leftTo }) => {
          if (leftTo) {
            this.stats.snapshotsLeftToStandby++;
            this.log.debug({ seq: waiting.seq, standbySeq: seq }, 'snapshot left to a standby');
            return undefined;
          }
          this.stats.snapshotReplicaLatency.observe(ms / 1000);
          return { bytes, replayed, replicaMs: ms };
        })
        : Promise.reject(new Error('no snapshot replica'));
    saved.then(
      (info) => {
        if (info) {
          this.stats.snapshotsSaved++;
          this.stats.lastSnapshotSeq = waiting.seq;
          this.log.info({ seq: waiting.seq, ...info }, 'snapshot saved');
        }
        this.snapshotSaving = false;
        for (const d of waiting.done) d();
        this.trySaveSnapshot();
      },
      (err: unknown) => {
        // Not fatal: the journal still has everything; recovery just replays more.
        this.stats.snapshotFailures++;
        this.log.error({ err, seq: waiting.seq }, 'snapshot save failed');
        if (!snapshot && this.replica === replica) {
          // The replica is broken (or gone): later snapshots are captured on this thread again.
          this.replica = undefined;
          this.log.warn('snapshot replica disabled; capturing snapshots on the sequencer thread');
        }
        this.snapshotSaving = false;
        const e = err instanceof Error ? err : new Error(String(err));
        for (const d of waiting.done) d(e);
        this.trySaveSnapshot();
      },
    );
  }

  private async idleSnapshots(): Promise<void> {
    while (this.snapshotSaving || (this.snapshotWaiting && this.snapshotWaiting.seq <= this.durableSeq)) {
      await new Promise((r) => setTimeout(r, 1));
    }
  }
}
