/**
 * `perpx gateway` (any number, behind a load balancer): REST, auth and the websocket. Live state is read from
 * an engine follower fed by the committed log; commands go to the engine leader over NATS, and their reply
 * waits until this gateway's follower has applied them (read-your-writes on every route). History reads the
 * projector's PostgreSQL read model once it holds what the follower has applied. Channels come from the shared
 * NATS broker, published by the leader, so a client may reconnect to any gateway and recover.
 */
import { resolve } from 'node:path';
import pino from 'pino';
import { natsEngineAdmin } from '../../cluster/admin-transport.js';
import { newCommandPathTiming, timedClusterSubmit } from '../../cluster/command-path-timing.js';
import { NatsCommandSubmitter } from '../../cluster/command-transport.js';
import { EngineStatusBoard } from '../../cluster/engine-status.js';
import { LeaderDirectory } from '../../cluster/leader-lease.js';
import { LeaderStatsMirror } from '../../cluster/leader-stats-mirror.js';
import type { JetStreamEngineFollower } from '../../cluster/follower.js';
import type { Submit } from '../../engine/commands.js';
import { registerClusterMetrics } from '../../metrics/cluster-metrics.js';
import { feedInstrumentOf, OperatorPush } from '../../feeds/index.js';
import type { RegisteredRoute } from '../../api/server.js';
import type { SequencerState } from '../../sequencer/sequencer.js';
import type { StartupStatus } from '../../api/ports.js';
import { buildAuth, type ExchangeAuth } from '../builders/auth.js';
import { buildFollower } from '../builders/follower.js';
import { buildHttp, type CommandLogView, type GatewayEngine } from '../builders/http.js';
import { buildHttpServers } from '../builders/http-servers.js';
import { startStatisticsFold } from '../builders/projection.js';
import { buildReadModel } from '../builders/read-model.js';
import { buildRealtime, clientUrls } from '../builders/realtime.js';
import { buildSigning } from '../builders/signing.js';
import type { ExchangeConfig } from '../config.js';
import { prepareDataDir, type StartOptions } from '../exchange.js';
import { ShutdownRegistry } from '../shutdown-registry.js';
import { StartupClock } from '../startup-clock.js';
import { clusterConfig } from './cluster-config.js';
import { ProjectedSeqWatch } from './projected-seq-watch.js';

export interface RunningGateway {
  url: string;
  authUrl: string;
  wsUrl: string;
  channelPrefix: string;
  docsUrl: string;
  dataDir: string;
  chainId: string;
  follower: JetStreamEngineFollower;
  operatorToken: string;
  /** Users, roles and sessions (the shared PostgreSQL store). */
  auth: ExchangeAuth;
  /** Operator index push, submitted to the leader as a price tick. */
  indexPush: OperatorPush;
  /** Ends this gateway's real-time subscriptions authorized with a login session. */
  endRealtimeSession(sessionId: string): number;
  startup: StartupStatus;
  routes: readonly RegisteredRoute[];
  close(): Promise<void>;
}

/** How long a reply waits for this gateway's follower to apply its command before it is a 503. */
const FOLLOWER_WAIT_MS = 10_000;
/** How long a /metrics scrape waits for the leader's statistics before it shows the last copy. */
const LEADER_STATS_WAIT_MS = 2_000;

const FOLLOWER_STATES: Record<JetStreamEngineFollower['state'], SequencerState> = { following: 'running', failed: 'failed', closed: 'stopped' };

export async function startGatewayNode(base: ExchangeConfig, options: StartOptions = {}): Promise<RunningGateway> {
  const config = clusterConfig(base, 'gateway');
  const log = (options.logger ?? pino({ name: 'perpx', level: config.logLevel })).child({ role: 'gateway' });
  const clock = new StartupClock();
  const dataDir = resolve(config.dataDir);
  prepareDataDir(dataDir, log);
  const shutdown = new ShutdownRegistry(log);
  try {
    const readModel = shutdown.add('read model', await buildReadModel(config, dataDir));
    const { follower, nc } = shutdown.add('follower', await buildFollower(config, 'perpx gateway', { log, onFailed: options.onFatal }));
    clock.wiringStarts();
    // Who leads (the lease epoch, watched): commands go to that leader's own subject.
    const directory = await LeaderDirectory.open(nc, config.nats.cluster);
    shutdown.add('leader directory', { service: directory, stop: () => directory.close() });
    const leader = new NatsCommandSubmitter({ nc, cluster: config.nats.cluster, leader: directory });
    const timing = newCommandPathTiming();
    const submit: Submit = timedClusterSubmit(leader, follower, timing, FOLLOWER_WAIT_MS);
    const projected = new ProjectedSeqWatch({ lastSeq: () => readModel.store.projector.lastSeq() });
    shutdown.add('projected seq', { service: projected, stop: () => projected.close() });
    shutdown.add('statistics', { service: undefined, stop: startStatisticsFold(readModel, log) });
    const auth = shutdown.add('auth', await buildAuth(config, dataDir, log));
    const verifier = shutdown.add('signing', buildSigning(config));
    const httpServers = shutdown.add('http servers', buildHttpServers());
    const realtime = shutdown.add('realtime', await buildRealtime(config, {
      engine: follower.engine, auth: auth.auth, checkConnectToken: (token) => auth.marketData.check(token),
      instrumentStats: (id) => readModel.statistics.instrumentStats(id), publishChannels: false, log,
    }));
    const admin = natsEngineAdmin(nc, config.nats.cluster, directory);
    const leaderStatsCall = natsEngineAdmin(nc, config.nats.cluster, directory, LEADER_STATS_WAIT_MS);
    const leaderStats = new LeaderStatsMirror(() => leaderStatsCall.stats(), log);
    const engines = new EngineStatusBoard(nc, config.nats.cluster, () => directory.holder(), () => follower.seq);
    shutdown.add('engine status board', { service: engines, stop: () => engines.close() });
    const refreshStats = async () => {
      await Promise.all([leaderStats.refresh(), engines.read().catch((err: unknown) => log.warn({ err }, 'engine status board unreadable: /metrics shows the last view'))]);
    };
    const commandLog: CommandLogView = {
      get state() { return FOLLOWER_STATES[follower.state]; },
      stats: leaderStats.stats,
      get seq() { return follower.seq; },
      snapshotNow: () => admin.snapshotNow(),
      checkpoint: () => admin.checkpoint(),
    };
    const indexPush = new OperatorPush(() => follower.engine.instrumentConfigs().map(feedInstrumentOf), async (instrument, indexPrice) => {
      const r = await submit({ kind: 'price.tick', instrument, indexPrice });
      if (!r.reply.ok) throw new Error(`price tick for ${instrument} refused: ${r.reply.error.message}`);
    });
    // The follower's engine is a full Engine (createEngine / restoreEngine), ledger included.
    const engine = follower.engine as GatewayEngine;
    const gateway = shutdown.add('http', await buildHttp(config, {
      engine, submit, sequencer: commandLog, auth, verifier, readModel, realtime, indexPush, servers: httpServers, log,
      projection: {
        whenCaughtUp: (seq) => projected.whenCaughtUp(seq),
        status: () => ({ projectedSeq: projected.projectedSeq, state: 'current' }),
      },
      marketMakers: () => 0, startup: clock, statsRefresh: refreshStats,
      cluster: () => engines.read(), metricsRegister: (registry) => registerClusterMetrics(registry, () => engines.last),
      metricsHistograms: [
        ['perpx_gateway_leader_roundtrip_seconds', 'Command request to the engine leader until its answer (NATS both ways, engine apply, JetStream append)', () => timing.leaderRoundTrip],
        ['perpx_gateway_follower_wait_seconds', "After the leader's answer, until this gateway's follower applied the command (read-your-writes)", () => timing.followerWait],
      ],
    }));
    const startup = clock.finish({ snapshotSeq: 0, replayed: 0, snapshotReadMs: 0, snapshotRestoreMs: 0, replayMs: 0, skippedSnapshots: [], readModel: { fromSeq: 0, projected: 0, catchUpMs: 0 } });
    log.info({ url: gateway.url, seq: follower.seq }, 'gateway started');
    return {
      ...clientUrls(gateway, config.channelEnv),
      dataDir,
      chainId: config.chainId,
      follower,
      operatorToken: auth.operatorToken,
      auth: auth.auth,
      indexPush,
      endRealtimeSession: (sessionId) => realtime.endSession(sessionId),
      startup,
      routes: gateway.routes,
      close: () => shutdown.stopAll(),
    };
  } catch (err) {
    await shutdown.stopAll().catch(() => undefined);
    throw err;
  }
}
