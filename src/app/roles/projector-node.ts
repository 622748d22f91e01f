/**
 * `perpx projector`: keeps the cluster's history read model in PostgreSQL. It follows the committed command
 * log with an engine follower (the deterministic engine re-derives each command's events, so the log is the
 * only stream to keep) and projects every batch after the read model's `last_seq`, which moves in the same
 * transaction as the rows. It starts from a snapshot no newer than that seq, and holds the follower back while
 * PostgreSQL is behind, so a rebuild of a long log stays within memory.
 */
import { resolve } from 'node:path';
import pino from 'pino';
import type { JetStreamEngineFollower } from '../../cluster/follower.js';
import { buildFollower } from '../builders/follower.js';
import { buildReadModel } from '../builders/read-model.js';
import type { ExchangeConfig } from '../config.js';
import { prepareDataDir, type StartOptions } from '../exchange.js';
import { ProjectorFeed } from '../projector-feed.js';
import { ShutdownRegistry } from '../shutdown-registry.js';
import { clusterConfig } from './cluster-config.js';

export interface RunningProjector {
  follower: JetStreamEngineFollower;
  /** Last seq committed to the read model. */
  projectedSeq(): number;
  /** Resolves once every command up to `seq` is in the read model. */
  whenCaughtUp(seq: number): Promise<void>;
  close(): Promise<void>;
}

/** Batches the follower may run ahead of PostgreSQL before it waits. */
const MAX_AHEAD = 20_000;

export async function startProjectorNode(base: ExchangeConfig, options: StartOptions = {}): Promise<RunningProjector> {
  const config = clusterConfig(base, 'projector');
  const log = (options.logger ?? pino({ name: 'perpx', level: config.logLevel })).child({ role: 'projector' });
  const dataDir = resolve(config.dataDir);
  prepareDataDir(dataDir, log);
  const shutdown = new ShutdownRegistry(log);
  try {
    const readModel = shutdown.add('read model', await buildReadModel(config, dataDir, options.readModelFaults));
    const fromSeq = readModel.projectedSeq;
    // Never gives up on a long outage: the follower waits instead of queueing without bound.
    const feed = new ProjectorFeed(readModel.store.projector, log.child({ module: 'projector' }), fromSeq, {
      lingerMs: config.readModelLingerMs, maxBuffered: Number.MAX_SAFE_INTEGER, catchUpTimeoutMs: 30_000,
    });
    shutdown.add('projection', { service: feed, stop: () => feed.drain() });
    const { follower } = shutdown.add('follower', await buildFollower(config, 'perpx projector', {
      log,
      onFailed: options.onFatal,
      snapshotAtOrBefore: fromSeq,
      bus: { publish: (batch) => { if (batch.seq > fromSeq) feed.push(batch); } },
      pace: () => (feed.buffered > MAX_AHEAD ? waitUntilBelow(feed, MAX_AHEAD / 2) : undefined),
    }));
    log.info({ fromSeq, followerSeq: follower.seq }, 'projector started');
    return {
      follower,
      projectedSeq: () => feed.status().projectedSeq,
      whenCaughtUp: (seq) => feed.whenCaughtUp(seq),
      close: () => shutdown.stopAll(),
    };
  } catch (err) {
    await shutdown.stopAll().catch(() => undefined);
    throw err;
  }
}

async function waitUntilBelow(feed: ProjectorFeed, limit: number): Promise<void> {
  while (feed.buffered > limit) await new Promise((r) => setTimeout(r, 5));
}
