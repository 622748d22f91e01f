/**
 * The single writer: the sequencer (apply, journal, acknowledge, publish) over the recovered engine, the event
 * bus its batches go out on, and the snapshot replica thread (SNAPSHOT_WRITER=replica).
 */
import type pino from 'pino';
import type { ExchangeEngine } from '../../engine/api.js';
import type { Submit } from '../../engine/commands.js';
import { JournalWriteError } from '../../journal/ports.js';
import { InProcessEventBroker } from '../../sequencer/event-bus.js';
import type { EventBroker, EventHandler } from '../../sequencer/ports.js';
import { Sequencer } from '../../sequencer/sequencer.js';
import { ThreadedSnapshotReplica } from '../../sequencer/snapshot-replica.js';
import { StandbyFirstReplica } from '../../sequencer/standby-first-replica.js';
import type { ExchangeConfig } from '../config.js';
import type { Built } from '../shutdown-registry.js';
import type { Durable } from './journal.js';

export interface CommandPath {
  sequencer: Sequencer;
  submit: Submit;
  /** Where later subscribers (the chain bridge) subscribe. */
  bus: Pick<EventBroker, 'subscribe'>;
}

export function buildSequencer(
  config: Pick<ExchangeConfig, 'snapshotWriter' | 'snapshotEveryCommands' | 'snapshotEveryMs'>,
  deps: {
    engine: ExchangeEngine;
    durable: Durable;
    /** Subscribed before the first command is applied, in this order. */
    subscribers: Array<[name: string, handler: EventHandler]>;
    /** Called when the sequencer halts (journal failure, engine fault). */
    onFatal?: (err: Error) => void;
    log: pino.Logger;
  },
): Built<CommandPath> {
  const { engine, durable, log } = deps;
  const bus = new InProcessEventBroker({ logger: log.child({ module: 'event-bus' }) });
  for (const [name, handler] of deps.subscribers) bus.subscribe(name, handler);
  // The replica reads the same journal and writes the same snapshot store (after its own recovery).
  const threaded = config.snapshotWriter === 'inline' ? undefined : new ThreadedSnapshotReplica({ location: durable.location, keep: 3 });
  // Standbys exist only in a cluster (snapshots in its object store); a single process writes its own.
  const replica = threaded && config.snapshotWriter === 'standby' && durable.location.kind === 'jetstream'
    ? new StandbyFirstReplica({ store: durable.snapshots, fallback: threaded, everyCommands: config.snapshotEveryCommands, everyMs: config.snapshotEveryMs })
    : threaded;
  const sequencer = new Sequencer({
    engine,
    journal: durable.journal,
    snapshots: durable.snapshots,
    replica,
    bus,
    snapshotEveryCommands: config.snapshotEveryCommands,
    snapshotEveryMs: config.snapshotEveryMs,
    logger: log.child({ module: 'sequencer' }),
    onFatal: (err) => {
      if (err instanceof JournalWriteError) {
        log.fatal({ err, code: err.code, journal: durable.describe },
          'journal write failed: no command is accepted or acknowledged any more; free space (or fix the disk, or NATS) where the journal lives, then restart: recovery replays the journal (code JETSTREAM_WRONG_LAST_SEQUENCE: another engine appended to the stream, this one must not restart as the writer)');
      } else {
        log.fatal({ err }, 'sequencer halted; the process must restart and recover from the journal');
      }
      deps.onFatal?.(err);
    },
  });
  return {
    service: { sequencer, submit: (cmd) => sequencer.submit(cmd), bus },
    stop: async () => {
      // Final flush and snapshot: every accepted command is durable and published, then the bus empties.
      await sequencer.stop();
      await bus.drain();
      await replica?.close();
    },
  };
}
