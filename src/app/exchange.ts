/**
 * Composition root: builds each subsystem (src/app/builders, one builder each, returning its service and its
 * stop) in dependency order and registers its stop in one ShutdownRegistry, which stops them in reverse order:
 * a graceful stop and a start that fails halfway take the same path. The cross-links are typed ports passed
 * forward (the channels publish through the real-time server, the gateway reads its stats), so the order of
 * building is the order of dependencies and nothing is bound late.
 *
 * The order also sets the graceful stop: bots; the gateway (stop accepting, drain requests in flight); feeds,
 * funding clock, chain bridge; the sequencer (final flush and snapshot) and the event bus; real-time (last
 * order books, then disconnect); the HTTP servers; projection; storage.
 *
 * Data directory: journal.db (commands), snapshots/, read.db (history read model), auth.db (users, sessions,
 * API keys) and the JWT signing key; all of it owner-only (private-data-dir.ts).
 */
import { resolve } from 'node:path';
import pino from 'pino';
import type { StartupStatus } from '../api/ports.js';
import type { ExchangeEngine } from '../engine/api.js';
import type { ChainBridge } from '../chain/chain-bridge.js';
import type { SimulatedChain } from '../chain/simulated-chain.js';
import type { OperatorPush } from '../feeds/index.js';
import type { RegisteredRoute } from '../api/server.js';
import type { Sequencer } from '../sequencer/sequencer.js';
import type { MarketMakerFleet } from '../simulation/market-maker.js';
import type { DemoWallet } from '../simulation/system-accounts.js';
import type { ProjectionFaults } from '../store/projection-faults.js';
import { buildAuth, type ExchangeAuth } from './builders/auth.js';
import { buildChain } from './builders/chain.js';
import { buildEngine } from './builders/engine.js';
import { buildFeeds } from './builders/feeds.js';
import { buildHttp } from './builders/http.js';
import { buildHttpServers } from './builders/http-servers.js';
import { buildJournal } from './builders/journal.js';
import { buildProjection } from './builders/projection.js';
import { buildReadModel } from './builders/read-model.js';
import { buildRealtime, clientUrls } from './builders/realtime.js';
import { buildSequencer } from './builders/sequencer.js';
import { buildSigning } from './builders/signing.js';
import { buildDemo, startMarketMakers } from './builders/simulation.js';
import type { ExchangeConfig } from './config.js';
import { preparePrivateDataDir } from './private-data-dir.js';
import { ShutdownRegistry } from './shutdown-registry.js';
import { StartupClock } from './startup-clock.js';

export interface RunningExchange {
  /** REST base URL, e.g. http://127.0.0.1:8080 */
  url: string;
  /** Where /auth/* is served (same as url unless AUTH_PORT is set). */
  authUrl: string;
  /** Websocket URL (Centrifugo protocol). */
  wsUrl: string;
  /** Channel prefix, `{env}:`. */
  channelPrefix: string;
  docsUrl: string;
  dataDir: string;
  chainId: string;
  engine: ExchangeEngine;
  sequencer: Sequencer;
  /** Secret for `x-operator-token` (the CLI reads it from DATA_DIR/operator-token). */
  operatorToken: string;
  /** The funded demo wallet (DEMO_WALLET), to print at start-up. */
  demoWallet: DemoWallet | undefined;
  /** The market-making bots (MARKET_MAKERS > 0). */
  marketMakers: MarketMakerFleet | undefined;
  /** Ends the real-time subscriptions authorized with a login session (logout, refresh-token reuse). */
  endRealtimeSession(sessionId: string): number;
  /** Operator index push (validated, journaled as a price tick). */
  indexPush: OperatorPush;
  /** Users, roles and sessions (operator tooling grants the admin role here). */
  auth: ExchangeAuth;
  /** Chain adapter: operator hold/release and deposits; `simulated` is the stand-in network. */
  chain: { bridge: ChainBridge; simulated: SimulatedChain };
  /** Where start-up time went (also logged as "started" and shown by GET /api/admin/status). */
  startup: StartupStatus;
  /** Every HTTP route served (both ports when AUTH_PORT is set), with its auth and scope. */
  routes: readonly RegisteredRoute[];
  /** Graceful stop: HTTP, sequencer (flush + snapshot), real-time, storage. Idempotent. */
  close(): Promise<void>;
}

export interface StartOptions {
  /** Called when the sequencer halts (journal failure / engine fault). Default: log; main.ts exits. */
  onFatal?: (err: Error) => void;
  logger?: pino.Logger;
  /** Tests only: failures injected into the read-model projector's transactions. */
  readModelFaults?: ProjectionFaults;
}

/** Before anything is opened: every file created from here on is 0600, older ones are tightened. */
export function prepareDataDir(dataDir: string, log: pino.Logger): void {
  const perms = preparePrivateDataDir(dataDir);
  if (perms.tightened.length > 0) log.warn({ files: perms.tightened }, 'data directory files were readable by others; now owner-only');
  for (const { path, err } of perms.failed) log.error({ err, path }, 'could not make a data directory file owner-only');
}

export async function startExchange(config: ExchangeConfig, options: StartOptions = {}): Promise<RunningExchange> {
  const log = options.logger ?? pino({ name: 'perpx', level: config.logLevel });
  const clock = new StartupClock();
  const dataDir = resolve(config.dataDir);
  prepareDataDir(dataDir, log);
  const shutdown = new ShutdownRegistry(log);
  try {
    const durable = shutdown.add('journal', await buildJournal(config, dataDir));
    const readModel = shutdown.add('read model', await buildReadModel(config, dataDir, options.readModelFaults));
    const { engine, ...recovered } = shutdown.add('engine', await buildEngine(durable, readModel, log));
    clock.wiringStarts();
    const projection = shutdown.add('projection', await buildProjection(config, readModel, recovered.projection, log, options.readModelFaults));
    const auth = shutdown.add('auth', await buildAuth(config, dataDir, log));
    const verifier = shutdown.add('signing', buildSigning(config));
    const httpServers = shutdown.add('http servers', buildHttpServers());
    const instrumentStats = (id: string) => readModel.statistics.instrumentStats(id);
    const realtime = shutdown.add('realtime', await buildRealtime(config, {
      engine, auth: auth.auth, checkConnectToken: (token) => auth.marketData.check(token), instrumentStats, log,
    }));
    const { sequencer, submit, bus } = shutdown.add('sequencer', buildSequencer(config, {
      engine, durable, subscribers: [['read-model', projection.onBatch], ['realtime', realtime.onBatch]], onFatal: options.onFatal, log,
    }));
    const chain = shutdown.add('chain', buildChain(config, { engine, submit, bus, log }));
    const demo = shutdown.add('demo', await buildDemo(config, { dataDir, engine, submit, users: auth.auth, log }));
    const { indexPush } = shutdown.add('feeds', buildFeeds(config, { engine, submit, log }));
    const gateway = shutdown.add('http', await buildHttp(config, {
      engine, submit, sequencer, auth, verifier, readModel, projection, realtime, indexPush, servers: httpServers, log,
      marketMakers: () => demo.marketMakers?.userIds.length ?? 0, startup: clock,
    }));
    shutdown.add('market makers', startMarketMakers(demo.marketMakers, config.marketMakers.intervalMs, log));
    const startup = clock.finish({ ...recovered.recovery, readModel: recovered.readModelCatchUp });
    log.info({ startup }, 'started');

    return {
      ...clientUrls(gateway, config.channelEnv),
      dataDir,
      chainId: config.chainId,
      engine,
      sequencer,
      operatorToken: auth.operatorToken,
      demoWallet: demo.demoWallet,
      marketMakers: demo.marketMakers,
      indexPush,
      endRealtimeSession: (sessionId) => realtime.endSession(sessionId),
      auth: auth.auth,
      chain,
      startup,
      routes: gateway.routes,
      close: () => shutdown.stopAll(),
    };
  } catch (err) {
    await shutdown.stopAll().catch(() => undefined);
    throw err;
  }
}
