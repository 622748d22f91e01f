/**
 * The engine leader's services (issue 29/30), started on an engine that is already current: the JetStream
 * journal opened at the log's tail, the leader-epoch record appended (fencing: from here on a deposed leader's
 * append fails), then the sequencer and everything that submits or publishes. Its close is the leader's
 * graceful stop (final flush and snapshot).
 */
import type pino from 'pino';
import { serveAdmin } from '../../cluster/admin-transport.js';
import { NatsPayoutLedger } from '../../chain/nats-payout-ledger.js';
import { NatsSimulatedChain } from '../../chain/nats-simulated-chain.js';
import { serveCommands } from '../../cluster/command-transport.js';
import type { RequestLedger } from '../../cluster/request-ledger.js';
import type { Engine } from '../../engine/engine.js';
import { connectNats } from '../../journal/nats-connection.js';
import { JetStreamJournal } from '../../journal/jetstream-journal.js';
import { applyJournalEntry } from '../../sequencer/recovery.js';
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
import { ShutdownRegistry } from '../shutdown-registry.js';

export interface LeaderStack {
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

export interface LeaderStackOptions {
  dataDir: string;
  /** The lease epoch this leader holds and its name: written in the leader-epoch record. */
  epoch: number;
  leader: string;
  /** The engine process's request outcomes (filled while it followed): resent commands are answered from it. */
  requests: RequestLedger;
  onFatal: (err: Error) => void;
  log: pino.Logger;
  /** Whether this process still holds the lease: asked right before a withdrawal is sent to the chain. */
  stillLeading: () => Promise<boolean>;
}

export async function startLeaderStack(config: ExchangeConfig, engine: Engine, o: LeaderStackOptions): Promise<LeaderStack> {
  const { dataDir, log } = o;
  const shutdown = new ShutdownRegistry(log);
  try {
    const durable = shutdown.add('journal', await buildJournal(config, dataDir));
    const journal = durable.journal;
    if (!(journal instanceof JetStreamJournal)) throw new Error('the cluster engine needs JOURNAL=jetstream');
    // Whatever the follower had not applied yet (the old leader's last appends), then the fencing record.
    for await (const entry of journal.read(engine.seq)) {
      const result = applyJournalEntry(engine, entry);
      o.requests.recordApplied(entry, result);
    }
    if (engine.seq !== journal.lastSeq()) throw new Error(`engine at seq ${engine.seq} but the log ends at ${journal.lastSeq()}`);
    await journal.appendLeaderEpoch(o.epoch, o.leader);
    log.info({ seq: engine.seq, epoch: o.epoch }, 'leader-epoch record appended: this engine leads');
    // The read model is the projector's; the leader reads its 24 h statistics for the instruments channel.
    const readModel = shutdown.add('read model', await buildReadModel(config, dataDir));
    shutdown.add('statistics', { service: undefined, stop: startStatisticsFold(readModel, log) });
    const auth = shutdown.add('auth', await buildAuth(config, dataDir, log));
    const realtime = shutdown.add('realtime', await buildRealtime(config, {
      engine, auth: auth.auth, checkConnectToken: (token) => auth.marketData.check(token),
      instrumentStats: (id) => readModel.statistics.instrumentStats(id), log,
    }));
    const { sequencer, submit, bus } = shutdown.add('sequencer', buildSequencer(config, {
      engine, durable, subscribers: [['realtime', realtime.onBatch]], onFatal: o.onFatal, log,
    }));
    const nc = await connectNats(config.nats.url, 'perpx engine commands', config.nats.auth);
    shutdown.add('nats', { service: nc, stop: () => nc.drain().catch(() => nc.close()) });
    // Each withdrawal is sent to the chain once across takeovers (issue 30): claimed in the shared payout ledger.
    const payouts = {
      ledger: await NatsPayoutLedger.open(nc, config.nats.cluster, { replicas: config.nats.streamReplicas }), epoch: o.epoch,
      stillLeading: o.stillLeading, claimTimeoutMs: 2 * config.nats.leaderLeaseTtlMs, pollMs: 200,
    };
    // The simulated network is shared by the engines, so a new leader sees what the old one broadcast.
    const simulated = await NatsSimulatedChain.open(nc, config.nats.cluster, {
      delayMs: config.chainDelayMs, failureRate: config.chainFailureRate, seed: config.chainSeed, replicas: config.nats.streamReplicas,
    });
    const chain = shutdown.add('chain', buildChain(config, { engine, submit, bus, log, payouts, simulated }));
    const demo = shutdown.add('demo', await buildDemo(config, { dataDir, engine, submit, users: auth.auth, log }));
    shutdown.add('feeds', buildFeeds(config, { engine, submit, log }));
    // Commands from the gateways: taken only once everything above runs; stopped first, before the sequencer.
    const responder = serveCommands({ nc, cluster: config.nats.cluster, epoch: o.epoch, sequencer, requests: o.requests, logger: log.child({ module: 'commands' }) });
    shutdown.add('command responder', { service: responder, stop: () => responder.close() });
    const admin = serveAdmin({
      nc, cluster: config.nats.cluster, epoch: o.epoch, admin: sequencer, stats: () => ({ seq: engine.seq, stats: sequencer.stats }), logger: log.child({ module: 'admin' }),
    });
    shutdown.add('admin responder', { service: admin, stop: () => admin.close() });
    shutdown.add('market makers', startMarketMakers(demo.marketMakers, config.marketMakers.intervalMs, log));
    return {
      engine, sequencer, demoWallet: demo.demoWallet, marketMakers: demo.marketMakers, chain, journal: durable.describe,
      close: () => shutdown.stopAll(),
    };
  } catch (err) {
    await shutdown.stopAll().catch(() => undefined);
    throw err;
  }
}
