/**
 * Composition root: wires journal + snapshots → recovered engine → sequencer → event bus → (read-model
 * projector, real-time channels), and the HTTP gateway + websocket on one Fastify server.
 *
 * Data directory layout: journal.db (commands), snapshots/ (engine snapshots), read.db (history read
 * model), auth.db (users, sessions, API keys) and the JWT signing key; all of it owner-only (private-data-dir.ts).
 */
import { performance } from 'node:perf_hooks';
import { join, resolve } from 'node:path';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { clientIp, proxyTrust } from '../api/client-ip.js';
import { buildAuthServer, buildServer, type RegisteredRoute } from '../api/server.js';
import type { AdminDeps, ApiDeps, StartupStatus } from '../api/deps.js';
import { openAccountStores, withOauthGrants } from '../accounts/index.js';
import { createAuthService, InProcessSessionEvents } from '../auth/index.js';
import { loadOrCreateOperatorToken } from '../auth/operator-token.js';
import { ChainBridge } from '../chain/chain-bridge.js';
import { SimulatedChain } from '../chain/simulated-chain.js';
import { DEMO_INSTRUMENTS, DEMO_START_PRICES } from '../domain/instrument.js';
import { formatUnits, parseUnits } from '../domain/fixed.js';
import type { ExchangeEngine } from '../engine/api.js';
import { createEngine, restoreEngine } from '../engine/engine.js';
import { FileSnapshotStore } from '../journal/file-snapshots.js';
import { JournalWriteError } from '../journal/ports.js';
import { ThreadedSnapshotReplica } from '../sequencer/snapshot-replica.js';
import { openSqliteJournal } from '../journal/sqlite-journal.js';
import { openThreadedSqliteJournal } from '../journal/threaded-sqlite-journal.js';
import { ExchangeChannels } from '../realtime/channels.js';
import { createRealtimeServer, DisconnectCode } from '../realtime/index.js';
import { InProcessEventBroker } from '../sequencer/event-bus.js';
import { recoverWithReport } from '../sequencer/recovery.js';
import { Sequencer, type CommandInput } from '../sequencer/sequencer.js';
import { createSignatureVerifier } from '../signing/index.js';
import { createExchangeMetrics } from '../metrics/exchange-metrics.js';
import { MarketMakerFleet } from '../simulation/market-maker.js';
import { setUpDemoWallet, setUpMarketMakers, type DemoWallet } from '../simulation/system-accounts.js';
import { CsvReplayFeed, feedInstrumentOf, loadCsvSeries, OperatorPush, RandomWalkFeed, type IndexFeed, type PriceSink } from '../feeds/index.js';
import { openReadStore } from '../store/index.js';
import { ExchangeStatistics } from '../store/exchange-statistics.js';
import { UserHistory } from '../store/user-history.js';
import { ThreadedSqliteProjector } from '../store/threaded-projector.js';
import type { ProjectionFaults } from '../store/projection-faults.js';
import type { ExchangeConfig } from './config.js';
import { FundingClock } from './funding-clock.js';
import { HttpDrain } from './http-drain.js';
import { preparePrivateDataDir } from './private-data-dir.js';
import { ProjectorFeed } from './projector-feed.js';
import { readStoreAdapter } from './read-store.js';

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
  auth: Awaited<ReturnType<typeof createAuthService>>;
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

const WS_PATH = '/connection/websocket';

function urlOf(app: FastifyInstance, host: string): string {
  const addr = app.server.address() as AddressInfo;
  const h = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${h}:${addr.port}`;
}

/** The configured automatic index source (null = operator push only). */
function createFeed(config: ExchangeConfig, engine: ExchangeEngine, sink: PriceSink, log: pino.Logger): IndexFeed | null {
  const instruments = engine.instrumentConfigs().map(feedInstrumentOf);
  const onError = (err: unknown) => log.warn({ err }, 'index feed submission failed');
  if (config.indexFeed === 'random') {
    const startPrices: Record<string, number> = {};
    for (const [id, p] of Object.entries(DEMO_START_PRICES)) startPrices[id] = parseUnits(p);
    return new RandomWalkFeed({
      instruments: () => engine.instrumentConfigs().map(feedInstrumentOf), startPrices, sink, onError, intervalMs: config.indexFeedIntervalMs, seed: config.indexFeedSeed,
      volatility: parseUnits(config.indexFeedVolatility), currentIndex: (id) => engine.instrumentState(id)?.indexPrice ?? null,
    });
  }
  if (config.indexFeed === 'csv') {
    if (config.indexFeedCsv === '') throw new Error('INDEX_FEED=csv needs INDEX_FEED_CSV');
    return new CsvReplayFeed({ series: loadCsvSeries(config.indexFeedCsv, instruments), sink, speed: config.indexFeedCsvSpeed, onError });
  }
  return null;
}

export async function startExchange(config: ExchangeConfig, options: StartOptions = {}): Promise<RunningExchange> {
  const log = options.logger ?? pino({ name: 'perpx', level: config.logLevel });
  const startedAt = Date.now();
  const tStart = performance.now();
  const dataDir = resolve(config.dataDir);
  // Before anything is opened: every file created from here on is 0600, older ones are tightened.
  const perms = preparePrivateDataDir(dataDir);
  if (perms.tightened.length > 0) log.warn({ files: perms.tightened }, 'data directory files were readable by others; now owner-only');
  for (const { path, err } of perms.failed) log.error({ err, path }, 'could not make a data directory file owner-only');
  const cleanups: Array<() => Promise<void> | void> = [];
  const cleanup = async () => {
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch (err) {
        log.warn({ err }, 'cleanup step failed');
      }
    }
    cleanups.length = 0;
  };

  try {
    // ---- durability + engine ----
    const openJournal = config.journalWriter === 'thread' ? openThreadedSqliteJournal : openSqliteJournal;
    const journal = await openJournal({ file: join(dataDir, 'journal.db') });
    cleanups.push(() => journal.close());
    const snapshots = new FileSnapshotStore({ dir: join(dataDir, 'snapshots') });
    cleanups.push(() => snapshots.close());
    // The read model is opened first: recovery starts from the newest snapshot it is not behind, so the
    // one journal replay also re-creates the events it lacks (none after a clean stop).
    const readFile = join(dataDir, 'read.db');
    const store = await openReadStore(
      config.readStoreUrl === '' ? { kind: 'sqlite', file: readFile } : { kind: 'postgres', connectionString: config.readStoreUrl },
      options.readModelFaults,
    );
    cleanups.push(() => store.close());
    const readModelSeq = await store.projector.lastSeq();
    // Recovery's replay feeds the in-process projector; live projection may then move to a worker thread.
    const recoveryFeed = new ProjectorFeed(store.projector, log.child({ module: 'projector' }), readModelSeq);
    let projected = 0;
    const { engine, report: recovery } = await recoverWithReport({
      journal,
      snapshots,
      createEngine,
      restoreEngine,
      maxSnapshotSeq: readModelSeq,
      logger: log.child({ module: 'recovery' }),
      onApplied: (entry, result) => {
        if (entry.seq <= readModelSeq) return;
        recoveryFeed.push({ seq: entry.seq, ts: entry.command.ts, kind: entry.command.kind, events: result.events });
        projected++;
      },
      onProgress: (p) => {
        if (p.phase === 'replay') log.info({ seq: p.seq, target: p.targetSeq }, 'replaying journal');
      },
    });
    log.info({ seq: engine.seq, ...recovery }, 'engine recovered');
    const tCatchUp = performance.now();
    await recoveryFeed.drain();
    // What the catch-up could not project (read model storage failing) continues in the live feed.
    const caughtUp = recoveryFeed.handOver();
    const readModel = { fromSeq: readModelSeq, projected, catchUpMs: Math.round(performance.now() - tCatchUp) };
    if (projected > 0) log.info({ ...readModel, seq: engine.seq }, 'read model caught up');
    const tWiring = performance.now();

    // ---- live read-model projection ----
    let threadedProjector: ThreadedSqliteProjector | undefined;
    // The projection worker writes SQLite files; a PostgreSQL read model is written inline (its I/O is async anyway).
    if (config.readModelWriter === 'thread' && store.kind === 'sqlite') {
      const p = new ThreadedSqliteProjector({ file: readFile, faults: options.readModelFaults?.shared });
      threadedProjector = p;
      cleanups.push(() => p.close());
      await p.whenReady();
    }
    const feed = new ProjectorFeed(threadedProjector ?? store.projector, log.child({ module: 'projector' }), caughtUp.projectedSeq, { lingerMs: config.readModelLingerMs });
    for (const batch of caughtUp.pending) feed.push(batch);

    let startup: StartupStatus | undefined;

    // ---- auth + signatures ----
    const authDb = new Database(join(dataDir, 'auth.db'));
    authDb.pragma('journal_mode = WAL');
    cleanups.push(() => {
      authDb.close();
    });
    const auth = await createAuthService({
      db: authDb,
      dataDir,
      chainId: config.chainId,
      accessTokenTtlSec: config.accessTokenTtlSec,
      refreshTokenTtlSec: config.refreshTokenTtlSec,
      sessionEvents: new InProcessSessionEvents((err) => log.warn({ err }, 'a session revocation listener failed')),
      nonceLimits: config.nonceLimits,
      allowedDomains: config.siweDomains,
    });
    const operatorToken = await loadOrCreateOperatorToken(dataDir);
    const verifier = createSignatureVerifier({ threads: config.signatureThreads });
    cleanups.push(() => verifier.close());

    // ---- sequencer + bus ----
    const bus = new InProcessEventBroker({ logger: log.child({ module: 'event-bus' }) });
    // The replica reads the same journal file and writes the same snapshot directory (after its own recovery).
    let replica: ThreadedSnapshotReplica | undefined;
    if (config.snapshotWriter === 'replica') {
      const r = new ThreadedSnapshotReplica({ journalFile: join(dataDir, 'journal.db'), snapshotDir: join(dataDir, 'snapshots'), keep: 3 });
      replica = r;
      cleanups.push(() => r.close());
    }
    const sequencer = new Sequencer({
      engine,
      journal,
      snapshots,
      replica,
      bus,
      snapshotEveryCommands: config.snapshotEveryCommands,
      snapshotEveryMs: config.snapshotEveryMs,
      logger: log.child({ module: 'sequencer' }),
      onFatal: (err) => {
        if (err instanceof JournalWriteError) {
          log.fatal({ err, code: err.code, journal: join(dataDir, 'journal.db') },
            'journal write failed: no command is accepted or acknowledged any more; free space (or fix the disk) where the journal lives, then restart: recovery replays the journal');
        } else {
          log.fatal({ err }, 'sequencer halted; the process must restart and recover from the journal');
        }
        options.onFatal?.(err);
      },
    });
    cleanups.push(() => sequencer.stop());
    bus.subscribe('read-model', feed.push);
    cleanups.push(() => feed.drain());
    const submit = (cmd: CommandInput) => sequencer.submit(cmd);
    const priceSink: PriceSink = async (instrument, indexPrice) => {
      const r = await submit({ kind: 'price.tick', instrument, indexPrice });
      if (!r.reply.ok) throw new Error(`price tick for ${instrument} refused: ${r.reply.error.message}`);
    };
    const indexPush = new OperatorPush(() => engine.instrumentConfigs().map(feedInstrumentOf), priceSink);

    // ---- chain adapter (simulated network; a real chain watcher implements the same port) ----
    const simulated = new SimulatedChain({ delayMs: config.chainDelayMs, failureRate: config.chainFailureRate, seed: config.chainSeed });
    const bridge = new ChainBridge({ network: simulated, engine, submit, logger: log.child({ module: 'chain' }) });
    bus.subscribe('chain', bridge.onBatch);
    cleanups.push(() => bridge.stop());

    // ---- HTTP ----
    let fleet: MarketMakerFleet | undefined;
    let rtStats: { connections: number; subscriptions: number } = { connections: 0, subscriptions: 0 };
    const admin: AdminDeps = {
      operatorToken,
      setRole: (exchangeId, role) => auth.setRole(exchangeId, role),
      snapshotNow: () => sequencer.snapshotNow(),
      checkpoint: () => sequencer.checkpoint(),
      status: () => {
        const l = engine.ledger();
        return {
          startedAt,
          sequencer: sequencer.state,
          lastSnapshotSeq: sequencer.stats.lastSnapshotSeq,
          commandsByKind: { ...sequencer.stats.commandsByKind },
          realtime: { connections: rtStats.connections, subscriptions: rtStats.subscriptions },
          ledger: {
            deposits: formatUnits(l.deposits), withdrawals: formatUnits(l.withdrawals), balances: formatUnits(l.balances),
            fees: formatUnits(l.fees), reserveFund: formatUnits(l.reserveFund), openCost: formatUnits(l.openCost),
          },
          readModel: feed.status(),
          marketMakers: fleet?.userIds.length ?? 0,
          startup,
        };
      },
    };
    const metrics = createExchangeMetrics({
      engine,
      sequencer,
      ledger: () => engine.ledger(),
      realtime: () => rtStats,
    });
    // Filled in once the real-time server exists (it attaches to the HTTP server built below).
    let onlineConnections = () => 0;
    const exchangeStatistics = new ExchangeStatistics(store.db);
    const accounts = {
      ...openAccountStores(authDb, (userId) => auth.forgetUser(userId)),
      statistics: exchangeStatistics,
      userHistory: new UserHistory(store.db, store.statistics),
      queries: store.queries,
      onlineConnections: () => onlineConnections(),
    };
    const deps: ApiDeps = {
      engine,
      submit,
      // OAuth grant tokens authenticate HTTP requests too (scoped); the real-time server keeps wallet auth only.
      auth: withOauthGrants(auth, accounts.oauth, Date.now),
      verifier,
      chainId: config.chainId,
      channelEnv: config.channelEnv,
      fundingIntervalMs: config.fundingIntervalMs,
      // History reads first wait for the projection of every command applied so far (read-your-writes).
      readStore: readStoreAdapter(store.queries, { stats: store.statistics, exchangeStats: exchangeStatistics, caughtUp: () => feed.whenCaughtUp(sequencer.seq) }),
      clock: Date.now,
      config: { faucetAmount: config.faucetAmount, bodyLimit: config.httpBodyLimit, timeouts: config.httpTimeouts, rateLimits: config.rateLimits },
      admin,
      metrics,
      accounts,
      indexPush: (instrument, price) => indexPush.push(instrument, price),
    };
    const fastifyLogger = config.logLevel === 'silent' ? false : { level: config.logLevel === 'info' ? 'warn' : config.logLevel };
    const separateAuth = config.authPort !== undefined;
    // Who the client of a request is (per-IP budgets); clientIp(req, trustProxy) answers the same for websocket upgrades.
    const trustProxy = proxyTrust(config.trustProxy);
    const app = await buildServer(deps, { logger: fastifyLogger, includeAuthRoutes: !separateAuth, trustProxy });
    const authApp = separateAuth ? await buildAuthServer(deps, { logger: fastifyLogger, docs: false, trustProxy }) : undefined;
    const drains = [new HttpDrain(app.server), ...(authApp ? [new HttpDrain(authApp.server)] : [])];

    // ---- real-time ----
    let publish: (channel: string, data: unknown) => unknown = () => undefined;
    let hasSubscribers: (channel: string) => boolean = () => true;
    // The instruments channel reads the rolling 24 h statistics folded so far (synchronously, on each instrument
    // change). The fold catches up once a second whether or not anyone listens, so the first publication after a
    // quiet stretch carries current figures (a fold triggered by the publication itself came one late: zeros).
    const foldStatistics = () => void exchangeStatistics.refresh().catch((err: unknown) => log.warn({ err }, 'statistics fold failed'));
    foldStatistics();
    const statsTimer = setInterval(foldStatistics, 1000);
    statsTimer.unref();
    cleanups.push(() => clearInterval(statsTimer));
    const channels = new ExchangeChannels({
      env: config.channelEnv,
      engine,
      publish: (ch, data) => publish(ch, data),
      hasSubscribers: (ch) => hasSubscribers(ch),
      instrumentStats: (instrument) => exchangeStatistics.instrumentStats(instrument),
      auth,
      bookIntervalMs: config.bookPublishIntervalMs,
      heartbeatMs: config.heartbeatMs,
      onError: (err, channel) => log.warn({ err, channel }, 'real-time publish failed'),
    });
    const rt = createRealtimeServer({
      server: app.server,
      path: WS_PATH,
      authorize: channels.authorize,
      historyFor: channels.historyFor,
      writeDelayMs: config.wsWriteDelayMs,
      logger: log.child({ module: 'realtime' }),
      limits: config.wsLimits,
      // Connection caps and rates count the same client as the HTTP budgets (TRUST_PROXY, IPv6 by /64).
      clientIpOf: (req) => clientIp(req, trustProxy),
      // An ended session's access tokens stay refused for as long as they could be valid.
      endedSessionTtlMs: config.accessTokenTtlSec * 1000,
    });
    // A revoked session (logout, refresh-token reuse) loses its private subscriptions at once.
    const stopEndingSessions = auth.onRevoked(({ sessionId }) => void rt.endSession(sessionId));
    publish = (ch, data) => rt.publish(ch, data);
    rtStats = rt.stats;
    onlineConnections = () => rt.stats.connections;
    hasSubscribers = (ch) => rt.hasSubscribers(ch);
    bus.subscribe('realtime', channels.onBatch);
    channels.start();

    // ---- demo seed ----
    if (config.seedDemo && engine.instrumentConfigs().length === 0) {
      for (const inst of DEMO_INSTRUMENTS) {
        const r = await submit({ kind: 'instrument.upsert', config: inst });
        if (!r.reply.ok) log.warn({ instrument: inst.id, error: r.reply.error }, 'demo instrument refused');
      }
      for (const inst of DEMO_INSTRUMENTS) {
        const price = DEMO_START_PRICES[inst.id];
        if (!price) continue;
        const r = await submit({ kind: 'price.tick', instrument: inst.id, indexPrice: parseUnits(price) });
        if (!r.reply.ok) log.warn({ instrument: inst.id, error: r.reply.error }, 'demo start price refused');
      }
      log.info({ instruments: DEMO_INSTRUMENTS.map((i) => i.id) }, 'seeded demo instruments');
    }

    // ---- demo accounts: market makers and the demo wallet (same command path as users) ----
    const mm = config.marketMakers;
    if (mm.count > 0) {
      const userIds = await setUpMarketMakers(auth, engine, submit, mm.count, mm.funds);
      fleet = new MarketMakerFleet({ engine, submit, clock: Date.now, logger: log.child({ module: 'market-makers' }) }, mm, userIds);
    }
    const demoWallet = config.demoWallet ? await setUpDemoWallet(dataDir, auth, engine, submit, config.faucetAmount === '0' ? '10000' : config.faucetAmount) : undefined;
    // ---- index feed ----
    const indexFeed = createFeed(config, engine, priceSink, log.child({ module: 'index-feed' }));
    indexFeed?.start();
    cleanups.push(() => indexFeed?.stop());
    const fundingClock = new FundingClock({
      intervalMs: config.fundingIntervalMs, ratePeriodMs: config.fundingRatePeriodMs, submit, log: log.child({ module: 'funding' }),
      instruments: () => engine.instrumentConfigs().map((c) => c.id),
      lastSettledAt: (id) => engine.instrumentState(id)?.fundingRateAt ?? null,
    });
    fundingClock.start();
    cleanups.push(() => fundingClock.stop());
    if (indexFeed) log.info({ feed: indexFeed.name }, 'index feed started');

    bridge.start();
    await app.listen({ port: config.port, host: config.host });
    if (fleet) {
      fleet.start(mm.intervalMs);
      log.info({ bots: fleet.userIds, intervalMs: mm.intervalMs }, 'market makers started');
    }
    if (authApp) await authApp.listen({ port: config.authPort ?? 0, host: config.host });
    const url = urlOf(app, config.host);
    const tListening = performance.now();
    const startupReport: StartupStatus = {
      totalMs: Math.round(tListening - tStart),
      ...recovery,
      readModel,
      listenMs: Math.round(tListening - tWiring),
    };
    startup = startupReport;
    log.info({ startup: startupReport }, 'started');
    const authUrl = authApp ? urlOf(authApp, config.host) : url;

    let closing: Promise<void> | undefined;
    const close = (): Promise<void> => {
      closing ??= (async () => {
        log.info('shutting down');
        // 0. Bots finish their round (their commands are ordinary commands and must not race the stop).
        await fleet?.stop();
        // 1. No new connections; responses from now on carry `Connection: close`, so keep-alive sockets end
        //    after their current request. Websockets stay until step 4.
        const httpClosed = Promise.all([app.close(), authApp?.close()]);
        // 2. Requests already in flight finish with the sequencer still running: each gets its real answer.
        const drained = await Promise.all(drains.map((d) => d.drain(config.shutdownGraceMs)));
        if (drained.includes(false)) {
          log.warn({ inFlight: drains.reduce((n, d) => n + d.pending, 0) }, 'requests still in flight after the grace period; they will be refused');
        }
        // 3. No more commands from timers or the chain; final flush + snapshot; every accepted command
        //    becomes durable and is published.
        await indexFeed?.stop();
        await fundingClock.stop();
        await bridge.stop();
        await sequencer.stop();
        await bus.drain();
        await feed.drain();
        // 4. Real-time: last order books out, then disconnect clients with a reconnect code.
        channels.stop();
        stopEndingSessions();
        await rt.close(`shutdown (${DisconnectCode.shutdown})`);
        // Whatever outlived the grace period has had its refusal by now.
        app.server.closeAllConnections();
        authApp?.server.closeAllConnections();
        await httpClosed;
        // 5. Storage.
        cleanups.length = 0;
        await verifier.close();
        await replica?.close();
        await snapshots.close();
        await journal.close();
        await threadedProjector?.close();
        await store.close();
        authDb.close();
        log.info('stopped');
      })();
      return closing;
    };
    cleanups.length = 0;

    const wsBase = url.replace(/^http/, 'ws');
    return {
      url,
      authUrl,
      wsUrl: `${wsBase}${WS_PATH}`,
      channelPrefix: `${config.channelEnv}:`,
      docsUrl: `${url}/docs`,
      dataDir,
      chainId: config.chainId,
      engine,
      sequencer,
      operatorToken,
      demoWallet,
      marketMakers: fleet,
      indexPush,
      endRealtimeSession: (sessionId) => rt.endSession(sessionId),
      auth,
      chain: { bridge, simulated },
      startup: startupReport,
      routes: [...app.registeredRoutes, ...(authApp?.registeredRoutes ?? [])],
      close,
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
