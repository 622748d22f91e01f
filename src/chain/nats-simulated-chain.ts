/**
 * The simulated chain shared by a cluster's engine processes (issue 30): its ledger of broadcast
 * withdrawals lives in the JetStream KV bucket `perpx-<cluster>-simchain`, so a new leader's
 * lookupWithdrawal sees what the dead leader put on the "network", as it would on a real chain.
 * A withdrawal becomes final at `finalAt` whatever process broadcast it; its outcome is the same seeded
 * hash as SimulatedChain's. Deposits stay in process (the leader that simulates one credits it).
 */
import { createHash } from 'node:crypto';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { isRevisionConflict } from '../cluster/leader-lease.js';
import { clusterNames } from '../journal/jetstream-names.js';
import type { WithdrawalOutcome, WithdrawalRequest } from './ports.js';
import { SimulatedChain, type SimulatedChainOptions } from './simulated-chain.js';
import { transferEntry, transferKey as keyOf } from './transfer-kv.js';


/** One broadcast withdrawal on the shared network. */
export interface SimchainRecord {
  /** Payout transactions put on chain for this transfer id (each must be 1). */
  broadcasts: number;
  /** When the network makes it final (ms since epoch). */
  finalAt: number;
}

export class NatsSimulatedChain extends SimulatedChain {
  private readonly inFlight = new Map<string, Promise<WithdrawalOutcome>>();
  private readonly waits = new Set<NodeJS.Timeout>();

  private constructor(private readonly kv: KV, opts: SimulatedChainOptions) {
    super(opts);
  }

  static async open(nc: NatsConnection, cluster: string, opts: SimulatedChainOptions & { replicas?: number }): Promise<NatsSimulatedChain> {
    const kv = await new Kvm(nc).create(clusterNames(cluster).simchainBucket, { history: 1, replicas: opts.replicas ?? 1 });
    return new NatsSimulatedChain(kv, { delayMs: opts.delayMs, failureRate: opts.failureRate, seed: opts.seed });
  }

  /** The shared record of a transfer id, if it was ever broadcast. */
  async record(transferId: string): Promise<SimchainRecord | undefined> {
    return (await transferEntry(this.kv, transferId))?.json<SimchainRecord>();
  }

  private outcomeOf(transferId: string): WithdrawalOutcome {
    const txHash = '0x' + createHash('sha256').update(`${this.opts.seed}:tx:${transferId}`).digest('hex');
    return this.willFail(transferId) ? { confirmed: false, txHash, reason: 'simulated chain failure' } : { confirmed: true, txHash };
  }

  override sendWithdrawal(w: WithdrawalRequest): Promise<WithdrawalOutcome> {
    const known = this.inFlight.get(w.transferId);
    if (known) return known;
    const outcome = this.broadcast(w.transferId).finally(() => this.inFlight.delete(w.transferId));
    this.inFlight.set(w.transferId, outcome);
    return outcome;
  }

  /**
   * Puts the payout on the shared network and waits until final. Every transaction another process sends for
   * the same id is counted, even once final (it pays nothing more): the count is what proves "sent once".
   */
  private async broadcast(transferId: string): Promise<WithdrawalOutcome> {
    for (;;) {
      const e = await transferEntry(this.kv, transferId);
      const prior = e?.json<SimchainRecord>();
      const next: SimchainRecord = prior ? { ...prior, broadcasts: prior.broadcasts + 1 } : { broadcasts: 1, finalAt: Date.now() + this.opts.delayMs };
      try {
        if (prior && e) await this.kv.update(keyOf(transferId), JSON.stringify(next), e.revision);
        else await this.kv.create(keyOf(transferId), JSON.stringify(next));
      } catch (err) {
        if (isRevisionConflict(err)) continue;
        throw err;
      }
      this.broadcasts.set(transferId, (this.broadcasts.get(transferId) ?? 0) + 1);
      await this.until(next.finalAt);
      return this.outcomeOf(transferId);
    }
  }

  private until(at: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.waits.delete(t);
        resolve();
      }, Math.max(0, at - Date.now()));
      this.waits.add(t);
    });
  }

  override async lookupWithdrawal(transferId: string): Promise<WithdrawalOutcome | 'pending' | undefined> {
    const r = await this.record(transferId);
    if (!r) return undefined;
    return r.finalAt <= Date.now() ? this.outcomeOf(transferId) : 'pending';
  }

  override get pending(): number {
    return super.pending + this.waits.size;
  }

  override close(): void {
    for (const t of this.waits) clearTimeout(t);
    this.waits.clear();
    super.close();
  }
}
