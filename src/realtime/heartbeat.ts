// Publishes `{ t: <ms> }` on a channel periodically; clients treat a silence of 30 s as a
// lost connection (interface spec, {env}:heartbeat).
import type { Publish } from './ports.js';

export class Heartbeat {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly publish: Publish,
    private readonly channel: string,
    private readonly intervalMs = 1_000,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.beat(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private beat(): void {
    try {
      const r = this.publish(this.channel, { t: this.now() });
      if (r instanceof Promise) r.catch(() => {}); // the next beat retries
    } catch {
      // same
    }
  }
}
