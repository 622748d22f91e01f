/**
 * `perpx engine` (issue 30): one or more engine processes, one leading. Each starts as a hot standby: an engine
 * follower applying the committed command log (snapshot, then the log live). The one that holds the leader lease
 * (JetStream KV, src/cluster/leader-lease.ts) stops following, applies what is left of the log, appends the
 * leader-epoch record and starts the leader's services (leader-stack.ts): the sequencer, the command and admin
 * responders, the feeds, funding clock, chain bridge, demo and market makers, and the channel publications.
 *
 * A leader that loses its lease (it could not renew in time: stalled, cut off from NATS) or whose append is
 * refused (another leader fenced it off) stops its services at once, discards its engine and follows again as
 * a standby from snapshot plus log. A graceful stop releases the lease, so a standby takes over at once.
 */
import { hostname } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import pino from 'pino';
import { EngineStatusPublisher, type EngineSelf } from '../../cluster/engine-status.js';
import { LeaderLease } from '../../cluster/leader-lease.js';
import { RequestLedger } from '../../cluster/request-ledger.js';
import type { Engine } from '../../engine/engine.js';
import { ensureCommandStream } from '../../journal/jetstream-journal.js';
import { connectNats } from '../../journal/nats-connection.js';
import type { Sequencer } from '../../sequencer/sequencer.js';
import type { DemoWallet } from '../../simulation/system-accounts.js';
import type { MarketMakerFleet } from '../../simulation/market-maker.js';
import type { Chain } from '../builders/chain.js';
import { buildFollower, type Following } from '../builders/follower.js';
import type { ExchangeConfig } from '../config.js';
import { prepareDataDir, type StartOptions } from '../exchange.js';
import type { Built } from '../shutdown-registry.js';
import { clusterConfig } from './cluster-config.js';
import { startLeaderStack, type LeaderStack } from './leader-stack.js';

export type EngineRole = 'standby' | 'leader' | 'stopped';

export interface Takeover {
  /** Lease epoch it leads under. */
  epoch: number;
  /** From taking the lease to taking commands, ms. */
  ms: number;
  at: number;
}

export interface RunningEngineNode {
  readonly role: EngineRole;
  /** This process's name in the lease. */
  readonly id: string;
  /** The engine it holds now (the leader's, or the standby's follower's). */
  readonly engine: Engine;
  /** Leader only (throws on a standby). */
  readonly sequencer: Sequencer;
  readonly chain: Chain;
  readonly demoWallet: DemoWallet | undefined;
  readonly marketMakers: MarketMakerFleet | undefined;
  readonly journal: string;
  readonly takeovers: readonly Takeover[];
  /** Resolves once this process leads (again). */
  whenLeader(): Promise<void>;
  close(): Promise<void>;
}

/** How often a standby tries to take the lease, ms. */
const ACQUIRE_POLL_MS = 100;

export async function startEngineNode(base: ExchangeConfig, options: StartOptions & { waitForLeadership?: boolean } = {}): Promise<RunningEngineNode> {
  const config = clusterConfig(base, 'engine');
  const log = (options.logger ?? pino({ name: 'perpx', level: config.logLevel })).child({ role: 'engine' });
  const dataDir = resolve(config.dataDir);
  prepareDataDir(dataDir, log);
  const id = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const nc = await connectNats(config.nats.url, `perpx engine ${id}`, config.nats.auth);
  try {
    // A standby follows the log before any engine has appended: the stream must exist.
    await ensureCommandStream(nc, config.nats.cluster, config.nats.streamReplicas);
    const lease = await LeaderLease.open(nc, config.nats.cluster, { holderId: id, ttlMs: config.nats.leaderLeaseTtlMs, replicas: config.nats.streamReplicas });
    let status: EngineStatusPublisher | undefined;
    const node = new EngineNode(config, dataDir, id, lease, log, options.onFatal, async () => {
      await status?.close();
      await nc.drain().catch(() => nc.close());
    });
    // Its entry on the cluster's engine board (gateways' /metrics and GET /api/admin/cluster).
    status = await EngineStatusPublisher.open(nc, config.nats.cluster, {
      self: () => node.self(), lease: () => lease.current(), leaseTtlMs: lease.ttlMs, replicas: config.nats.streamReplicas, log,
    });
    node.status = status;
    status.start();
    await node.start();
    // The first engine of a cluster leads at once; `waitForLeadership` lets a caller (tests) wait for it.
    if (options.waitForLeadership !== false) {
      const led = node.whenLeader();
      const standing = new Promise<void>((r) => setTimeout(r, config.nats.leaderLeaseTtlMs * 2 + 1000).unref());
      await Promise.race([led, standing]);
    }
    return node;
  } catch (err) {
    await nc.close();
    throw err;
  }
}

class EngineNode implements RunningEngineNode {
  private state: EngineRole = 'standby';
  private standby: Built<Following> | undefined;
  private leader: LeaderStack | undefined;
  private stopping = false;
  private loop: Promise<void> = Promise.resolve();
  private leadership = deferred();
  private ended: (() => void) | undefined;
  private firstPhase = deferred();
  private renewTimer: NodeJS.Timeout | undefined;
  readonly takeovers: Takeover[] = [];
  /** Outcomes by gateway request id, kept across roles: what this process followed or led (exactly-once retries). */
  readonly requests = new RequestLedger();
  /** Publishes this process's status (set once at start). */
  status: EngineStatusPublisher | undefined;

  constructor(
    private readonly config: ExchangeConfig,
    private readonly dataDir: string,
    readonly id: string,
    private readonly lease: LeaderLease,
    private readonly log: pino.Logger,
    private readonly onFatal: ((err: Error) => void) | undefined,
    private readonly closeConnection: () => Promise<void>,
  ) {}

  get role(): EngineRole {
    return this.state;
  }

  get engine(): Engine {
    if (this.leader) return this.leader.engine;
    if (this.standby) return this.standby.service.follower.engine as Engine;
    throw new Error('this engine process holds no engine (stopped)');
  }

  private get led(): LeaderStack {
    if (!this.leader) throw new Error(`this engine process is not the leader (${this.state})`);
    return this.leader;
  }

  get sequencer(): Sequencer { return this.led.sequencer; }
  get chain(): Chain { return this.led.chain; }
  get demoWallet(): DemoWallet | undefined { return this.led.demoWallet; }
  get marketMakers(): MarketMakerFleet | undefined { return this.led.marketMakers; }
  get journal(): string { return this.led.journal; }

  /** What the status board shows of this process. */
  self(): EngineSelf {
    let appliedSeq = 0;
    try {
      appliedSeq = this.engine.seq;
    } catch {
      // Between roles (no engine held): shown as 0 for that heartbeat.
    }
    const last = this.takeovers[this.takeovers.length - 1];
    return { id: this.id, role: this.state, appliedSeq, epoch: this.lease.epoch, takeovers: this.takeovers.length, lastTakeoverMs: last?.ms ?? null };
  }

  whenLeader(): Promise<void> {
    return this.leadership.promise;
  }

  async start(): Promise<void> {
    this.loop = this.run().catch((err: unknown) => {
      this.log.fatal({ err }, 'engine process failed');
      this.onFatal?.(err instanceof Error ? err : new Error(String(err)));
    });
    await Promise.race([this.firstPhase.promise, this.loop]);
  }

  async close(): Promise<void> {
    this.stopping = true;
    this.ended?.();
    await this.loop;
    await this.closeConnection();
    this.state = 'stopped';
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      this.state = 'standby';
      try {
        this.standby = await buildFollower(this.config, `perpx engine standby ${this.id}`, {
          log: this.log,
          requests: this.requests,
          writeSnapshots: this.config.snapshotWriter === 'standby'
            ? { everyCommands: this.config.snapshotEveryCommands, everyMs: this.config.snapshotEveryMs, writer: `standby ${this.id}` }
            : undefined,
          onFailed: (err) => this.onFatal?.(err),
        });
      } catch (err) {
        // NATS unreachable (an outage): keep trying; nothing is led or acknowledged meanwhile.
        this.log.warn({ err }, 'cannot follow the log yet; retrying');
        await sleep(1000);
        continue;
      }
      this.log.info({ seq: this.standby.service.follower.seq }, 'engine standby following the log');
      this.firstPhase.resolve();
      while (!this.stopping && !(await this.tryAcquire())) await sleep(ACQUIRE_POLL_MS);
      const following = this.standby;
      if (this.stopping) {
        await following.stop();
        this.standby = undefined;
        break;
      }
      await this.lead(following);
    }
  }

  private async tryAcquire(): Promise<boolean> {
    try {
      return await this.lease.tryAcquire();
    } catch (err) {
      this.log.warn({ err }, 'cannot reach the leader lease');
      return false;
    }
  }

  /** Promotes the standby's engine; returns once this process no longer leads. */
  private async lead(following: Built<Following>): Promise<void> {
    const t0 = performance.now();
    const engine = following.service.follower.engine as Engine;
    await following.stop();
    let lost: string | undefined;
    const done = new Promise<void>((resolveDone) => {
      this.ended = resolveDone;
    });
    const stepDown = (why: string) => {
      lost ??= why;
      this.ended?.();
    };
    this.keepLease(stepDown);
    // The lease TTL must stay above the leader's worst event-loop stall: measured while leading, logged at the end.
    const stalls = monitorEventLoopDelay({ resolution: 10 });
    stalls.enable();
    const ledSince = performance.now();
    try {
      this.leader = await startLeaderStack(this.config, engine, {
        dataDir: this.dataDir, epoch: this.lease.epoch, leader: this.id, requests: this.requests, log: this.log,
        onFatal: (err) => stepDown(`the sequencer halted: ${err.message}`),
        stillLeading: async () => (await this.lease.current())?.revision === this.lease.epoch,
      });
      this.standby = undefined;
      this.state = 'leader';
      const ms = Math.round(performance.now() - t0);
      this.takeovers.push({ epoch: this.lease.epoch, ms, at: Date.now() });
      this.leadership.resolve();
      // How long the cluster had no leader: since the predecessor's last status (≤ one heartbeat after it stopped).
      const previous = await this.status?.previousLeader(this.id);
      this.log.info({
        epoch: this.lease.epoch, seq: engine.seq, takeoverMs: ms,
        ...(previous ? { previousLeader: previous.id, previousLeaderWas: previous.role, sincePreviousLeaderStatusMs: Date.now() - previous.updatedAt } : {}),
      }, 'engine leads');
      void this.status?.publish();
      await done;
    } catch (err) {
      lost ??= `could not start leading: ${err instanceof Error ? err.message : String(err)}`;
    } finally {
      clearInterval(this.renewTimer);
      stalls.disable();
      this.log.info({
        epoch: this.lease.epoch, ledSeconds: Math.round((performance.now() - ledSince) / 1000),
        maxStallMs: Math.round(stalls.max / 1e6), p99StallMs: Math.round(stalls.percentile(99) / 1e6), leaseTtlMs: this.lease.ttlMs,
      }, 'leader event loop: longest stall while leading');
      this.standby = undefined;
      const stack = this.leader;
      this.leader = undefined;
      if (lost) this.log.warn({ reason: lost, epoch: this.lease.epoch }, 'engine steps down; it follows the log again');
      await stack?.close().catch((err: unknown) => this.log.warn({ err }, 'leader services did not stop cleanly'));
      if (this.stopping && !lost) await this.lease.release();
      if (!this.stopping) {
        this.leadership = deferred();
        this.state = 'standby';
      }
    }
  }

  /** Renews every fifth of the TTL; a renewal refused, or none succeeding within the TTL, ends the leadership. */
  private keepLease(stepDown: (why: string) => void): void {
    const ttl = this.lease.ttlMs;
    let renewedAt = Date.now();
    let issuedAt = renewedAt;
    let renewing = false;
    this.renewTimer = setInterval(() => {
      if (Date.now() - renewedAt > ttl) return stepDown(`lease not renewed for ${Date.now() - renewedAt} ms`);
      if (renewing) return;
      renewing = true;
      // The server's TTL runs from its write, which comes after this: counting from here errs on the safe side.
      issuedAt = Date.now();
      this.lease.renew().then(
        (held) => {
          if (held) renewedAt = issuedAt;
          else stepDown('lease taken by another engine');
        },
        (err: unknown) => this.log.warn({ err }, 'lease renewal failed; retrying'),
      ).finally(() => {
        renewing = false;
      });
    }, Math.max(50, Math.floor(ttl / 5)));
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
