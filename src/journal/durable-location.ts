/**
 * Where the journal and the snapshots live, as plain data (it crosses to worker threads): files in the data
 * directory, or a NATS JetStream cluster. Lets a second reader — the snapshot replica thread, a tool — open
 * the same storage on its own connection, whichever backend the writer uses.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { FileSnapshotStore } from './file-snapshots.js';
import { readCommandStream } from './jetstream-journal.js';
import { clusterNames } from './jetstream-names.js';
import { openObjectStoreSnapshots } from './object-store-snapshots.js';
import type { JournalReader, SnapshotStore } from './ports.js';
import { readJournalFile } from './sqlite-journal-reader.js';

export type DurableLocation =
  | { kind: 'files'; journalFile: string; snapshotDir: string }
  | { kind: 'jetstream'; natsUrl: string; cluster: string; replicas: number };

/** For log lines and error messages: which storage is meant. */
export function describeLocation(location: DurableLocation): string {
  return location.kind === 'files'
    ? location.journalFile
    : `stream ${clusterNames(location.cluster).commandStream} on ${location.natsUrl}`;
}

/**
 * Connects for one process role; reconnects for as long as it runs (appends in the meantime time out).
 * No async traces: with them every request and JetStream publish builds two Error objects up front for
 * their stack, ~67 µs of the engine leader's ~160 µs of main-thread CPU per order (docs/performance.md, "Cluster").
 */
export function connectNats(url: string, name: string): Promise<NatsConnection> {
  return connect({ servers: url, name, maxReconnectAttempts: -1, noAsyncTraces: true });
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
  const nc = await connectNats(location.natsUrl, name);
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
