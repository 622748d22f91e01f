/**
 * Snapshots written by a hot standby (issue 30), so the leader never spends a thread or a pause on them. A
 * standby's follower applies only committed log entries, so its engine is never ahead of the log; after each
 * applied command it counts, like the sequencer (SNAPSHOT_EVERY_COMMANDS / SNAPSHOT_EVERY_MS, command time),
 * and when one is due it serializes the engine between two commands (a consistent state) and stores it in the
 * cluster's snapshot bucket with the encoding and checksum the leader uses, so `restoreNewestVerified` reads it.
 *
 * Several standbys: before writing, each looks at the bucket; a snapshot newer than its own last one (another
 * standby's, or the leader's) restarts its count from there instead, so they take turns rather than write twice.
 */
import type pino from 'pino';
import type { ExchangeEngine } from '../engine/api.js';
import { serializeSnapshot, type JournalEntry, type SnapshotStore } from '../journal/ports.js';

export interface StandbySnapshotOptions {
  store: SnapshotStore;
  everyCommands: number;
  everyMs: number;
  logger: pino.Logger;
}

export interface StandbySnapshotStats {
  saved: number;
  /** Due, but the bucket already held a newer snapshot than this standby's last. */
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
  /** Command time of the newest applied entry: the `ts` of a snapshot captured now. */
  private appliedTs = 0;
  /** One due snapshot at a time: the check of the bucket, then the capture and the write. */
  private busy: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: StandbySnapshotOptions) {}

  /** Called by the follower after it applied `entry` to `engine` (src/cluster/follower.ts `onApplied`). */
  onApplied(engine: ExchangeEngine, entry: JournalEntry): void {
    const ts = entry.command.ts;
    this.appliedTs = ts;
    if (this.lastSeq < 0) {
      // Counting starts where the follower started (its restored snapshot), not at zero.
      this.lastSeq = entry.seq - 1;
      this.lastTs = ts;
    }
    if (this.busy || this.closed) return;
    const { everyCommands, everyMs } = this.options;
    const byCount = everyCommands > 0 && entry.seq - this.lastSeq >= everyCommands;
    const byTime = everyMs > 0 && ts - this.lastTs >= everyMs;
    if (!byCount && !byTime) return;
    this.busy = this.snapshot(engine).finally(() => {
      this.busy = undefined;
    });
  }

  private async snapshot(engine: ExchangeEngine): Promise<void> {
    const { store, logger } = this.options;
    try {
      const newest = (await store.list()).at(-1);
      if (this.closed) return;
      if (newest && newest.seq > this.lastSeq) {
        // Someone else wrote one since our last: count from theirs (its command time is not listed; ours is close).
        this.stats.skipped++;
        this.lastSeq = newest.seq;
        this.lastTs = this.appliedTs;
        return;
      }
      // Synchronous, between two commands of the follower (it resumes after): the state of exactly `seq`.
      const t0 = performance.now();
      const snapshot = serializeSnapshot(engine, this.appliedTs);
      this.stats.lastCaptureMs = performance.now() - t0;
      this.lastSeq = snapshot.seq;
      this.lastTs = snapshot.ts;
      await store.save(snapshot);
      this.stats.saved++;
      this.stats.lastSeq = snapshot.seq;
      logger.info({ seq: snapshot.seq, bytes: snapshot.json.length, captureMs: Math.round(this.stats.lastCaptureMs) }, 'standby snapshot saved');
    } catch (err) {
      // Not fatal: the leader falls back to its own snapshots when the bucket gets no fresh ones.
      this.stats.failures++;
      logger.warn({ err }, 'standby snapshot failed');
    }
  }

  /** Stops taking new ones and waits for the one being written (a promoted standby then leads). */
  async close(): Promise<void> {
    this.closed = true;
    await this.busy;
  }
}
