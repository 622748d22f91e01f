// Decides when connections with queued messages write them. Connections wait in FIFO order and
// are written in slices with a yield to the event loop between slices: publications arriving
// meanwhile join the queues of connections not yet written. So a quiet server writes each
// message at once, and under load each frame carries more messages (adaptive batching) while
// no connection waits longer than one pass over the busy ones.
// A write delay > 0 also holds each connection's first queued message that long (Centrifugo's
// write delay), for deployments that prefer fewer frames to lower latency.

export interface Flushable {
  /** Writes everything the connection has queued as one frame. */
  flush(): void;
}

/** Connections written per slice before yielding: a few ms of socket writes, short enough for other work. */
const SLICE = 256;

export class FlushScheduler {
  private queue: Flushable[] = [];
  /** When each queued connection may be written (write delay > 0 only). */
  private dueAt: number[] = [];
  private head = 0;
  private scheduled = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly writeDelayMs: number) {}

  /** Queues a connection whose first message was just queued. */
  add(conn: Flushable): void {
    this.queue.push(conn);
    if (this.writeDelayMs > 0) this.dueAt.push(performance.now() + this.writeDelayMs);
    if (!this.scheduled) this.schedule();
  }

  /** Drops timers (server shutdown); queued connections are flushed or closed by their owners. */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.scheduled = false; // a pass already queued with setImmediate finds nothing to do
    this.queue = [];
    this.dueAt = [];
    this.head = 0;
  }

  private schedule(): void {
    this.scheduled = true;
    if (this.writeDelayMs > 0) {
      const wait = Math.max(0, this.dueAt[this.head] - performance.now());
      if (wait >= 1) {
        this.timer = setTimeout(this.run, Math.ceil(wait));
        return;
      }
    }
    setImmediate(this.run);
  }

  private readonly run = (): void => {
    this.scheduled = false;
    this.timer = null;
    const delayed = this.writeDelayMs > 0;
    const now = delayed ? performance.now() : 0;
    const end = Math.min(this.queue.length, this.head + SLICE);
    while (this.head < end) {
      if (delayed && this.dueAt[this.head] > now) break;
      this.queue[this.head++].flush();
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.dueAt = [];
      this.head = 0;
      return;
    }
    if (this.head >= 4096) {
      // Compact now and then instead of shifting per connection.
      this.queue = this.queue.slice(this.head);
      if (delayed) this.dueAt = this.dueAt.slice(this.head);
      this.head = 0;
    }
    this.schedule();
  };
}
