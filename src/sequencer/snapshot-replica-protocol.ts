/** Messages between ThreadedSnapshotReplica and its worker thread. */
export interface ReplicaInit {
  /** The SQLite journal file; the worker reads committed commands through its own read-only connection. */
  journalFile: string;
  snapshotDir: string;
  /** Snapshot files to keep (FileSnapshotStore's `keep`). */
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
}

export type ReplicaReply = ({ id: number; ok: true } & Partial<ReplicaSnapshotResult>) | { id: number; ok: false; message: string };
