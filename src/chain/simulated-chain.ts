/**
 * A stand-in blockchain: every withdrawal becomes final after `delayMs`, failing for a seeded, stable
 * fraction `failureRate` of transfer ids (the outcome is a hash of seed + transfer id, so it does not
 * depend on arrival order and a resend after a restart gets the same answer). `deposit()` simulates a
 * transfer into a user's trading account, reported after the same delay.
 */
import { createHash } from 'node:crypto';
import type { ChainDeposit, ChainNetwork, WithdrawalOutcome, WithdrawalRequest } from './ports.js';

export interface SimulatedChainOptions {
  /** Time until a payout or deposit is final, ms. */
  delayMs: number;
  /** Share of withdrawals that fail, 0..1. */
  failureRate: number;
  seed: string;
}

export class SimulatedChain implements ChainNetwork {
  private readonly listeners = new Set<(d: ChainDeposit) => void>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly sent = new Map<string, Promise<WithdrawalOutcome>>();
  /** Final payouts, kept: a resend returns the same outcome and pays nothing more. */
  private readonly final = new Map<string, WithdrawalOutcome>();
  /** Payout transactions put on chain per transfer id (tests assert each is paid once). */
  readonly broadcasts = new Map<string, number>();
  private nonce = 0;

  protected readonly opts: SimulatedChainOptions;

  constructor(opts: SimulatedChainOptions) {
    this.opts = { ...opts };
    if (!(opts.failureRate >= 0 && opts.failureRate <= 1)) throw new RangeError('failureRate must be within 0..1');
    if (!(opts.delayMs >= 0)) throw new RangeError('delayMs must be ≥ 0');
  }

  /** Stable pseudo-random fraction in [0, 1) for a key. */
  private fraction(key: string): number {
    return createHash('sha256').update(`${this.opts.seed}:${key}`).digest().readUInt32BE(0) / 2 ** 32;
  }

  protected later(fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, this.opts.delayMs);
    this.timers.add(t);
  }

  /** Operator/demo knob: change the failure share at run time (affects payouts decided from now on). */
  setFailureRate(rate: number): void {
    if (!(rate >= 0 && rate <= 1)) throw new RangeError('failureRate must be within 0..1');
    this.opts.failureRate = rate;
  }

  /** Whether the simulation will fail this transfer (for tests that pick ids). */
  willFail(transferId: string): boolean {
    return this.fraction(transferId) < this.opts.failureRate;
  }

  sendWithdrawal(w: WithdrawalRequest): Promise<WithdrawalOutcome> {
    const known = this.sent.get(w.transferId);
    if (known) return known;
    const done = this.final.get(w.transferId);
    if (done) return Promise.resolve(done);
    this.broadcasts.set(w.transferId, (this.broadcasts.get(w.transferId) ?? 0) + 1);
    const txHash = '0x' + createHash('sha256').update(`${this.opts.seed}:tx:${w.transferId}`).digest('hex');
    const outcome = new Promise<WithdrawalOutcome>((resolve) => {
      this.later(() => {
        const result: WithdrawalOutcome = this.willFail(w.transferId) ? { confirmed: false, txHash, reason: 'simulated chain failure' } : { confirmed: true, txHash };
        this.final.set(w.transferId, result);
        this.sent.delete(w.transferId);
        resolve(result);
      });
    });
    this.sent.set(w.transferId, outcome);
    return outcome;
  }

  async lookupWithdrawal(transferId: string): Promise<WithdrawalOutcome | 'pending' | undefined> {
    return this.final.get(transferId) ?? (this.sent.has(transferId) ? 'pending' : undefined);
  }

  watchDeposits(onDeposit: (d: ChainDeposit) => void): () => void {
    this.listeners.add(onDeposit);
    return () => this.listeners.delete(onDeposit);
  }

  /** Simulates a deposit on chain; returns its tx hash (the transfer id it will be credited under). */
  deposit(userId: number, amount: bigint, txHash = `0xsim-${this.opts.seed}-${Date.now().toString(36)}-${++this.nonce}`): string {
    this.later(() => {
      for (const l of this.listeners) l({ txHash, userId, amount });
    });
    return txHash;
  }

  /** Payouts and deposits not final yet (tests wait for the chain to have answered). */
  get pending(): number {
    return this.timers.size;
  }

  close(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.listeners.clear();
  }
}
