/**
 * SNAPSHOT_WRITER=standby on the leader: when a snapshot is due, it is left to the standbys
 * (src/cluster/standby-snapshots.ts) as long as the store holds a fresh one written by a standby (listed with a
 * `writer`; the leader's own are not labelled, and a standby may write the very same seq): within
 * 2× the interval of the due seq by count and of now by time (a standby applies committed entries a little
 * after the leader, so its snapshot of this round may not be there yet; 2× allows for that). Otherwise (a
 * one-engine cluster, standbys down or lagging) the leader's own replica thread writes it, as with
 * SNAPSHOT_WRITER=replica; its thread starts only then.
 */
import type { SnapshotStore } from '../journal/ports.js';
import type { SnapshotReplica } from './ports.js';
import type { ReplicaSnapshotResult } from './snapshot-replica-protocol.js';

export interface StandbyFirstOptions {
  store: Pick<SnapshotStore, 'list'>;
  /** The leader's own writer, for when no standby snapshot is fresh. */
  fallback: SnapshotReplica;
  everyCommands: number;
  everyMs: number;
  clock?: () => number;
}

export class StandbyFirstReplica implements SnapshotReplica {
  private readonly clock: () => number;

  constructor(private readonly options: StandbyFirstOptions) {
    this.clock = options.clock ?? Date.now;
  }

  async snapshotAt(seq: number, ts: number): Promise<ReplicaSnapshotResult> {
    const fresh = await this.freshStandbySnapshot(seq).catch(() => undefined);
    if (fresh !== undefined) return { seq: fresh, bytes: 0, replayed: 0, ms: 0, leftTo: 'standby' };
    return this.options.fallback.snapshotAt(seq, ts);
  }

  close(): Promise<void> {
    return this.options.fallback.close();
  }

  /** The seq of a fresh snapshot written by a standby, if the store has one. */
  private async freshStandbySnapshot(seq: number): Promise<number | undefined> {
    const { everyCommands, everyMs } = this.options;
    const theirs = (await this.options.store.list()).filter((s) => s.writer !== undefined).at(-1);
    if (!theirs) return undefined;
    const byCount = everyCommands <= 0 || seq - theirs.seq <= 2 * everyCommands;
    const byTime = everyMs <= 0 || this.clock() - theirs.savedAt <= 2 * everyMs;
    return byCount && byTime ? theirs.seq : undefined;
  }
}
