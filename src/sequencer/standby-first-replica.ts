/**
 * SNAPSHOT_WRITER=standby on the leader: when a snapshot is due, it is left to the standbys
 * (src/cluster/standby-snapshots.ts) as long as the store holds a fresh one it did not write itself: within
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
  /** Seqs the fallback wrote: they do not count as a standby's. Bounded by how many the store keeps, roughly. */
  private readonly own: number[] = [];
  private readonly clock: () => number;

  constructor(private readonly options: StandbyFirstOptions) {
    this.clock = options.clock ?? Date.now;
  }

  async snapshotAt(seq: number, ts: number): Promise<ReplicaSnapshotResult> {
    const fresh = await this.freshStandbySnapshot(seq).catch(() => undefined);
    if (fresh !== undefined) return { seq: fresh, bytes: 0, replayed: 0, ms: 0, leftTo: 'standby' };
    const result = await this.options.fallback.snapshotAt(seq, ts);
    this.own.push(seq);
    if (this.own.length > 16) this.own.shift();
    return result;
  }

  close(): Promise<void> {
    return this.options.fallback.close();
  }

  /** The seq of a fresh snapshot written by someone else, if the store has one. */
  private async freshStandbySnapshot(seq: number): Promise<number | undefined> {
    const { everyCommands, everyMs } = this.options;
    const theirs = (await this.options.store.list()).filter((s) => !this.own.includes(s.seq)).at(-1);
    if (!theirs) return undefined;
    const byCount = everyCommands <= 0 || seq - theirs.seq <= 2 * everyCommands;
    const byTime = everyMs <= 0 || this.clock() - theirs.savedAt <= 2 * everyMs;
    return byCount && byTime ? theirs.seq : undefined;
  }
}
