/**
 * The payout ledger in a JetStream KV bucket `perpx-<cluster>-payouts` (issue 30): `create` claims a
 * transfer id (fails when any engine claimed it before), `update` on the claim's revision records the result.
 */
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { isRevisionConflict } from '../cluster/leader-lease.js';
import { clusterNames } from '../journal/jetstream-names.js';
import type { PayoutLedger, PayoutRecord } from './payout-ledger.js';
import type { WithdrawalOutcome } from './ports.js';
import { transferEntry, transferKey as keyOf } from './transfer-kv.js';


type Stored = { epoch: number; claimedAt: number; outcome?: { confirmed: boolean; txHash: string; reason?: string } };

export class NatsPayoutLedger implements PayoutLedger {
  private constructor(private readonly kv: KV) {}

  static async open(nc: NatsConnection, cluster: string, options: { replicas?: number } = {}): Promise<NatsPayoutLedger> {
    return new NatsPayoutLedger(await new Kvm(nc).create(clusterNames(cluster).payoutBucket, { history: 1, replicas: options.replicas ?? 1 }));
  }

  async claim(transferId: string, epoch: number): Promise<true | PayoutRecord> {
    try {
      await this.kv.create(keyOf(transferId), JSON.stringify({ epoch, claimedAt: Date.now() } satisfies Stored));
      return true;
    } catch (err) {
      if (!isRevisionConflict(err)) throw err;
      const known = await this.get(transferId);
      if (!known) throw new Error(`payout ${transferId}: claimed but unreadable`, { cause: err });
      return known;
    }
  }

  async takeOver(transferId: string, record: PayoutRecord, epoch: number): Promise<boolean> {
    if (record.revision === undefined || record.outcome) return false;
    try {
      await this.kv.update(keyOf(transferId), JSON.stringify({ epoch, claimedAt: Date.now() } satisfies Stored), record.revision);
      return true;
    } catch (err) {
      if (isRevisionConflict(err)) return false;
      throw err;
    }
  }

  async recordOutcome(transferId: string, outcome: WithdrawalOutcome): Promise<void> {
    const known = await this.get(transferId);
    const value: Stored = { epoch: known?.epoch ?? 0, claimedAt: known?.claimedAt ?? Date.now(), outcome: { confirmed: outcome.confirmed, txHash: outcome.txHash, ...(outcome.reason ? { reason: outcome.reason } : {}) } };
    await this.kv.put(keyOf(transferId), JSON.stringify(value));
  }

  async get(transferId: string): Promise<PayoutRecord | undefined> {
    const e = await transferEntry(this.kv, transferId);
    return e && { ...e.json<Stored>(), revision: e.revision };
  }
}
