/**
 * The engine, recovered: the newest verified snapshot the read model is not behind, then the journal after it.
 * The same replay projects the events the read model lacks (none after a clean stop), so the read model is
 * caught up before anything new is applied; what it could not project yet is handed to the live projection.
 */
import { performance } from 'node:perf_hooks';
import type pino from 'pino';
import type { EventBatch } from '../../engine/commands.js';
import { createEngine, restoreEngine, type Engine } from '../../engine/engine.js';
import { recoverWithReport, type RecoveryReport } from '../../sequencer/recovery.js';
import type { StartupStatus } from '../../api/ports.js';
import { ProjectorFeed } from '../projector-feed.js';
import type { Built } from '../shutdown-registry.js';
import type { Durable } from './journal.js';
import type { ReadModel } from './read-model.js';

export interface RecoveredEngine {
  engine: Engine;
  recovery: RecoveryReport;
  /** The read model's catch-up during the replay (start-up report). */
  readModelCatchUp: StartupStatus['readModel'];
  /** Where live projection continues: the last seq projected and the batches not projected yet. */
  projection: { projectedSeq: number; pending: EventBatch[] };
}

export async function buildEngine(durable: Durable, readModel: ReadModel, log: pino.Logger): Promise<Built<RecoveredEngine>> {
  const fromSeq = readModel.projectedSeq;
  const recoveryFeed = new ProjectorFeed(readModel.store.projector, log.child({ module: 'projector' }), fromSeq);
  const caughtUp = { projected: 0 };
  try {
    const { engine, report } = await recoverWithReport({
      journal: durable.journal,
      snapshots: durable.snapshots,
      createEngine,
      restoreEngine,
      maxSnapshotSeq: fromSeq,
      logger: log.child({ module: 'recovery' }),
      onApplied: (entry, result) => {
        if (entry.seq <= fromSeq) return;
        recoveryFeed.push({ seq: entry.seq, ts: entry.command.ts, kind: entry.command.kind, events: result.events });
        caughtUp.projected++;
      },
      onProgress: (p) => {
        if (p.phase === 'replay') log.info({ seq: p.seq, target: p.targetSeq }, 'replaying journal');
      },
    });
    log.info({ seq: engine.seq, ...report }, 'engine recovered');
    const tCatchUp = performance.now();
    await recoveryFeed.drain();
    const readModelCatchUp = { fromSeq, projected: caughtUp.projected, catchUpMs: Math.round(performance.now() - tCatchUp) };
    if (caughtUp.projected > 0) log.info({ ...readModelCatchUp, seq: engine.seq }, 'read model caught up');
    // What the catch-up could not project (read model storage failing) continues in the live feed.
    const projection = recoveryFeed.handOver();
    return { service: { engine, recovery: report, readModelCatchUp, projection }, stop: () => undefined };
  } catch (err) {
    recoveryFeed.handOver();
    throw err;
  }
}
