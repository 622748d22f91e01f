/**
 * Engine follower (issue 29): a read-only engine on a gateway (later a standby), brought to the newest
 * verified snapshot and then kept current by applying the committed JetStream command log live, with the
 * code recovery uses (`restoreNewestVerified`, `applyJournalEntry`) and the journal's checks (checksum of
 * every message, contiguous seqs). Each applied command's events go out on `bus`, as the leader's do, so
 * a gateway can project and publish from them. Any fault stops it (fail-stop): a follower that skipped or
 * misapplied a command would serve wrong state, so waits reject and `failure` says why.
 */
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import pino from 'pino';
import type { EngineSnapshot, ExchangeEngine } from '../engine/api.js';
import type { CommandResult } from '../engine/records.js';
import { followCommandStream, readCommandTail } from '../journal/jetstream-journal.js';
import { clusterNames } from '../journal/jetstream-names.js';
import type { JournalEntry, SnapshotStore } from '../journal/ports.js';
import type { EventBroker } from '../sequencer/ports.js';
import { applyJournalEntry, restoreNewestVerified } from '../sequencer/recovery.js';
import { FollowerTimeoutError } from './errors.js';
import type { EngineFollower, ReadOnlyEngine } from './ports.js';

export interface EngineFollowerOptions {
  /** Open connection; the caller closes it after the follower. */
  nc: NatsConnection;
  cluster: string;
  /** Where to start from (object store or files); without it the whole log is applied from zero. */
  snapshots?: SnapshotStore;
  /** Start from a snapshot no newer than this seq (a projector must see every batch after its read model's seq). */
  snapshotAtOrBefore?: number;
  createEngine: () => ExchangeEngine;
  restoreEngine: (snapshot: EngineSnapshot) => ExchangeEngine;
  /** Receives one batch per applied command (refusals too, with no events), in seq order. */
  bus?: Pick<EventBroker, 'publish'>;
  /** Called once if the follower stops on a fault (a role exits on it rather than serve stale state). */
  onFailed?: (err: Error) => void;
  /**
   * Called after each command is applied, before the next: a standby records the outcome in its request ledger
   * and its snapshot writer reads the engine here.
   */
  onApplied?: (engine: ExchangeEngine, entry: JournalEntry, result: CommandResult) => void;
  /** Awaited before each command when it returns a promise: a slow consumer of `bus` holds the follower back. */
  pace?: () => Promise<void> | undefined;
  logger?: pino.Logger;
}

export type FollowerState = 'following' | 'failed' | 'closed';

interface Waiter {
  seq: number;
  resolve: () => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/** Entries applied between two turns of the event loop while catching up (reads are served in between). */
const YIELD_EVERY = 5000;

export class JetStreamEngineFollower implements EngineFollower {
  private status: FollowerState = 'following';
  private error: Error | undefined;
  private waiters: Waiter[] = [];
  private readonly abort = new AbortController();
  private readonly done: Promise<void>;

  constructor(
    private readonly live: ExchangeEngine,
    private readonly options: EngineFollowerOptions,
    jsm: JetStreamManager,
    private readonly log: pino.Logger,
  ) {
    const stream = clusterNames(options.cluster).commandStream;
    this.done = this.follow(followCommandStream(options.nc, jsm, stream, live.seq, this.abort.signal));
  }

  get seq(): number {
    return this.live.seq;
  }

  get engine(): ReadOnlyEngine {
    return this.live;
  }

  get state(): FollowerState {
    return this.status;
  }

  /** Why it stopped following, once `state` is 'failed'. */
  get failure(): Error | undefined {
    return this.error;
  }

  waitFor(seq: number, timeoutMs: number): Promise<void> {
    if (this.live.seq >= seq) return Promise.resolve();
    if (this.status !== 'following') return Promise.reject(this.error ?? new Error('engine follower is closed'));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        seq, resolve, reject,
        timer: setTimeout(() => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          reject(new FollowerTimeoutError(`engine follower at seq ${this.live.seq} did not reach seq ${seq} within ${timeoutMs} ms`));
        }, timeoutMs),
      };
      this.waiters.push(waiter);
    });
  }

  async close(): Promise<void> {
    if (this.status === 'following') this.status = 'closed';
    this.abort.abort();
    await this.done;
    this.rejectAll(new Error('engine follower is closed'));
  }

  private async follow(entries: AsyncGenerator<JournalEntry>): Promise<void> {
    const { bus } = this.options;
    let sinceYield = 0;
    try {
      for await (const entry of entries) {
        const held = this.options.pace?.();
        if (held) await held;
        const result = applyJournalEntry(this.live, entry);
        this.options.onApplied?.(this.live, entry, result);
        bus?.publish({ seq: entry.seq, ts: entry.command.ts, kind: entry.command.kind, events: result.events });
        this.release();
        if (++sinceYield >= YIELD_EVERY) {
          sinceYield = 0;
          await new Promise((r) => setImmediate(r));
        }
      }
    } catch (err) {
      if (this.status !== 'following') return;
      this.status = 'failed';
      this.error = err instanceof Error ? err : new Error(String(err));
      this.log.error({ err: this.error, seq: this.live.seq }, 'engine follower stopped: it cannot apply the command log');
      this.rejectAll(this.error);
      this.options.onFailed?.(this.error);
    }
  }

  private release(): void {
    if (this.waiters.length === 0) return;
    const seq = this.live.seq;
    const ready = this.waiters.filter((w) => w.seq <= seq);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => w.seq > seq);
    for (const w of ready) {
      clearTimeout(w.timer);
      w.resolve();
    }
  }

  private rejectAll(err: Error): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) {
      clearTimeout(w.timer);
      w.reject(err);
    }
  }
}

/**
 * Restores the newest verified snapshot (none: an empty engine), then follows the log from the seq after it.
 * A snapshot ahead of the log is refused, as at recovery (the log was lost or swapped).
 */
export async function openEngineFollower(options: EngineFollowerOptions): Promise<JetStreamEngineFollower> {
  const log = options.logger ?? pino({ name: 'engine-follower', level: process.env.LOG_LEVEL ?? 'info' });
  const jsm = await jetstreamManager(options.nc);
  const tail = await readCommandTail(jsm, clusterNames(options.cluster).commandStream);
  const restored = options.snapshots
    ? (await restoreNewestVerified(options.snapshots, options.restoreEngine, { atOrBefore: options.snapshotAtOrBefore, journalSeq: tail.seq, logger: log })).engine
    : undefined;
  const engine = restored ?? options.createEngine();
  log.info({ snapshotSeq: restored?.seq ?? 0, logSeq: tail.seq }, 'engine follower started');
  return new JetStreamEngineFollower(engine, options, jsm, log);
}
