/**
 * Read-your-writes for history on a cluster gateway: the projector (another process) writes the read model,
 * so a gateway learns how far it got by reading `projector_meta.last_seq` from PostgreSQL, polled only while
 * some read is waiting. A read waits for the seq its gateway's follower has applied, as the single process
 * waits for its own projection.
 */
import { databaseUnreachable } from '../../store/pg-pool.js';
import { ReadModelBehindError } from '../projector-feed.js';

export interface ProjectedSeqWatchOptions {
  lastSeq: () => Promise<number>;
  /** Poll period while reads wait, ms. */
  pollMs?: number;
  /** A read waits this long before it is refused with 503 READ_MODEL_BEHIND, ms. */
  timeoutMs?: number;
}

interface Waiter {
  seq: number;
  deadline: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class ProjectedSeqWatch {
  private known = 0;
  private waiters: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly pollMs: number;
  private readonly timeoutMs: number;

  constructor(private readonly options: ProjectedSeqWatchOptions) {
    this.pollMs = options.pollMs ?? 10;
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  get projectedSeq(): number {
    return this.known;
  }

  whenCaughtUp(seq: number): Promise<void> {
    if (seq <= this.known) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ seq, deadline: Date.now() + this.timeoutMs, resolve, reject });
      this.schedule(0);
    });
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.reject(new ReadModelBehindError('the gateway is stopping'));
  }

  private schedule(delay: number): void {
    if (this.timer !== undefined || this.waiters.length === 0) return;
    this.timer = setTimeout(() => void this.poll(), delay);
  }

  private async poll(): Promise<void> {
    let failure: unknown;
    try {
      this.known = Math.max(this.known, await this.options.lastSeq());
    } catch (err) {
      failure = err;
    }
    this.timer = undefined;
    const now = Date.now();
    const waiting: Waiter[] = [];
    for (const w of this.waiters) {
      if (w.seq <= this.known) w.resolve();
      // PostgreSQL down: the read cannot be served, so it is refused now rather than at its deadline.
      else if (now >= w.deadline || databaseUnreachable(failure) !== undefined) {
        const why = failure instanceof Error ? `the read model cannot be read (${failure.message})` : `the projector did not reach seq ${w.seq} within ${this.timeoutMs} ms`;
        w.reject(new ReadModelBehindError(`The history read model is behind (at seq ${this.known}): ${why}`));
      } else waiting.push(w);
    }
    this.waiters = waiting;
    this.schedule(this.pollMs);
  }
}
