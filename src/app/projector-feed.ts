/**
 * Feeds event batches to the read-model projector in groups (one project() call per group), behind the
 * sequencer. Batches already projected (seq ≤ last_seq) are skipped by the projector itself.
 *
 * Projection runs behind the acknowledgements (on a worker thread by default), so history reads wait
 * until it has caught up with every command applied when the read starts: a client that got a reply for
 * a command then sees that command's effect in its history (read-your-writes).
 *
 * Never loses a batch: a failed project() call (disk full, a crashed worker) leaves its batches at the head
 * of the queue and is retried with a growing delay until it succeeds; the projector refuses a seq that
 * does not follow its last one. Meanwhile history reads are refused (ReadModelBehindError, 503
 * READ_MODEL_BEHIND) instead of served stale, as is a read that waits longer than its timeout. A graceful
 * stop does not wait for broken storage: what is not projected then is caught up from the journal by the
 * next start. If the queue outgrows `maxBuffered` the feed stops (memory must not grow without bound)
 * until a restart catches the read model up from the journal.
 *
 * Linger: under load a project() call starts at most every `lingerMs` (what arrives meanwhile joins the
 * next call), because each call is one read-model transaction and its cost is mostly the index pages it
 * dirties, written to the WAL once per commit whatever the number of rows on them: a user's new orders
 * land on the same leaf of each orders index, so one commit of many orders costs far less per order than
 * many small commits (measured: docs/performance.md, "Read model"). Nobody waits for that: a read that needs the
 * projection (whenCaughtUp) and drain() start the next call at once, and an idle feed sends the first
 * batch immediately (the linger counts from the previous call's start).
 */
import { performance } from 'node:perf_hooks';
import type pino from 'pino';
import type { EventBatch } from '../engine/commands.js';
import type { Projector } from '../store/index.js';

/** The read model cannot answer for every command applied so far; the API turns it into 503 READ_MODEL_BEHIND. */
export class ReadModelBehindError extends Error {
  override name = 'ReadModelBehindError';
}

export interface ProjectorFeedOptions {
  /** A read waits at most this long for the projection, then is refused (default 2,000 ms). */
  catchUpTimeoutMs?: number;
  /** Minimum time between the starts of two project() calls while nobody waits (default 0 = none). */
  lingerMs?: number;
  /** First retry delay after a failed call, doubled per failure up to retryMaxMs (defaults 50 / 2,000 ms). */
  retryMinMs?: number;
  retryMaxMs?: number;
  /** Batches queued before the feed gives up until a restart (default 250,000). */
  maxBuffered?: number;
  /** Monotonic clock for the linger, ms (default performance.now; tests drive a mock clock). */
  now?: () => number;
}

export interface ProjectorFeedStatus {
  projectedSeq: number;
  /** retrying: the last call failed (history answers 503); stopped: gave up until a restart. */
  state: 'current' | 'retrying' | 'stopped';
  error?: string;
}

/** Batches per project() call: a catch-up after an outage is cut into transactions of bounded size. */
const MAX_BATCHES_PER_CALL = 10_000;

interface Waiter {
  seq: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class ProjectorFeed {
  private buffer: EventBatch[] = [];
  private running: Promise<void> | undefined;
  /** Highest seq the projector has committed. */
  private projectedSeq: number;
  private waiters: Waiter[] = [];
  /** now() when the last project() call started. */
  private lastStart = -Infinity;
  /** Ends the current linger or retry delay early (a read is waiting, or drain()). */
  private wake: (() => void) | undefined;
  private draining = 0;
  /** The last call's error while it keeps failing; undefined when the last call succeeded. */
  private failure: Error | undefined;
  private failures = 0;
  /** Set once the feed has given up (queue overflow or handed over): nothing more is projected. */
  private stopped: string | undefined;
  private readonly catchUpTimeoutMs: number;
  private readonly lingerMs: number;
  private readonly retryMinMs: number;
  private readonly retryMaxMs: number;
  private readonly maxBuffered: number;
  private readonly now: () => number;

  constructor(
    private readonly projector: Pick<Projector, 'project'>,
    private readonly log: pino.Logger,
    startSeq: number,
    options: ProjectorFeedOptions = {},
  ) {
    this.projectedSeq = startSeq;
    this.catchUpTimeoutMs = options.catchUpTimeoutMs ?? 2000;
    this.lingerMs = options.lingerMs ?? 0;
    this.retryMinMs = options.retryMinMs ?? 50;
    this.retryMaxMs = Math.max(this.retryMinMs, options.retryMaxMs ?? 2000);
    this.maxBuffered = options.maxBuffered ?? 250_000;
    this.now = options.now ?? (() => performance.now());
  }

  readonly push = (batch: EventBatch): void => {
    if (this.stopped) return;
    this.buffer.push(batch);
    if (this.buffer.length > this.maxBuffered) return this.giveUp();
    if (!this.running) this.running = this.loop();
  };

  /** Batches pushed and not projected yet. */
  get buffered(): number {
    return this.buffer.length;
  }

  /** Resolves once every batch up to `seq` is projected; rejects (ReadModelBehindError) if that cannot be now. */
  whenCaughtUp(seq: number): Promise<void> {
    if (seq <= this.projectedSeq) return Promise.resolve();
    if (this.failure || this.stopped) return Promise.reject(this.behind());
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        seq,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        this.log.warn({ seq, projectedSeq: this.projectedSeq }, 'read model lagging; refusing a read');
        reject(this.behind(`the projection did not reach seq ${seq} within ${this.catchUpTimeoutMs} ms`));
      }, this.catchUpTimeoutMs);
      timer.unref();
      this.waiters.push(waiter);
      this.wake?.();
    });
  }

  status(): ProjectorFeedStatus {
    const state = this.stopped ? 'stopped' : this.failure ? 'retrying' : 'current';
    const error = this.stopped ?? this.failure?.message;
    return { projectedSeq: this.projectedSeq, state, ...(error !== undefined && { error }) };
  }

  /**
   * Projects what is queued; resolves once done, or once a call has failed while draining (a stop does
   * not wait for the storage to come back; the batches stay queued).
   */
  async drain(): Promise<void> {
    this.draining++;
    try {
      this.wake?.();
      while (this.running) await this.running;
    } finally {
      this.draining--;
    }
  }

  /**
   * Stops this feed and returns what it has not projected, for another feed to continue from `projectedSeq`
   * (start-up hands recovery's feed over to the live one). Call after drain().
   */
  handOver(): { projectedSeq: number; pending: EventBatch[] } {
    const pending = this.buffer;
    this.buffer = [];
    this.stopped = 'handed over';
    return { projectedSeq: this.projectedSeq, pending };
  }

  private behind(why?: string): ReadModelBehindError {
    const reason = why ?? (this.stopped
      ? `projection stopped (${this.stopped}); a restart catches it up from the journal`
      : `projection is failing and being retried: ${this.failure?.message}`);
    return new ReadModelBehindError(`The history read model is behind (at seq ${this.projectedSeq}): ${reason}`);
  }

  /** Resolves after `ms`, or at once when woken (a waiting read, drain()). */
  private sleep(ms: number, unref: boolean): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.wake?.(), ms);
      if (unref) timer.unref();
      this.wake = () => {
        this.wake = undefined;
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Resolves when the next project() call may start: at once, or lingerMs after the last one started. */
  private lingered(): Promise<void> | undefined {
    const wait = this.lastStart + this.lingerMs - this.now();
    if (wait <= 0 || this.waiters.length > 0 || this.draining > 0) return undefined;
    return this.sleep(wait, false);
  }

  private async loop(): Promise<void> {
    while (this.buffer.length > 0 && !this.stopped) {
      if (this.failure) {
        if (this.draining === 0) await this.sleep(Math.min(this.retryMaxMs, this.retryMinMs * 2 ** (this.failures - 1)), true);
      } else {
        const linger = this.lingered();
        if (linger) await linger;
      }
      if (this.stopped) break;
      const batches = this.buffer.length <= MAX_BATCHES_PER_CALL ? this.buffer : this.buffer.slice(0, MAX_BATCHES_PER_CALL);
      this.buffer = batches === this.buffer ? [] : this.buffer.slice(MAX_BATCHES_PER_CALL);
      this.lastStart = this.now();
      try {
        await this.projector.project(batches);
      } catch (err) {
        // Nothing is lost: the batches go back to the head of the queue for the next attempt.
        if (!this.stopped) this.buffer = this.buffer.length === 0 ? batches : batches.concat(this.buffer);
        this.failed(err instanceof Error ? err : new Error(String(err)), batches);
        if (this.draining > 0) break;
        continue;
      }
      this.succeeded(batches[batches.length - 1].seq);
    }
    this.running = undefined;
  }

  private succeeded(seq: number): void {
    if (seq > this.projectedSeq) this.projectedSeq = seq;
    if (this.failure) {
      this.log.info({ projectedSeq: this.projectedSeq, failedAttempts: this.failures }, 'read-model projection recovered');
      this.failure = undefined;
      this.failures = 0;
    }
    if (this.waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const w of this.waiters) (w.seq <= this.projectedSeq ? w.resolve() : still.push(w));
    this.waiters = still;
  }

  private failed(err: Error, batches: readonly EventBatch[]): void {
    this.failures++;
    this.failure = err;
    // The first failure and then every 10th: a long outage must not flood the log.
    if (this.failures === 1 || this.failures % 10 === 0) {
      this.log.error({ err, fromSeq: batches[0].seq, toSeq: batches[batches.length - 1].seq, attempts: this.failures, queued: this.buffer.length },
        'read-model projection failed; retrying (history answers 503 READ_MODEL_BEHIND meanwhile)');
    }
    this.rejectWaiters();
  }

  private giveUp(): void {
    this.stopped = `more than ${this.maxBuffered} batches queued`;
    this.log.error({ projectedSeq: this.projectedSeq, queued: this.buffer.length, lastError: this.failure?.message },
      'read model too far behind: projection stopped; history answers 503 READ_MODEL_BEHIND until a restart catches it up from the journal');
    this.buffer = [];
    this.wake?.();
    this.rejectWaiters();
  }

  private rejectWaiters(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.reject(this.behind());
  }
}
