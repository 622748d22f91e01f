/**
 * Engine leadership (issue 30): a lease in JetStream KV. The bucket's max age is the lease TTL, so a holder
 * that stops renewing loses the key when its last write ages out; a standby takes it with `create` (which
 * succeeds only when the key is absent) and the holder renews with `update` on its last revision
 * (compare-and-set), so two processes can never both renew one lease. The revision a holder got is its leader
 * epoch: strictly increasing across takeovers.
 *
 * The lease only decides who tries to lead; what keeps two leaders from both writing is the command log's
 * expected-last-sequence (fencing), which the new leader establishes before it accepts a command.
 */
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';

const LEASE_KEY = 'leader';

export interface LeaseHolder {
  holder: string;
  /** Revision of the last write: the leader epoch. */
  revision: number;
  /** When the holder last renewed (server time, ms). */
  renewedAt: number;
}

export class LeaderLease {
  private revision = 0;

  private constructor(private readonly kv: KV, readonly holderId: string, readonly ttlMs: number) {}

  static async open(nc: NatsConnection, cluster: string, options: { holderId: string; ttlMs: number; replicas?: number }): Promise<LeaderLease> {
    const kv = await new Kvm(nc).create(`perpx-${cluster}-leader`, { ttl: options.ttlMs, history: 1, replicas: options.replicas ?? 1 });
    return new LeaderLease(kv, options.holderId, options.ttlMs);
  }

  /** The leader epoch this process holds (0 when it never held the lease). */
  get epoch(): number {
    return this.revision;
  }

  /** Takes the lease when nobody holds it. True when this process now holds it. */
  async tryAcquire(): Promise<boolean> {
    try {
      this.revision = await this.kv.create(LEASE_KEY, this.holderId);
      return true;
    } catch (err) {
      if (isRevisionConflict(err)) return false;
      throw err;
    }
  }

  /** Renews a held lease (compare-and-set on the last revision). False: it was lost (expired and taken, or deleted). */
  async renew(): Promise<boolean> {
    try {
      this.revision = await this.kv.update(LEASE_KEY, this.holderId, this.revision);
      return true;
    } catch (err) {
      if (isRevisionConflict(err)) return false;
      throw err;
    }
  }

  /** Gives the lease up (graceful stop) so a standby need not wait for it to expire. */
  async release(): Promise<void> {
    await this.kv.delete(LEASE_KEY, { previousSeq: this.revision }).catch(() => undefined);
  }

  async current(): Promise<LeaseHolder | undefined> {
    const e = await this.kv.get(LEASE_KEY);
    if (!e || e.operation !== 'PUT') return undefined;
    return { holder: e.string(), revision: e.revision, renewedAt: e.created.getTime() };
  }
}

/** JetStream's "wrong last sequence" (10071) / key exists: someone else wrote the key since. */
function isRevisionConflict(err: unknown): boolean {
  const e = err as { code?: unknown; api_error?: { err_code?: number }; message?: string };
  return e?.api_error?.err_code === 10071 || /wrong last sequence|key exists/i.test(String(e?.message ?? ''));
}
