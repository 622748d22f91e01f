/**
 * Snapshots in a JetStream object store bucket (`perpx-<cluster>-snapshots`), so every engine of the cluster
 * (a restarted leader, a standby on another machine) finds them, replicated like the command stream.
 *
 * Each object holds exactly the bytes of a snapshot file (file-snapshots.ts: checksum header line, then the
 * EngineSnapshot JSON) under the name `snapshot-<seq, 16 digits>`, so `load` verifies it the same way, on
 * top of the object store's own SHA-256 digest. An object becomes visible only when its metadata message is
 * written after all its chunks, so a crash mid-save leaves the previous set. Pruned to the newest N.
 */
import { Objm, StorageType, type ObjectStore } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import { decodeSnapshotFile, encodeSnapshotFile } from './file-snapshots.js';
import { clusterNames } from './jetstream-names.js';
import { SnapshotIntegrityError, type SerializedSnapshot, type SnapshotInfo, type SnapshotStore, type StoredSnapshot } from './ports.js';

export interface ObjectStoreSnapshotOptions {
  /** Open connection; the caller closes it after the store. */
  nc: NatsConnection;
  cluster: string;
  /** Bucket replicas when it is created (default 1; 3 in production). */
  replicas?: number;
  /** Snapshots to keep (≥ 1; default 3). */
  keep?: number;
  /** Stored as each object's description and listed as `writer` (who wrote a snapshot: e.g. a standby's id). */
  writer?: string;
}

const NAME_RE = /^snapshot-(\d{16})$/;

export function snapshotObjectName(seq: number): string {
  return `snapshot-${String(seq).padStart(16, '0')}`;
}

export class ObjectStoreSnapshotStore implements SnapshotStore {
  private readonly keep: number;
  /** Saves are chained so two never interleave their put/prune steps. */
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly bucket: ObjectStore, keep = 3, private readonly writer?: string) {
    this.keep = Math.max(1, keep);
  }

  save(snapshot: SerializedSnapshot): Promise<void> {
    const run = this.queue.then(() => this.write(snapshot));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async write(snapshot: SerializedSnapshot): Promise<void> {
    const bytes = Buffer.concat(encodeSnapshotFile(snapshot));
    await this.bucket.putBlob({ name: snapshotObjectName(snapshot.seq), description: this.writer }, bytes);
    const seqs = (await this.list()).map((s) => s.seq);
    for (const seq of seqs.slice(0, Math.max(0, seqs.length - this.keep))) await this.bucket.delete(snapshotObjectName(seq));
  }

  async load(seq: number): Promise<StoredSnapshot> {
    let bytes: Uint8Array | null;
    try {
      bytes = await this.bucket.getBlob(snapshotObjectName(seq));
    } catch (err) {
      // The object store's own digest check fails here for chunks damaged in storage.
      throw new SnapshotIntegrityError(`unreadable: ${(err as Error).message}`, { cause: err });
    }
    if (bytes === null) throw new SnapshotIntegrityError(`no snapshot object ${snapshotObjectName(seq)}`);
    return decodeSnapshotFile(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length), seq);
  }

  async list(): Promise<SnapshotInfo[]> {
    const out: SnapshotInfo[] = [];
    for (const info of await this.bucket.list()) {
      const m = NAME_RE.exec(info.name);
      if (m && !info.deleted) out.push({ seq: Number(m[1]), savedAt: Date.parse(info.mtime), bytes: info.size, writer: info.description || undefined });
    }
    return out.sort((a, b) => a.seq - b.seq);
  }

  async close(): Promise<void> {
    await this.queue;
  }
}

/** Opens (creating if missing) the cluster's snapshot bucket. */
export async function openObjectStoreSnapshots(options: ObjectStoreSnapshotOptions): Promise<ObjectStoreSnapshotStore> {
  const bucket = await new Objm(options.nc).create(clusterNames(options.cluster).snapshotBucket, {
    storage: StorageType.File,
    replicas: options.replicas ?? 1,
  });
  return new ObjectStoreSnapshotStore(bucket, options.keep, options.writer);
}
