/**
 * Durability: the command journal and the snapshots, either in the data directory (SQLite journal inline or
 * on its writer thread, snapshot files) or on NATS JetStream (JOURNAL=jetstream: command stream and object
 * store, on one connection this builder owns).
 */
import { join } from 'node:path';
import { describeLocation, type DurableLocation } from '../../journal/durable-location.js';
import { connectNats } from '../../journal/nats-connection.js';
import { FileSnapshotStore } from '../../journal/file-snapshots.js';
import { openJetStreamJournal } from '../../journal/jetstream-journal.js';
import { openObjectStoreSnapshots } from '../../journal/object-store-snapshots.js';
import type { CommandJournal, SnapshotStore } from '../../journal/ports.js';
import { openSqliteJournal } from '../../journal/sqlite-journal.js';
import { openThreadedSqliteJournal } from '../../journal/threaded-sqlite-journal.js';
import type { ExchangeConfig } from '../config.js';
import { closingOnFailure, type Built } from '../shutdown-registry.js';

export interface Durable {
  journal: CommandJournal;
  snapshots: SnapshotStore;
  /** Where both live: for messages, and for the snapshot replica's own connection to them. */
  location: DurableLocation;
  /** The location in words (journal file, or stream and server). */
  describe: string;
}

export async function buildJournal(config: Pick<ExchangeConfig, 'journalWriter' | 'journal' | 'nats'>, dataDir: string): Promise<Built<Durable>> {
  if (config.journal === 'jetstream') return buildJetStreamJournal(config.nats);
  const location: DurableLocation = { kind: 'files', journalFile: join(dataDir, 'journal.db'), snapshotDir: join(dataDir, 'snapshots') };
  const open = config.journalWriter === 'thread' ? openThreadedSqliteJournal : openSqliteJournal;
  const journal = await open({ file: location.journalFile });
  const snapshots = await closingOnFailure(journal, () => new FileSnapshotStore({ dir: location.snapshotDir }));
  return {
    service: { journal, snapshots, location, describe: describeLocation(location) },
    stop: async () => {
      await snapshots.close();
      await journal.close();
    },
  };
}

async function buildJetStreamJournal(nats: ExchangeConfig['nats']): Promise<Built<Durable>> {
  const location: DurableLocation = { kind: 'jetstream', natsUrl: nats.url, cluster: nats.cluster, replicas: nats.streamReplicas, auth: nats.auth };
  const nc = await connectNats(nats.url, 'perpx engine', nats.auth).catch((err: unknown) => {
    throw new Error(`JOURNAL=jetstream: NATS at ${nats.url} does not answer (${err instanceof Error ? err.message : String(err)})`, { cause: err });
  });
  const connection = { close: () => nc.close() };
  const journal = await closingOnFailure(connection, () => openJetStreamJournal({ nc, cluster: nats.cluster, replicas: nats.streamReplicas }));
  const snapshots = await closingOnFailure(connection, () => openObjectStoreSnapshots({ nc, cluster: nats.cluster, replicas: nats.streamReplicas }));
  return {
    service: { journal, snapshots, location, describe: describeLocation(location) },
    stop: async () => {
      try {
        await snapshots.close();
        await journal.close();
      } finally {
        await nc.close();
      }
    },
  };
}
