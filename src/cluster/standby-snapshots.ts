/**
 * Snapshots written by a hot standby (issue 30), so the leader never spends a thread or a pause on them. A
 * standby's follower applies only committed log entries, so its engine is never ahead of the log; after each
 * applied command it counts, like the sequencer (SNAPSHOT_EVERY_COMMANDS / SNAPSHOT_EVERY_MS, command time),
 * and when one is due it serializes the engine between two commands (a consistent state) and stores it in the
 * cluster's snapshot bucket with the encoding and checksum the leader uses, so `restoreNewestVerified` reads it.
 *
 * Several standbys: before writing, each looks at the bucket; if it holds one newer than this standby's previous
 * snapshot written by another standby, this round is covered and it does not write, so one standby
 * ends up writing and the others take over only if it stops.
 */
import type pino from 'pino';
import type { ExchangeEngine } from '../engine/api.js';
import { serializeSnapshot, type JournalEntry, type SerializedSnapshot, type SnapshotStore } from '../journal/ports.js';

export interface StandbySnapshotOptions {
  store: SnapshotStore;
  everyCommands: number;
  everyMs: number;
  /** Longest random wait before looking at the bucket (default 200 ms), see below. */
  jitterMs?: number;
  logger: pino.Logger;
}

export interface StandbySnapshotStats {
  saved: number;
  /** Captured, not written: the bucket already held one newer than this standby's previous. */
  skipped: number;
  failures: number;
  lastSeq: number;
  /** Event-loop time of the newest capture (engine.snapshot + JSON), ms. */
  lastCaptureMs: number;
}

export class StandbySnapshotWriter {
  readonly stats: StandbySnapshotStats = { saved: 0, skipped: 0, failures: 0, lastSeq: 0, lastCaptureMs: 0 };
  private lastSeq = -1;
  private lastTs = 0;
  /** One write at a time (check of the bucket, then the write); ends with the newest captured meanwhile. */
  private busy: Promise<void> | undefined;
  /** Captured while a write was in flight: written next, unless a newer capture replaces it first. */
  private waiting: { snapshot: SerializedSnapshot; previous: number } | undefined;
  private closed = false;

  constructor(private readonly options: StandbySnapshotOptions) {}

  /** Called by the follower after it applied `entry` to `engine` (src/cluster/follower.ts `onApplied`). */
  onApplied(engine: ExchangeEngine, entry: JournalEntry): void {
    const ts = entry.command.ts;
    if (this.lastSeq < 0) {
      // Counting starts where the follower started (its restored snapshot), not at zero.
      this.lastSeq = entry.seq - 1;
      this.lastTs = ts;
    }
    if (this.closed) return;
    const { everyCommands, everyMs } = this.options;
    const byCount = everyCommands > 0 && entry.seq - this.lastSeq >= everyCommands;
    const byTime = everyMs > 0 && ts - this.lastTs >= everyMs;
    if (!byCount && !byTime) return;
    // Captured now, synchronously between two commands (the state of exactly this seq): waiting for the bucket
    // first would let the follower run on, far past the due seq when it is catching up.
    const previous = this.lastSeq;
    const t0 = performance.now();
    let snapshot: SerializedSnapshot;
    try {
      snapshot = serializeSnapshot(engine, ts);
    } catch (err) {
      this.stats.failures++;
      this.options.logger.warn({ err }, 'standby snapshot capture failed');
      return;
    }
    this.stats.lastCaptureMs = performance.now() - t0;
    this.lastSeq = snapshot.seq;
    this.lastTs = ts;
    this.waiting = { snapshot, previous: this.waiting?.previous ?? previous };
    this.busy ??= this.drain().finally(() => {
      this.busy = undefined;
    });
  }

  private async drain(): Promise<void> {
    for (let next = this.waiting; next && !this.closed; next = this.waiting) {
      this.waiting = undefined;
      await this.store(next.snapshot, next.previous);
    }
  }

  private async store(snapshot: SerializedSnapshot, previous: number): Promise<void> {
    const { store, logger } = this.options;
    try {
      // Standbys restored from the same snapshot count in step and are due at the same seq: a random wait
      // lets one see the other's write and skip instead of both writing it (harmless, but twice the work).
      const jitter = Math.random() * (this.options.jitterMs ?? 200);
      if (jitter >= 1) await new Promise((r) => setTimeout(r, jitter));
      // Only standbys label theirs: the leader's fallback ones must not silence the standbys, or it would keep writing.
      const newest = (await store.list()).filter((s) => s.writer !== undefined).at(-1);
      if (newest && newest.seq > previous) {
        // Another standby wrote one since our last: this round is covered, ours is not needed.
        this.stats.skipped++;
        return;
      }
      await store.save(snapshot);
      this.stats.saved++;
      this.stats.lastSeq = snapshot.seq;
      logger.info({ seq: snapshot.seq, bytes: snapshot.json.length, captureMs: Math.round(this.stats.lastCaptureMs) }, 'standby snapshot saved');
    } catch (err) {
      // Not fatal: the leader falls back to its own snapshots when the bucket gets no fresh ones.
      this.stats.failures++;
      logger.warn({ err, seq: snapshot.seq }, 'standby snapshot failed');
    }
  }

  /** Stops taking new ones and waits for the one being written (a promoted standby then leads). */
  async close(): Promise<void> {
    this.closed = true;
    this.waiting = undefined;
    await this.busy;
  }
}
