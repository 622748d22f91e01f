/**
 * `perpx engine`: the cluster's leader. The sequencer and the deterministic engine over the JetStream command
 * log (one message per group commit, expected-last-sequence on each), answering the gateways' command requests
 * once durable; everything that submits commands on its own (index feed, funding clock, chain bridge, demo seed,
 * market makers) runs here only. Public and private channel publications are made here, once, into the shared
 * NATS broker, so every gateway serves the same offsets and epochs. It serves no HTTP: gateways do.
 */
import { resolve } from 'node:path';
import pino from 'pino';
import { serveAdmin } from '../../cluster/admin-transport.js';
import { serveCommands } from '../../cluster/command-transport.js';
import { createEngine, restoreEngine, type Engine } from '../../engine/engine.js';
import { connectNats } from '../../journal/nats-connection.js';
import { recoverWithReport } from '../../sequencer/recovery.js';
import type { Sequencer } from '../../sequencer/sequencer.js';
import type { DemoWallet } from '../../simulation/system-accounts.js';
import type { MarketMakerFleet } from '../../simulation/market-maker.js';
import { buildAuth } from '../builders/auth.js';
import { buildChain, type Chain } from '../builders/chain.js';
import { buildFeeds } from '../builders/feeds.js';
import { buildJournal } from '../builders/journal.js';
import { startStatisticsFold } from '../builders/projection.js';
import { buildReadModel } from '../builders/read-model.js';
import { buildRealtime } from '../builders/realtime.js';
import { buildSequencer } from '../builders/sequencer.js';
import { buildDemo, startMarketMakers } from '../builders/simulation.js';
import type { ExchangeConfig } from '../config.js';
import { prepareDataDir, type StartOptions } from '../exchange.js';
import { ShutdownRegistry } from '../shutdown-registry.js';
import { clusterConfig } from './cluster-config.js';

export interface RunningEngineNode {
  engine: Engine;
  sequencer: Sequencer;
  demoWallet: DemoWallet | undefined;
  marketMakers: MarketMakerFleet | undefined;
  /** Chain adapter: operator hold/release and deposits; `simulated` is the stand-in network. */
  chain: Chain;
  /** Where the log is, in words. */
  journal: string;
  close(): Promise<void>;
}

export async function startEngineNode(base: ExchangeConfig, options: StartOptions = {}): Promise<RunningEngineNode> {
  const config = clusterConfig(base, 'engine');
  const log = (options.logger ?? pino({ name: 'perpx', level: config.logLevel })).child({ role: 'engine' });
  const dataDir = resolve(config.dataDir);
  prepareDataDir(dataDir, log);
  const shutdown = new ShutdownRegistry(log);
  try {
    const durable = shutdown.add('journal', await buildJournal(config, dataDir));
    const { engine, report } = await recoverWithReport({
      journal: durable.journal, snapshots: durable.snapshots, createEngine, restoreEngine, logger: log.child({ module: 'recovery' }),
    });
    log.info({ seq: engine.seq, ...report }, 'engine recovered');
    // The read model is the projector's; the leader reads its 24 h statistics for the instruments channel.
    const readModel = shutdown.add('read model', await buildReadModel(config, dataDir));
    shutdown.add('statistics', { service: undefined, stop: startStatisticsFold(readModel, log) });
    const auth = shutdown.add('auth', await buildAuth(config, dataDir, log));
    const realtime = shutdown.add('realtime', await buildRealtime(config, {
      engine, auth: auth.auth, checkConnectToken: (token) => auth.marketData.check(token),
      instrumentStats: (id) => readModel.statistics.instrumentStats(id), log,
    }));
    const { sequencer, submit, bus } = shutdown.add('sequencer', buildSequencer(config, {
      engine, durable, subscribers: [['realtime', realtime.onBatch]], onFatal: options.onFatal, log,
    }));
    const chain = shutdown.add('chain', buildChain(config, { engine, submit, bus, log }));
    const demo = shutdown.add('demo', await buildDemo(config, { dataDir, engine, submit, users: auth.auth, log }));
    shutdown.add('feeds', buildFeeds(config, { engine, submit, log }));
    // Commands from the gateways: taken only once everything above runs; stopped first, before the sequencer.
    const nc = await connectNats(config.nats.url, 'perpx engine commands', config.nats.auth);
    shutdown.add('nats', { service: nc, stop: () => nc.drain().catch(() => nc.close()) });
    const responder = serveCommands({ nc, cluster: config.nats.cluster, sequencer, logger: log.child({ module: 'commands' }) });
    shutdown.add('command responder', { service: responder, stop: () => responder.close() });
    const admin = serveAdmin({
      nc, cluster: config.nats.cluster, admin: sequencer, stats: () => ({ seq: engine.seq, stats: sequencer.stats }), logger: log.child({ module: 'admin' }),
    });
    shutdown.add('admin responder', { service: admin, stop: () => admin.close() });
    shutdown.add('market makers', startMarketMakers(demo.marketMakers, config.marketMakers.intervalMs, log));
    log.info({ seq: engine.seq, journal: durable.describe }, 'engine leader started');
    return {
      engine, sequencer, demoWallet: demo.demoWallet, marketMakers: demo.marketMakers, chain, journal: durable.describe,
      close: () => shutdown.stopAll(),
    };
  } catch (err) {
    await shutdown.stopAll().catch(() => undefined);
    throw err;
  }
}

