/**
 * Snapshots as files: `snapshot-<seq, 16 digits>.json`, written atomically (temp file + fsync + rename +
 * fsync of the directory), keeping the newest N.
 *
 * Why files rather than rows next to the journal: a snapshot is one large blob (tens of MB for a busy
 * exchange). Through fs.promises the write and fsync run on libuv's thread pool, so the sequencer thread
 * keeps matching while it is written; a SQLite row would be written on the sequencer thread, twice (WAL,
 * then checkpoint), and would bloat the journal's WAL. Files are also easy for an operator to copy, ship
 * to a standby or inspect with `jq` (two JSON values: `jq -s '.[0]'` is the header, `.[1]` the snapshot).
 *
 * Every byte is verifiable: the first line is a header `{"perpxSnapshot":2,"seq","ts","bytes","sha256",
 * "stateHash"}`, the rest the EngineSnapshot JSON, whose length and SHA-256 the header gives. `load` refuses
 * a file whose body does not match (torn write, bit rot, an edit); the recorded state hash lets recovery
 * check the restored state too. Files without the header (written before checksums) are refused as
 * unverifiable: recovery then uses an older snapshot or replays the journal.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { isReadableSnapshotVersion, type EngineSnapshot } from '../engine/api.js';
import { SnapshotIntegrityError, type SerializedSnapshot, type SnapshotInfo, type SnapshotStore, type StoredSnapshot } from './ports.js';

export interface FileSnapshotStoreOptions {
  dir: string;
  /** Snapshots to keep (≥ 1; default 3): more than one so a damaged newest file has a fallback. */
  keep?: number;
}

const NAME_RE = /^snapshot-(\d{16})\.json$/;
/** Header format marker; bump it if the header's meaning changes. */
const FORMAT = 2;

interface SnapshotHeader {
  perpxSnapshot: number;
  seq: number;
  ts: number;
  /** Length of the body (the bytes after the header line). */
  bytes: number;
  /** SHA-256 (hex) of the body. */
  sha256: string;
  stateHash: string;
}

export function snapshotFileName(seq: number): string {
  return `snapshot-${String(seq).padStart(16, '0')}.json`;
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** The file's bytes: header line, then the snapshot JSON. */
export function encodeSnapshotFile(snapshot: SerializedSnapshot): Buffer[] {
  const body = Buffer.from(snapshot.json, 'utf8');
  const header: SnapshotHeader = {
    perpxSnapshot: FORMAT, seq: snapshot.seq, ts: snapshot.ts, bytes: body.length, sha256: sha256(body), stateHash: snapshot.stateHash,
  };
  return [Buffer.from(`${JSON.stringify(header)}\n`, 'utf8'), body];
}

/** Parses and verifies a snapshot file's bytes; throws SnapshotIntegrityError naming what is wrong. */
export function decodeSnapshotFile(file: Buffer, seq: number): StoredSnapshot {
  const nl = file.indexOf(0x0a);
  let header: Partial<SnapshotHeader> | undefined;
  try {
    if (nl >= 0) header = JSON.parse(file.subarray(0, nl).toString('utf8')) as Partial<SnapshotHeader>;
  } catch {
    header = undefined;
  }
  if (header?.perpxSnapshot !== FORMAT) {
    throw new SnapshotIntegrityError('no checksum header (torn, written before snapshot checksums, or not a snapshot): unverifiable');
  }
  if (header.seq !== seq) throw new SnapshotIntegrityError(`header says seq ${header.seq}, file name ${seq}`);
  if (typeof header.stateHash !== 'string' || typeof header.sha256 !== 'string') throw new SnapshotIntegrityError('header lacks sha256 or stateHash');
  const body = file.subarray(nl + 1);
  if (body.length !== header.bytes) throw new SnapshotIntegrityError(`body is ${body.length} bytes, header says ${header.bytes} (torn write?)`);
  const actual = sha256(body);
  if (actual !== header.sha256) throw new SnapshotIntegrityError(`checksum mismatch: body sha256 ${actual}, header ${header.sha256}`);
  let snapshot: EngineSnapshot;
  try {
    snapshot = JSON.parse(body.toString('utf8')) as EngineSnapshot;
  } catch (err) {
    throw new SnapshotIntegrityError(`body is not JSON: ${String(err)}`);
  }
  if (!isReadableSnapshotVersion(snapshot?.version) || snapshot.seq !== seq) throw new SnapshotIntegrityError('snapshot version or seq mismatch');
  return { snapshot, stateHash: header.stateHash };
}

export class FileSnapshotStore implements SnapshotStore {
  private readonly dir: string;
  private readonly keep: number;
  /** Saves are chained so two never interleave their rename/prune steps. */
  private queue: Promise<void> = Promise.resolve();

  constructor(options: FileSnapshotStoreOptions) {
    this.dir = options.dir;
    this.keep = Math.max(1, options.keep ?? 3);
  }

  save(snapshot: SerializedSnapshot): Promise<void> {
    const run = this.queue.then(() => this.write(snapshot));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async write(snapshot: SerializedSnapshot): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const final = join(this.dir, snapshotFileName(snapshot.seq));
    const temp = `${final}.tmp`;
    try {
      const handle = await open(temp, 'w');
      try {
        for (const part of encodeSnapshotFile(snapshot)) await handle.writeFile(part);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, final);
    } catch (err) {
      // E.g. the disk is full: a half-written temp file must not keep holding the space.
      await unlink(temp).catch(() => undefined);
      throw err;
    }
    await this.syncDir();
    await this.prune();
  }

  /** The rename is only durable once the directory entry is; without this a crash may forget the file. */
  private async syncDir(): Promise<void> {
    const dirHandle = await open(this.dir, 'r');
    try {
      await dirHandle.sync();
    } finally {
      await dirHandle.close();
    }
  }

  private async prune(): Promise<void> {
    const seqs = await this.seqs();
    for (const seq of seqs.slice(0, Math.max(0, seqs.length - this.keep))) {
      await unlink(join(this.dir, snapshotFileName(seq)));
    }
  }

  /** Seqs of stored snapshots, ascending. Leftover `.tmp` files (crash mid-write) are ignored. */
  private async seqs(): Promise<number[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const seqs: number[] = [];
    for (const name of names) {
      const m = NAME_RE.exec(name);
      if (m) seqs.push(Number(m[1]));
    }
    return seqs.sort((a, b) => a - b);
  }

  async load(seq: number): Promise<StoredSnapshot> {
    let bytes: Buffer;
    try {
      bytes = await readFile(join(this.dir, snapshotFileName(seq)));
    } catch (err) {
      throw new SnapshotIntegrityError(`unreadable: ${(err as Error).message}`, { cause: err });
    }
    return decodeSnapshotFile(bytes, seq);
  }

  async list(): Promise<SnapshotInfo[]> {
    const out: SnapshotInfo[] = [];
    for (const seq of await this.seqs()) {
      const s = await stat(join(this.dir, snapshotFileName(seq)));
      out.push({ seq, savedAt: Math.floor(s.mtimeMs), bytes: s.size });
    }
    return out;
  }

  async close(): Promise<void> {
    await this.queue;
  }
}
