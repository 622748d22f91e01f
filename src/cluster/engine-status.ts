/**
 * Engine status board (issue 30, observability): every `perpx engine` process puts its status (role, applied
 * seq, lag behind the command log, lease holder and epoch, takeovers) into the JetStream KV bucket
 * `perpx-<cluster>-engines` once a second, under its own key, and `stopped` when it stops. The bucket's max age
 * is a few heartbeats longer than the leader lease, so a dead or stopped engine's entry vanishes on its own, but a
 * standby taking over still finds its predecessor's last one. Gateways read the board for /metrics and GET /api/admin/cluster.
 *
 * Nothing here is on the command path: the publisher reads what the engine process already keeps, plus the
 * log's last message header and the lease key (two small reads a second).
 */
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type pino from 'pino';
import { LAST_SEQ_HEADER } from '../journal/jetstream-journal.js';
import { clusterNames, type ClusterNames } from '../journal/jetstream-names.js';
import type { LeaseHolder } from './leader-lease.js';

export type EngineStatusRole = 'standby' | 'leader' | 'stopped';

/** One engine's entry on the board. */
export interface EngineStatus {
  id: string;
  role: EngineStatusRole;
  /** Seq of the last command its engine applied (leader or standby follower). */
  appliedSeq: number;
  /** Seq of the last command in the log when it published. */
  logSeq: number;
  /** Commands it is behind the log: logSeq − appliedSeq (0 when it leads and is ahead of the append). */
  lag: number;
  /** The lease epoch it leads, or led last (0: never led). */
  epoch: number;
  /** Who held the lease, and at which epoch, when it published (null: nobody). */
  leaseHolder: string | null;
  leaseEpoch: number | null;
  /** Times this process took over, and how long its last takeover took (lease taken → taking commands). */
  takeovers: number;
  lastTakeoverMs: number | null;
  /** When the entry was written (NATS server time, ms). */
  updatedAt: number;
}

/** What the engine process knows of itself (read each heartbeat). */
export interface EngineSelf {
  id: string;
  role: EngineStatusRole;
  appliedSeq: number;
  epoch: number;
  takeovers: number;
  lastTakeoverMs: number | null;
}

export const STATUS_INTERVAL_MS = 1000;

/** Bucket max age: a few heartbeats past the lease TTL (the lease is the failure detector; this only shows it). */
export const statusTtlMs = (leaseTtlMs: number): number => Math.max(5 * STATUS_INTERVAL_MS, leaseTtlMs + 3 * STATUS_INTERVAL_MS);

/** KV keys allow letters, digits, `-`, `_`, `=`, `/` and `.` (a token separator): the rest becomes `_`. */
export const statusKey = (engineId: string): string => engineId.replace(/[^A-Za-z0-9_=-]/g, '_');

/** Seq of the last command in the log: the last-seq header of the leader's last append (0: empty log). */
export async function readLogSeq(jsm: JetStreamManager, names: ClusterNames): Promise<number> {
  try {
    const m = await jsm.streams.getMessage(names.commandStream, { last_by_subj: names.commandSubject });
    return Number(m?.header?.get(LAST_SEQ_HEADER) ?? 0) || 0;
  } catch (err) {
    if (/no message found/i.test(String((err as Error)?.message))) return 0;
    throw err;
  }
}

function entryOf(e: { created: Date; json<T>(): T }): EngineStatus {
  return { ...e.json<Omit<EngineStatus, 'updatedAt'>>(), updatedAt: e.created.getTime() };
}

/** The engine side: writes this process's entry every STATUS_INTERVAL_MS; `close` marks it stopped. */
export class EngineStatusPublisher {
  private timer: NodeJS.Timeout | undefined;
  private publishing: Promise<void> = Promise.resolve();
  private failing = false;
  /** The lease as last read: at a takeover, whose entry was the predecessor's. */
  private lastLease: LeaseHolder | undefined;
  private lastEntry: Omit<EngineStatus, 'updatedAt'> | undefined;

  private constructor(
    private readonly kv: KV,
    private readonly jsm: JetStreamManager,
    private readonly names: ClusterNames,
    private readonly self: () => EngineSelf,
    private readonly lease: () => Promise<LeaseHolder | undefined>,
    private readonly log: pino.Logger,
  ) {}

  static async open(nc: NatsConnection, cluster: string, options: {
    self: () => EngineSelf; lease: () => Promise<LeaseHolder | undefined>; leaseTtlMs: number; replicas?: number; log: pino.Logger;
  }): Promise<EngineStatusPublisher> {
    const names = clusterNames(cluster);
    const kv = await new Kvm(nc).create(names.enginesBucket, { ttl: statusTtlMs(options.leaseTtlMs), history: 1, replicas: options.replicas ?? 1 });
    return new EngineStatusPublisher(kv, await jetstreamManager(nc), names, options.self, options.lease, options.log);
  }

  start(): void {
    const tick = () => {
      this.publishing = this.publish();
    };
    tick();
    this.timer = setInterval(tick, STATUS_INTERVAL_MS);
    this.timer.unref();
  }

  /** Writes the entry now (also called on a role change, so the board does not wait for the next beat). */
  async publish(): Promise<void> {
    try {
      const me = this.self();
      const [logSeq, lease] = await Promise.all([readLogSeq(this.jsm, this.names), this.lease()]);
      if (lease) this.lastLease = lease;
      const entry: Omit<EngineStatus, 'updatedAt'> = {
        ...me, logSeq, lag: Math.max(0, logSeq - me.appliedSeq),
        leaseHolder: lease?.holder ?? null, leaseEpoch: lease?.revision ?? null,
      };
      await this.kv.put(statusKey(me.id), JSON.stringify(entry));
      this.lastEntry = entry;
      if (this.failing) this.log.info('engine status published again');
      this.failing = false;
    } catch (err) {
      // NATS unreachable: the entry ages out and the board shows the engine as gone, which is what it looks like.
      if (!this.failing) this.log.warn({ err }, 'cannot publish the engine status');
      this.failing = true;
    }
  }

  /**
   * The last status of the leader before this one (the lease holder last seen that is not `selfId`), or
   * undefined when none was seen or its entry aged out: at a takeover, how long the cluster had no leader.
   */
  async previousLeader(selfId: string): Promise<EngineStatus | undefined> {
    const holder = this.lastLease?.holder;
    if (!holder || holder === selfId) return undefined;
    try {
      const e = await this.kv.get(statusKey(holder));
      return e && e.operation === 'PUT' ? entryOf(e) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Stops reporting; the last entry says `stopped` (a graceful stop, not a crash) until it ages out. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.publishing;
    if (!this.lastEntry) return;
    await this.kv.put(statusKey(this.lastEntry.id), JSON.stringify({ ...this.lastEntry, role: 'stopped' })).catch(() => undefined);
  }
}

/** An engine as a gateway shows it: its entry and how old it is. */
export interface EngineView extends EngineStatus {
  /** ms since it last published (this gateway's clock against the NATS server's). */
  ageMs: number;
}

export interface ClusterView {
  cluster: string;
  /** Lease holder and epoch now (null: nobody holds it, a takeover is under way or no engine runs). */
  lease: { holder: string; epoch: number; renewedAt: number } | null;
  /** Seq of the last command in the log, read now. */
  logSeq: number;
  /** Engines with a live entry, leader first, then by id. */
  engines: EngineView[];
  /** This gateway's own follower. */
  gateway: { appliedSeq: number; lag: number };
}

/**
 * The gateway side: watches the board (an ordered push consumer kept open, so a read enumerates nothing: the
 * client's `keys()` hung for a minute in a test when entries changed during the listing), and reads
 * the lease and the log's last seq at each `read`. Max age removes entries without a message, so entries
 * older than the bucket's max age are left out here. Keeps the last view for /metrics.
 */
export class EngineStatusBoard {
  private readonly entries = new Map<string, EngineStatus>();
  private maxAgeMs = Number.POSITIVE_INFINITY;
  private watcher: { stop(): void } | undefined;
  private stopped = false;
  private jsm: JetStreamManager | undefined;
  private readonly names: ClusterNames;
  /** The view as of the last `read` (undefined before the first). */
  last: ClusterView | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly cluster: string,
    private readonly lease: () => Promise<LeaseHolder | undefined>,
    private readonly gatewaySeq: () => number,
    private readonly clock: () => number = Date.now,
  ) {
    this.names = clusterNames(cluster);
    void this.watch();
  }

  /** Engines that reported within the bucket's max age. */
  engines(): EngineStatus[] {
    const now = this.clock();
    return [...this.entries.values()].filter((e) => now - e.updatedAt <= this.maxAgeMs);
  }

  async read(): Promise<ClusterView> {
    this.jsm ??= await jetstreamManager(this.nc);
    const [lease, logSeq] = await Promise.all([this.lease(), readLogSeq(this.jsm, this.names)]);
    const now = this.clock();
    const appliedSeq = this.gatewaySeq();
    const view: ClusterView = {
      cluster: this.cluster,
      lease: lease ? { holder: lease.holder, epoch: lease.revision, renewedAt: lease.renewedAt } : null,
      logSeq,
      engines: this.engines()
        .map((e) => ({ ...e, ageMs: Math.max(0, now - e.updatedAt) }))
        .sort((a, b) => Number(b.role === 'leader') - Number(a.role === 'leader') || a.id.localeCompare(b.id)),
      gateway: { appliedSeq, lag: Math.max(0, logSeq - appliedSeq) },
    };
    this.last = view;
    return view;
  }

  close(): void {
    this.stopped = true;
    this.watcher?.stop();
  }

  private async watch(): Promise<void> {
    while (!this.stopped) {
      try {
        // Until an engine of this version created the bucket there is nothing to show.
        const kv = await new Kvm(this.nc).open(this.names.enginesBucket);
        this.maxAgeMs = (await kv.status()).ttl || Number.POSITIVE_INFINITY;
        const updates = await kv.watch();
        this.watcher = updates;
        if (this.stopped) updates.stop();
        for await (const e of updates) {
          if (e.operation === 'PUT') this.entries.set(e.key, entryOf(e));
          else this.entries.delete(e.key);
        }
      } catch {
        // Not created yet, or NATS away: try again.
      }
      if (!this.stopped) await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
