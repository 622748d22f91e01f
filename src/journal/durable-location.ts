/**
 * Where the journal and the snapshots live, as plain data (it crosses to worker threads): files in the data
 * directory, or a NATS JetStream cluster. Lets a second reader — the snapshot replica thread, a tool — open
 * the same storage on its own connection, whichever backend the writer uses.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { FileSnapshotStore } from './file-snapshots.js';
import { readCommandStream } from './jetstream-journal.js';
import { clusterNames } from './jetstream-names.js';
import { openObjectStoreSnapshots } from './object-store-snapshots.js';
import type { JournalReader, SnapshotStore } from './ports.js';
import { readJournalFile } from './sqlite-journal-reader.js';
import { connectNats, type NatsAuth } from './nats-connection.js';

export type DurableLocation =
  | { kind: 'files'; journalFile: string; snapshotDir: string }
  | { kind: 'jetstream'; natsUrl: string; cluster: string; replicas: number; auth: NatsAuth };

/** For log lines and error messages: which storage is meant. */
export function describeLocation(location: DurableLocation): string {
  return location.kind === 'files'
    ? location.journalFile
    : `stream ${clusterNames(location.cluster).commandStream} on ${location.natsUrl}`;
}

/** Read-only access to a location's journal plus its snapshot store (which the reader may also write). */
export interface DurableReader {
  read(fromSeqExclusive: number): JournalReader;
  snapshots: SnapshotStore;
  close(): Promise<void>;
}

export async function openDurableReader(location: DurableLocation, keep: number, name: string): Promise<DurableReader> {
  if (location.kind === 'files') {
    const snapshots = new FileSnapshotStore({ dir: location.snapshotDir, keep });
    return { read: (from) => readJournalFile(location.journalFile, from), snapshots, close: () => snapshots.close() };
  }
  const nc = await connectNats(location.natsUrl, name, location.auth);
  try {
    const jsm = await jetstreamManager(nc);
    const stream = clusterNames(location.cluster).commandStream;
    const snapshots = await openObjectStoreSnapshots({ nc, cluster: location.cluster, replicas: location.replicas, keep });
    return {
      read: (from) => readCommandStream(nc, jsm, stream, from),
      snapshots,
      close: async () => {
        await snapshots.close();
        await nc.close();
      },
    };
  } catch (err) {
    await nc.close();
    throw err;
  }
}
