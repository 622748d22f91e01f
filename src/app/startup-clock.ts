/** Where start-up time went: recovery, the read model's catch-up, and wiring until the port listens. */
import { performance } from 'node:perf_hooks';
import type { StartupStatus } from '../api/ports.js';

export class StartupClock {
  /** Wall-clock start (epoch ms), shown by GET /api/admin/status. */
  readonly startedAt = Date.now();
  private readonly t0 = performance.now();
  private wiringFrom = this.t0;
  private finished: StartupStatus | undefined;

  /** Recovery and catch-up are over; what follows is wiring (counted as listenMs). */
  wiringStarts(): void {
    this.wiringFrom = performance.now();
  }

  /** The port listens: the report is final. */
  finish(recovery: Omit<StartupStatus, 'totalMs' | 'listenMs'>): StartupStatus {
    const now = performance.now();
    this.finished = { totalMs: Math.round(now - this.t0), ...recovery, listenMs: Math.round(now - this.wiringFrom) };
    return this.finished;
  }

  /** The report once start-up finished; undefined while it runs. */
  get report(): StartupStatus | undefined {
    return this.finished;
  }
}
