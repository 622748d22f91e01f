/**
 * Live read-model upkeep behind the sequencer: the projector feed (on the projection thread for a SQLite read
 * model; a PostgreSQL one is written inline, its I/O being async anyway) and the statistics fold.
 */
import type pino from 'pino';
import type { EventHandler } from '../../sequencer/ports.js';
import type { ProjectionFaults } from '../../store/projection-faults.js';
import { ThreadedSqliteProjector } from '../../store/threaded-projector.js';
import type { ExchangeConfig } from '../config.js';
import { ProjectorFeed, type ProjectorFeedStatus } from '../projector-feed.js';
import type { Built } from '../shutdown-registry.js';
import type { RecoveredEngine } from './engine.js';
import type { ReadModel } from './read-model.js';

export interface Projection {
  /** Event-bus subscriber. */
  onBatch: EventHandler;
  /** Resolves once every command up to `seq` is projected; rejects (ReadModelBehindError) when it cannot be. */
  whenCaughtUp(seq: number): Promise<void>;
  status(): ProjectorFeedStatus;
}

/** How often the rolling statistics are folded, whether or not anyone reads them. */
const STATISTICS_FOLD_MS = 1000;

/**
 * The instruments channel and `fields=metrics` read the rolling 24 h statistics folded so far (synchronously).
 * The fold catches up every second whether or not anyone reads, so the first publication after a quiet
 * stretch carries current figures (a fold triggered by the publication itself came one late: zeros).
 * Returns its stop.
 */
export function startStatisticsFold(readModel: Pick<ReadModel, 'statistics'>, log: pino.Logger): () => void {
  const fold = () => void readModel.statistics.refresh().catch((err: unknown) => log.warn({ err }, 'statistics fold failed'));
  fold();
  const foldTimer = setInterval(fold, STATISTICS_FOLD_MS);
  foldTimer.unref();
  return () => clearInterval(foldTimer);
}

export async function buildProjection(
  config: Pick<ExchangeConfig, 'readModelWriter' | 'readModelLingerMs'>,
  readModel: ReadModel,
  from: RecoveredEngine['projection'],
  log: pino.Logger,
  faults?: ProjectionFaults,
): Promise<Built<Projection>> {
  const file = readModel.sqliteFile;
  const threaded = config.readModelWriter === 'thread' && file !== undefined ? new ThreadedSqliteProjector({ file, faults: faults?.shared }) : undefined;
  if (threaded) {
    try {
      await threaded.whenReady();
    } catch (err) {
      await threaded.close();
      throw err;
    }
  }
  const feed = new ProjectorFeed(threaded ?? readModel.store.projector, log.child({ module: 'projector' }), from.projectedSeq, { lingerMs: config.readModelLingerMs });
  for (const batch of from.pending) feed.push(batch);

  const stopFold = startStatisticsFold(readModel, log);

  return {
    service: { onBatch: feed.push, whenCaughtUp: (seq) => feed.whenCaughtUp(seq), status: () => feed.status() },
    stop: async () => {
      stopFold();
      await feed.drain();
      await threaded?.close();
    },
  };
}
