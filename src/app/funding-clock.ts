/**
 * Sends `funding.settle` for every instrument at each funding boundary (multiples of the interval since the
 * epoch, so restarts keep the same schedule). The engine computes and pays; this only decides when, and the
 * command is journaled, so replay reproduces the settlement. A boundary missed while the process was down is
 * not paid afterwards.
 */
import type pino from 'pino';
import type { CommandResult } from '../engine/records.js';
import type { CommandInput } from '../sequencer/sequencer.js';

export interface FundingClockOptions {
  /** Wall-clock period between settlements. */
  intervalMs: number;
  /** Time each settlement's rate covers (the command's intervalMs); absent or 0 = intervalMs. */
  ratePeriodMs?: number;
  instruments: () => string[];
  submit: (cmd: CommandInput) => Promise<CommandResult>;
  log: pino.Logger;
  now?: () => number;
}

export class FundingClock {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private stopped = true;
  private readonly now: () => number;

  constructor(private readonly opts: FundingClockOptions) {
    this.now = opts.now ?? Date.now;
  }

  start(): void {
    if (!this.stopped || this.opts.intervalMs <= 0) return;
    this.stopped = false;
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    const t = this.now();
    const next = (Math.floor(t / this.opts.intervalMs) + 1) * this.opts.intervalMs;
    this.timer = setTimeout(() => {
      this.inFlight = this.settleAll().finally(() => {
        this.inFlight = undefined;
        this.schedule();
      });
    }, next - t);
  }

  private async settleAll(): Promise<void> {
    for (const instrument of this.opts.instruments()) {
      try {
        const r = await this.opts.submit({ kind: 'funding.settle', instrument, intervalMs: this.opts.ratePeriodMs || this.opts.intervalMs });
        if (!r.reply.ok) this.opts.log.warn({ instrument, error: r.reply.error }, 'funding settlement refused');
      } catch (err) {
        this.opts.log.warn({ err, instrument }, 'funding settlement failed');
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.inFlight;
  }
}
