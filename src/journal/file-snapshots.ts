/**
 * Snapshots as files: `snapshot-<seq, 16 digits>.json`, written atomically (temp file + fsync + rename +
 * fsync of the directory), keeping the newest N.
 *
 * Why files rather than rows next to the journal: a snapshot is one large blob (tens of MB for a busy
 * exchange). Through fs.promises the write and fsync run on libuv's thread pool, so the sequencer thread
 * keeps matching while it is written; a SQLite row would be written on the sequencer thread, twice (WAL,
 * then checkpoint), and would bloat the journal's WAL. Files are also easy for an operator to copy, ship
 * to a standby or inspect with `jq`.
 */
import { mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import pino from 'pino';
import { isReadableSnapshotVersion, type EngineSnapshot } from '../engine/api.js';
import type { SerializedSnapshot, SnapshotInfo, SnapshotStore } from './ports.js';

export interface FileSnapshotStoreOptions {
  dir: string;
  /** Snapshots to keep (≥ 1; default 3): more than one so a damaged newest file has a fallback. */
  keep?: number;
  logger?: pino.Logger;
}

const NAME_RE = /^snapshot-(\d{16})\.json$/;

function fileName(seq: number): string {
  return `snapshot-${String(seq).padStart(16, '0')}.json`;
}

export class FileSnapshotStore implements SnapshotStore {
  private readonly dir: string;
  private readonly keep: number;
  private readonly log: pino.Logger;
  /** Saves are chained so two never interleave their rename/prune steps. */
  private queue: Promise<void> = Promise.resolve();

  constructor(options: FileSnapshotStoreOptions) {
    this.dir = options.dir;
    this.keep = Math.max(1, options.keep ?? 3);
    this.log = options.logger ?? pino({ name: 'snapshots', level: process.env.LOG_LEVEL ?? 'info' });
  }

  save(snapshot: SerializedSnapshot): Promise<void> {
    const run = this.queue.then(() => this.write(snapshot));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async write(snapshot: SerializedSnapshot): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const final = join(this.dir, fileName(snapshot.seq));
    const temp = `${final}.tmp`;
    const handle = await open(temp, 'w');
    try {
      await handle.writeFile(snapshot.json);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, final);
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
      await unlink(join(this.dir, fileName(seq)));
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

  async latest(atOrBefore = Number.MAX_SAFE_INTEGER): Promise<EngineSnapshot | undefined> {
    const seqs = (await this.seqs()).filter((seq) => seq <= atOrBefore);
    for (let i = seqs.length - 1; i >= 0; i--) {
      const file = join(this.dir, fileName(seqs[i]));
      try {
        const snapshot = JSON.parse(await readFile(file, 'utf8')) as EngineSnapshot;
        if (!isReadableSnapshotVersion(snapshot.version) || snapshot.seq !== seqs[i]) throw new Error('version or seq mismatch');
        return snapshot;
      } catch (err) {
        // Older snapshot + a longer journal replay gives the same state, just slower.
        this.log.warn({ file, err }, 'unreadable snapshot, falling back to an older one');
      }
    }
    return undefined;
  }

  async list(): Promise<SnapshotInfo[]> {
    const out: SnapshotInfo[] = [];
    for (const seq of await this.seqs()) {
      const s = await stat(join(this.dir, fileName(seq)));
      out.push({ seq, savedAt: Math.floor(s.mtimeMs), bytes: s.size });
    }
    return out;
  }

  async close(): Promise<void> {
    await this.queue;
  }
}
