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
import { clusterNames } from '../journal/jetstream-names.js';

const LEASE_KEY = 'leader';

export interface LeaseHolder {
  holder: string;
  /** The leader epoch (revision of the write that took the lease). */
  revision: number;
  /** When the holder last renewed (server time, ms). */
  renewedAt: number;
}

/** The key's value: who holds the lease and the epoch it took it at (the revision of its `create`). */
interface LeaseValue {
  holder: string;
  epoch?: number;
}

/** The epoch a lease entry names: its own revision for the taking write, the recorded one for renewals. */
function epochOf(e: { revision: number; json<T>(): T }): number {
  try {
    return e.json<LeaseValue>().epoch ?? e.revision;
  } catch {
    return e.revision;
  }
}

export class LeaderLease {
  private revision = 0;
  private acquired = 0;

  private constructor(private readonly kv: KV, readonly holderId: string, readonly ttlMs: number) {}

  static async open(nc: NatsConnection, cluster: string, options: { holderId: string; ttlMs: number; replicas?: number }): Promise<LeaderLease> {
    const kv = await new Kvm(nc).create(clusterNames(cluster).leaseBucket, { ttl: options.ttlMs, history: 1, replicas: options.replicas ?? 1 });
    return new LeaderLease(kv, options.holderId, options.ttlMs);
  }

  /** The leader epoch this process holds: the revision it took the lease at (0 when it never held it). */
  get epoch(): number {
    return this.acquired;
  }

  /** Takes the lease when nobody holds it. True when this process now holds it. */
  async tryAcquire(): Promise<boolean> {
    try {
      this.revision = await this.kv.create(LEASE_KEY, JSON.stringify({ holder: this.holderId } satisfies LeaseValue));
      this.acquired = this.revision;
      return true;
    } catch (err) {
      if (isRevisionConflict(err)) return false;
      throw err;
    }
  }

  /** Renews a held lease (compare-and-set on the last revision). False: it was lost (expired and taken, or deleted). */
  async renew(): Promise<boolean> {
    try {
      this.revision = await this.kv.update(LEASE_KEY, JSON.stringify({ holder: this.holderId, epoch: this.acquired } satisfies LeaseValue), this.revision);
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
    return holderOf(this.kv);
  }
}

async function holderOf(kv: KV): Promise<LeaseHolder | undefined> {
  const e = await kv.get(LEASE_KEY);
  if (!e || e.operation !== 'PUT') return undefined;
  return { holder: e.json<LeaseValue>().holder, revision: epochOf(e), renewedAt: e.created.getTime() };
}

/** JetStream's "wrong last sequence" (10071) / key exists: someone else wrote the key since. */
export function isRevisionConflict(err: unknown): boolean {
  const e = err as { code?: unknown; api_error?: { err_code?: number }; message?: string };
  return e?.api_error?.err_code === 10071 || /wrong last sequence|key exists/i.test(String(e?.message ?? ''));
}

/**
 * A gateway's view of who leads: the lease's epoch, kept current by a watch on the KV key, so commands go to
 * the leader's own subject (`leaderSubmitSubject(epoch)`) and never to a deposed leader that is still
 * subscribed (stopped, not dead). Opens the bucket without creating it (an engine creates it).
 */
export class LeaderDirectory {
  private current: number | undefined;
  private stopped = false;
  private readonly listeners = new Set<(epoch: number) => void>();

  private constructor(private readonly kv: KV) {}

  static async open(nc: NatsConnection, cluster: string): Promise<LeaderDirectory> {
    const names = clusterNames(cluster);
    // Until an engine created the bucket there is no leader: wait for it (the gateway may start first).
    for (;;) {
      try {
        const dir = new LeaderDirectory(await new Kvm(nc).open(names.leaseBucket));
        await dir.refresh();
        void dir.watch();
        return dir;
      } catch (err) {
        if (!/not found/i.test(String((err as Error)?.message))) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  /** Lease epoch of the leader, as last seen (undefined: none known). */
  get epoch(): number | undefined {
    return this.current;
  }

  /** Who holds the lease now (read from the bucket; operators' views). */
  holder(): Promise<LeaseHolder | undefined> {
    return holderOf(this.kv);
  }

  async refresh(): Promise<number | undefined> {
    const e = await this.kv.get(LEASE_KEY);
    if (e && e.operation === 'PUT') this.advance(epochOf(e));
    return this.current;
  }

  /** Calls `listener` with each newer epoch seen; returns the unsubscribe. */
  onChange(listener: (epoch: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private advance(epoch: number): void {
    if (this.current !== undefined && epoch <= this.current) return;
    this.current = epoch;
    for (const l of this.listeners) l(epoch);
  }

  close(): void {
    this.stopped = true;
  }

  private async watch(): Promise<void> {
    while (!this.stopped) {
      try {
        const updates = await this.kv.watch({ key: LEASE_KEY });
        for await (const e of updates) {
          if (this.stopped) {
            updates.stop();
            break;
          }
          if (e.operation === 'PUT') this.advance(epochOf(e));
        }
      } catch {
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }
}
