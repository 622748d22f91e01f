/**
 * Sends `funding.settle` for every instrument at each funding boundary (multiples of the interval since the
 * epoch, so restarts keep the same schedule). The engine computes and pays; this only decides when, and the
 * command is journaled, so replay reproduces the settlement.
 *
 * A boundary missed while the process was down (an instrument last settled before the latest boundary) is
 * settled once at start, with one period's rate from the premium samples taken before the stop: the holders
 * then are the holders at the missed boundary, since no order could change a position in between. Several
 * missed boundaries still pay one period (nobody could manage a position while the venue was down). An
 * instrument never settled is left to its first boundary: nothing says it was trading at the missed one.
 */
import type pino from 'pino';
import type { CommandResult } from '../engine/records.js';
import type { CommandInput } from '../engine/commands.js';

export interface FundingClockOptions {
  /** Wall-clock period between settlements. */
  intervalMs: number;
  /** Time each settlement's rate covers (the command's intervalMs); absent or 0 = intervalMs. */
  ratePeriodMs?: number;
  instruments: () => string[];
  /** When the instrument was last settled (ms), null if never: finds boundaries missed while down. */
  lastSettledAt?: (instrument: string) => number | null;
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
    const missed = this.missedAtStart();
    if (missed.length === 0) this.schedule();
    else this.settleThenSchedule(missed);
  }

  /** Instruments settled before, but not at or since the latest boundary. */
  private missedAtStart(): string[] {
    const lastSettledAt = this.opts.lastSettledAt;
    if (lastSettledAt === undefined) return [];
    const interval = this.opts.intervalMs;
    const latestBoundary = Math.floor(this.now() / interval) * interval;
    const missed: string[] = [];
    for (const instrument of this.opts.instruments()) {
      const last = lastSettledAt(instrument);
      if (last === null || last >= latestBoundary) continue;
      const boundaries = latestBoundary / interval - Math.floor(last / interval);
      this.opts.log.info({ instrument, lastSettledAt: last, boundaries }, 'funding boundary missed while down: settling now');
      missed.push(instrument);
    }
    return missed;
  }

  private schedule(): void {
    if (this.stopped) return;
    const t = this.now();
    const next = (Math.floor(t / this.opts.intervalMs) + 1) * this.opts.intervalMs;
    this.timer = setTimeout(() => this.settleThenSchedule(this.opts.instruments()), next - t);
  }

  private settleThenSchedule(instruments: string[]): void {
    this.inFlight = this.settle(instruments).finally(() => {
      this.inFlight = undefined;
      this.schedule();
    });
  }

  private async settle(instruments: string[]): Promise<void> {
    for (const instrument of instruments) {
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
