/**
 * A clean replay of a cluster's command log (from seq 0, no snapshot) that a test moves forward one checkpoint
 * at a time: it holds still at the seq asked for, so its state can be compared with a leader's checkpoint
 * while the load goes on, and the next round applies only the log since (one replay for a whole run).
 */
import type { NatsConnection } from '@nats-io/transport-node';
import pino from 'pino';
import { openEngineFollower, type JetStreamEngineFollower } from '../../src/cluster/follower.js';
import type { ReadOnlyEngine } from '../../src/cluster/ports.js';
import type { EventBatch } from '../../src/engine/commands.js';
import { createEngine, restoreEngine } from '../../src/engine/engine.js';
import { connectNats, NO_NATS_AUTH } from '../../src/journal/nats-connection.js';

export class SteppedReplay {
  /** Times the log put each order id in a book or matched it: an accepted order.place, once per order. */
  readonly placed = new Map<string, number>();
  private target = 0;
  private resume: (() => void) | undefined;
  private follower: JetStreamEngineFollower | undefined;

  private constructor(private readonly nc: NatsConnection) {}

  static async open(natsUrl: string, cluster: string): Promise<SteppedReplay> {
    const nc = await connectNats(natsUrl, 'stepped replay', NO_NATS_AUTH);
    const replay = new SteppedReplay(nc);
    replay.follower = await openEngineFollower({
      nc, cluster, createEngine, restoreEngine, logger: pino({ level: 'silent' }),
      // Awaited before each command: hold still once the seq asked for is applied.
      pace: () => (replay.appliedSeq >= replay.target ? new Promise<void>((r) => { replay.resume = r; }) : undefined),
      bus: { publish: (batch) => replay.count(batch) },
    });
    return replay;
  }

  private get appliedSeq(): number {
    return this.follower?.seq ?? 0;
  }

  private count(batch: EventBatch): void {
    if (batch.kind !== 'order.place') return;
    const first = batch.events.find((e) => e.type === 'order');
    if (first?.type === 'order') this.placed.set(first.order.id, (this.placed.get(first.order.id) ?? 0) + 1);
  }

  /** Applies the log up to `seq` exactly and returns the engine there (it stays there until the next call). */
  async at(seq: number, timeoutMs: number): Promise<ReadOnlyEngine> {
    if (seq < this.appliedSeq) throw new Error(`replay is at seq ${this.appliedSeq}, past ${seq}`);
    this.target = seq;
    const resume = this.resume;
    this.resume = undefined;
    resume?.();
    await this.follower!.waitFor(seq, timeoutMs);
    return this.follower!.engine;
  }

  async close(): Promise<void> {
    this.target = Infinity;
    this.resume?.();
    await this.follower?.close();
    await this.nc.close();
  }
}
