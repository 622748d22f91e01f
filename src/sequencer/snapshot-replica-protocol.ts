/** Messages between ThreadedSnapshotReplica and its worker thread. */
import type { DurableLocation } from '../journal/durable-location.js';

export interface ReplicaInit {
  /** The journal and snapshots the worker opens on its own connection (read-only for the journal). */
  location: DurableLocation;
  /** Snapshots to keep (the store's `keep`). */
  keep: number;
}

export type ReplicaRequest = { kind: 'snapshot'; id: number; seq: number; ts: number } | { kind: 'close'; id: number };

export interface ReplicaSnapshotResult {
  seq: number;
  /** Size of the stored snapshot. */
  bytes: number;
  /** Journal commands the replica applied to get there. */
  replayed: number;
  /** Worker time: catch up + serialize + write. */
  ms: number;
  /** Not written: a fresh snapshot by a standby was already stored (SNAPSHOT_WRITER=standby). */
  leftTo?: 'standby';
}

export type ReplicaReply = ({ id: number; ok: true } & Partial<ReplicaSnapshotResult>) | { id: number; ok: false; message: string };
