/**
 * The payout record per withdrawal (issue 30): which leader epoch claimed the transfer id before sending it
 * to the chain, and the chain's result once final. Shared by all engines of a cluster (NATS KV) so that a new
 * leader never sends a withdrawal an old one already sent; single process: in memory (one sender anyway).
 */
import type { WithdrawalOutcome } from './ports.js';

export interface PayoutRecord {
  /** The lease epoch of the leader that claimed it (0: single process). */
  epoch: number;
  /** When it was claimed, ms since epoch. */
  claimedAt: number;
  /** The chain's final result, once known. */
  outcome?: WithdrawalOutcome;
  /** Store revision (compare-and-set of a takeover). */
  revision?: number;
}

export interface PayoutLedger {
  /** Claims the transfer id for `epoch`: true when this call claimed it, else the existing record. */
  claim(transferId: string, epoch: number): Promise<true | PayoutRecord>;
  /**
   * Moves a claim without result to `epoch` (compare-and-set on `record`): only after the chain said it never
   * saw the payout. False when the record changed meanwhile.
   */
  takeOver(transferId: string, record: PayoutRecord, epoch: number): Promise<boolean>;
  /** Records the chain's final result of a claimed payout. */
  recordOutcome(transferId: string, outcome: WithdrawalOutcome): Promise<void>;
  /** The record, if any. */
  get(transferId: string): Promise<PayoutRecord | undefined>;
}

export class MemoryPayoutLedger implements PayoutLedger {
  private readonly records = new Map<string, PayoutRecord>();

  async claim(transferId: string, epoch: number): Promise<true | PayoutRecord> {
    const known = this.records.get(transferId);
    if (known) return { ...known };
    this.records.set(transferId, { epoch, claimedAt: Date.now() });
    return true;
  }

  async takeOver(transferId: string, record: PayoutRecord, epoch: number): Promise<boolean> {
    const now = this.records.get(transferId);
    if (!now || now.outcome || now.epoch !== record.epoch || now.claimedAt !== record.claimedAt) return false;
    this.records.set(transferId, { epoch, claimedAt: Date.now() });
    return true;
  }

  async recordOutcome(transferId: string, outcome: WithdrawalOutcome): Promise<void> {
    const r = this.records.get(transferId);
    this.records.set(transferId, { epoch: r?.epoch ?? 0, claimedAt: r?.claimedAt ?? Date.now(), outcome });
  }

  async get(transferId: string): Promise<PayoutRecord | undefined> {
    const r = this.records.get(transferId);
    return r && { ...r };
  }
}
