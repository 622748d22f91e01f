/**
 * Sequencer statistics in a shape that maps straight onto Prometheus: counters, and histograms as
 * cumulative-free bucket counts + sum + count (prom-client's `Histogram` can be fed from the hooks, or a
 * collector can read `SequencerStats` on scrape). Kept free of prom-client so the sequencer has no
 * opinion about the metrics backend.
 */
import type { CommandKind } from '../engine/commands.js';

/** Bucket upper bounds in seconds, from 1 µs to 1 s: apply latency lives at the low end, fsync higher. */
export const LATENCY_BUCKETS_SECONDS = [
  0.000001, 0.0000025, 0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
  0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
] as const;

export class LatencyHistogram {
  /** counts[i] = observations ≤ bounds[i] and > bounds[i-1]; the last slot is +Inf. */
  readonly counts: number[];
  sum = 0;
  count = 0;
  max = 0;

  constructor(readonly bounds: readonly number[] = LATENCY_BUCKETS_SECONDS) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(seconds: number): void {
    let i = 0;
    while (i < this.bounds.length && seconds > this.bounds[i]) i++;
    this.counts[i]++;
    this.sum += seconds;
    this.count++;
    if (seconds > this.max) this.max = seconds;
  }

  /** Approximate quantile (upper bound of the bucket holding it), for logs and the CLI. */
  quantile(q: number): number {
    const target = q * this.count;
    let seen = 0;
    for (let i = 0; i < this.counts.length; i++) {
      seen += this.counts[i];
      if (seen >= target && seen > 0) return i < this.bounds.length ? this.bounds[i] : this.max;
    }
    return 0;
  }
}

export interface SequencerStats {
  /** Commands applied, by kind. */
  commandsByKind: Partial<Record<CommandKind, number>>;
  /** Of those, refused by the engine (reply.ok = false). */
  refusedByKind: Partial<Record<CommandKind, number>>;
  applyLatency: LatencyHistogram;
  /** Duration of each journal flush (one transaction + fsync). */
  flushLatency: LatencyHistogram;
  /** Commands per flush (group-commit size). */
  flushes: number;
  flushedCommands: number;
  /** Time from submit to acknowledgment (durable). */
  ackLatency: LatencyHistogram;
  snapshotsTaken: number;
  snapshotsSaved: number;
  /** Due, but not written: a standby had stored a fresh one (SNAPSHOT_WRITER=standby). */
  snapshotsLeftToStandby: number;
  snapshotFailures: number;
  /** Duration of engine.snapshot() + serialization, which blocks the sequencer. */
  snapshotCaptureLatency: LatencyHistogram;
  /** Snapshots taken by the replica thread: catch-up + serialization + write (the sequencer keeps running). */
  snapshotReplicaLatency: LatencyHistogram;
  lastSnapshotSeq: number;
}

export function newSequencerStats(): SequencerStats {
  return {
    commandsByKind: {},
    refusedByKind: {},
    applyLatency: new LatencyHistogram(),
    flushLatency: new LatencyHistogram(),
    flushes: 0,
    flushedCommands: 0,
    ackLatency: new LatencyHistogram(),
    snapshotsTaken: 0,
    snapshotsSaved: 0,
    snapshotsLeftToStandby: 0,
    snapshotFailures: 0,
    snapshotCaptureLatency: new LatencyHistogram(),
    snapshotReplicaLatency: new LatencyHistogram(),
    lastSnapshotSeq: 0,
  };
}
