/**
 * The HTTP gateway: REST (and the /auth routes on AUTH_PORT when set), OpenAPI, metrics, the operator routes;
 * the websocket server shares its port. Its stop is the first step of a graceful stop after the bots: no new
 * connections, and the requests in flight get their real answers while the sequencer still runs.
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type pino from 'pino';
import { withOauthGrants } from '../../accounts/index.js';
import { proxyTrust } from '../../api/client-ip.js';
import type { AdminDeps, ApiDeps, ExchangeStatus, StartupStatus } from '../../api/ports.js';
import { buildAuthServer, buildServer, type RegisteredRoute } from '../../api/server.js';
import { formatUnits } from '../../domain/fixed.js';
import type { Submit } from '../../engine/commands.js';
import type { OperatorPush } from '../../feeds/index.js';
import type { ClusterView } from '../../cluster/engine-status.js';
import { createExchangeMetrics, type MetricsSources } from '../../metrics/exchange-metrics.js';
import type { Sequencer } from '../../sequencer/sequencer.js';
import type { SignatureVerifier } from '../../signing/ports.js';
import type { ExchangeConfig } from '../config.js';
import { HttpDrain } from '../http-drain.js';
import { historyReader, projectedAccountReads } from '../history-reader.js';
import type { Built } from '../shutdown-registry.js';
import type { AuthParts } from './auth.js';
import type { EngineQueries } from '../../engine/api.js';
import type { HttpServers } from './http-servers.js';
import type { Projection } from './projection.js';
import type { ReadModel } from './read-model.js';
import type { Realtime } from './realtime.js';

export interface Gateway {
  /** REST base URL, e.g. http://127.0.0.1:8080 */
  url: string;
  /** Where /auth/* is served (url unless AUTH_PORT is set). */
  authUrl: string;
  /** Every route served (both ports when AUTH_PORT is set), with its auth and scope. */
  routes: readonly RegisteredRoute[];
}

/** Live state the gateway reads, the ledger included (admin status, metrics). */
export type GatewayEngine = EngineQueries & Required<Pick<EngineQueries, 'ledger'>>;

/** What the gateway reads of the command path (a cluster gateway answers it for the leader it follows). */
export type CommandLogView = Pick<Sequencer, 'state' | 'stats' | 'seq' | 'snapshotNow' | 'checkpoint'>;

export interface GatewayPorts {
  /** Live state: the engine itself, or a cluster gateway's follower. */
  engine: GatewayEngine;
  submit: Submit;
  /** Operator snapshot/checkpoint, status and metrics: the sequencer, or a gateway's view of the leader. */
  sequencer: CommandLogView;
  auth: AuthParts;
  verifier: SignatureVerifier;
  readModel: ReadModel;
  projection: Pick<Projection, 'whenCaughtUp' | 'status'>;
  realtime: Pick<Realtime, 'stats' | 'attach'>;
  indexPush: OperatorPush;
  /** Number of market-making bots (admin status). */
  marketMakers: () => number;
  startup: { startedAt: number; report: StartupStatus | undefined };
  /** Where the servers are closed once the websockets are gone (see http-servers.ts). */
  servers: HttpServers;
  /** Histograms of this process's own added to /metrics (a cluster gateway's command path). */
  metricsHistograms?: MetricsSources['histograms'];
  /** More metrics of this process's own (a cluster gateway's view of the engines). */
  metricsRegister?: MetricsSources['register'];
  /** The engines and the lease as an operator sees them (a cluster gateway only). */
  cluster?: () => Promise<ClusterView>;
  /** Run before /metrics and admin status read `sequencer.stats` (a cluster gateway copies the leader's). */
  statsRefresh?: MetricsSources['refresh'];
  log: pino.Logger;
}

type GatewayConfig = Pick<ExchangeConfig,
  'chainId' | 'channelEnv' | 'fundingIntervalMs' | 'faucetAmount' | 'httpBodyLimit' | 'httpTimeouts' | 'rateLimits' | 'logLevel' |
  'authPort' | 'trustProxy' | 'port' | 'host' | 'shutdownGraceMs'>;

function urlOf(app: FastifyInstance, host: string): string {
  const addr = app.server.address() as AddressInfo;
  const h = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${h}:${addr.port}`;
}

/** GET /api/admin/status: process facts read at request time. */
function exchangeStatus(p: GatewayPorts): ExchangeStatus {
  const l = p.engine.ledger();
  return {
    startedAt: p.startup.startedAt,
    sequencer: p.sequencer.state,
    lastSnapshotSeq: p.sequencer.stats.lastSnapshotSeq,
    commandsByKind: { ...p.sequencer.stats.commandsByKind },
    realtime: { connections: p.realtime.stats.connections, subscriptions: p.realtime.stats.subscriptions },
    ledger: {
      deposits: formatUnits(l.deposits), withdrawals: formatUnits(l.withdrawals), balances: formatUnits(l.balances),
      fees: formatUnits(l.fees), reserveFund: formatUnits(l.reserveFund), openCost: formatUnits(l.openCost),
    },
    readModel: p.projection.status(),
    marketMakers: p.marketMakers(),
    startup: p.startup.report,
  };
}

function apiDeps(config: GatewayConfig, p: GatewayPorts): ApiDeps {
  const { engine, sequencer, readModel, auth } = p;
  const admin: AdminDeps = {
    operatorToken: auth.operatorToken,
    setRole: (exchangeId, role) => auth.auth.setRole(exchangeId, role),
    snapshotNow: () => sequencer.snapshotNow(),
    checkpoint: () => sequencer.checkpoint(),
    cluster: p.cluster,
    status: async () => {
      await p.statsRefresh?.();
      return exchangeStatus(p);
    },
  };
  const caughtUp = () => p.projection.whenCaughtUp(sequencer.seq);
  const accounts = {
    ...auth.accountStores,
    statistics: readModel.statistics,
    ...projectedAccountReads(readModel.userHistory, readModel.store.queries, caughtUp),
    onlineConnections: () => p.realtime.stats.connections,
  };
  return {
    engine,
    submit: p.submit,
    // OAuth grant tokens authenticate HTTP requests too (scoped); the real-time server keeps wallet auth only.
    auth: withOauthGrants(auth.auth, accounts.oauth, Date.now),
    verifier: p.verifier,
    chainId: config.chainId,
    channelEnv: config.channelEnv,
    fundingIntervalMs: config.fundingIntervalMs,
    // History reads first wait for the projection of every command applied so far (read-your-writes).
    readStore: historyReader(readModel.store.queries, {
      stats: readModel.store.statistics, exchangeStats: readModel.statistics, caughtUp,
    }),
    clock: Date.now,
    config: { faucetAmount: config.faucetAmount, bodyLimit: config.httpBodyLimit, timeouts: config.httpTimeouts, rateLimits: config.rateLimits },
    admin,
    metrics: createExchangeMetrics({ engine, sequencer, ledger: () => engine.ledger(), realtime: () => p.realtime.stats, histograms: p.metricsHistograms, register: p.metricsRegister, refresh: p.statsRefresh }),
    accounts,
    indexPush: (instrument, price) => p.indexPush.push(instrument, price),
    marketDataTokens: auth.marketData,
  };
}

/** Builds the servers and listens (the main port, then AUTH_PORT when set). */
export async function buildHttp(config: GatewayConfig, ports: GatewayPorts): Promise<Built<Gateway>> {
  const deps = apiDeps(config, ports);
  const logger = config.logLevel === 'silent' ? false : { level: config.logLevel === 'info' ? 'warn' : config.logLevel };
  const separateAuth = config.authPort !== undefined;
  // Who the client of a request is (per-IP budgets); the real-time server applies the same rule to upgrades.
  const trustProxy = proxyTrust(config.trustProxy);
  const app = await buildServer(deps, { logger, includeAuthRoutes: !separateAuth, trustProxy });
  ports.servers.add(app);
  const authApp = separateAuth ? await buildAuthServer(deps, { logger, docs: false, trustProxy }) : undefined;
  if (authApp) ports.servers.add(authApp);
  const drains = [new HttpDrain(app.server), ...(authApp ? [new HttpDrain(authApp.server)] : [])];
  ports.realtime.attach(app.server);

  await app.listen({ port: config.port, host: config.host });
  if (authApp) await authApp.listen({ port: config.authPort ?? 0, host: config.host });
  const url = urlOf(app, config.host);
  return {
    service: {
      url,
      authUrl: authApp ? urlOf(authApp, config.host) : url,
      routes: [...app.registeredRoutes, ...(authApp?.registeredRoutes ?? [])],
    },
    stop: async () => {
      // Responses from now on carry `Connection: close`, so keep-alive sockets end after their current request.
      void ports.servers.beginClose();
      // Requests already in flight finish with the sequencer still running: each gets its real answer.
      const drained = await Promise.all(drains.map((d) => d.drain(config.shutdownGraceMs)));
      if (drained.includes(false)) {
        ports.log.warn({ inFlight: drains.reduce((n, d) => n + d.pending, 0) }, 'requests still in flight after the grace period; they will be refused');
      }
    },
  };
}
