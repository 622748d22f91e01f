/**
 * Feeds event batches to the read-model projector in groups (one project() call per group), behind the
 * sequencer. Batches already projected (seq ≤ last_seq) are skipped by the projector itself.
 *
 * Projection runs behind the acknowledgements (on a worker thread by default), so history reads wait
 * until it has caught up with every command applied when the read starts: a client that got a reply for
 * a command then sees that command's effect in its history (read-your-writes).
 *
 * Linger: under load a project() call starts at most every `lingerMs` (what arrives meanwhile joins the
 * next call), because each call is one read-model transaction and its cost is mostly the index pages it
 * dirties, written to the WAL once per commit whatever the number of rows on them: a user's new orders
 * land on the same leaf of each orders index, so 20 ms of orders in one commit cost far less per order
 * than many small commits (bench/projector-cost.ts: 128 users at ~7,000 orders/s, 20 ms = 140 orders per
 * commit wrote 8.9 WAL pages per order, 50 ms = 350 orders 4.3). Nobody waits for that: a read that needs the
 * projection (whenCaughtUp) and drain() start the next call at once, and an idle feed sends the first
 * batch immediately (the linger counts from the previous call's start).
 */
import { performance } from 'node:perf_hooks';
import type pino from 'pino';
import type { EventBatch } from '../sequencer/event-bus.js';
import type { Projector } from '../store/index.js';

/** A read never waits longer than this for the projection (a stuck or detached feed must not hang reads). */
const DEFAULT_CATCH_UP_TIMEOUT_MS = 2000;

export class ProjectorFeed {
  private buffer: EventBatch[] = [];
  private running: Promise<void> | undefined;
  /** Highest seq handed to the projector and finished (applied, skipped, or failed and logged). */
  private doneSeq: number;
  private waiters: Array<{ seq: number; resolve: () => void }> = [];
  /** performance.now() when the last project() call started. */
  private lastStart = -Infinity;
  /** Ends the current linger early (a read is waiting, or drain()). */
  private wake: (() => void) | undefined;
  private draining = 0;

  constructor(
    private readonly projector: Pick<Projector, 'project'>,
    private readonly log: pino.Logger,
    startSeq: number,
    private readonly catchUpTimeoutMs = DEFAULT_CATCH_UP_TIMEOUT_MS,
    /** Minimum time between the starts of two project() calls while nobody waits (0 = none). */
    private readonly lingerMs = 0,
  ) {
    this.doneSeq = startSeq;
  }

  readonly push = (batch: EventBatch): void => {
    this.buffer.push(batch);
    if (!this.running) this.running = this.loop();
  };

  /** Resolves once every batch up to `seq` is projected (or after a timeout; then reads may be stale). */
  whenCaughtUp(seq: number): Promise<void> {
    if (seq <= this.doneSeq) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.resolve !== done);
        this.log.warn({ seq, projectedSeq: this.doneSeq }, 'read model lagging; serving a read without waiting');
        resolve();
      }, this.catchUpTimeoutMs);
      timer.unref();
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.waiters.push({ seq, resolve: done });
      this.wake?.();
    });
  }

  async drain(): Promise<void> {
    this.draining++;
    try {
      this.wake?.();
      while (this.running) await this.running;
    } finally {
      this.draining--;
    }
  }

  /** Resolves when the next project() call may start: at once, or lingerMs after the last one started. */
  private lingered(): Promise<void> | undefined {
    const wait = this.lastStart + this.lingerMs - performance.now();
    if (wait <= 0 || this.waiters.length > 0 || this.draining > 0) return undefined;
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.wake?.(), wait);
      this.wake = () => {
        this.wake = undefined;
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async loop(): Promise<void> {
    while (this.buffer.length > 0) {
      const linger = this.lingered();
      if (linger) await linger;
      const batches = this.buffer;
      this.buffer = [];
      this.lastStart = performance.now();
      try {
        await this.projector.project(batches);
      } catch (err) {
        this.log.error({ err, fromSeq: batches[0].seq, toSeq: batches[batches.length - 1].seq }, 'read-model projection failed');
      }
      this.finished(batches[batches.length - 1].seq);
    }
    this.running = undefined;
  }

  private finished(seq: number): void {
    if (seq > this.doneSeq) this.doneSeq = seq;
    if (this.waiters.length === 0) return;
    const still: typeof this.waiters = [];
    for (const w of this.waiters) (w.seq <= this.doneSeq ? w.resolve() : still.push(w));
    this.waiters = still;
  }
}
