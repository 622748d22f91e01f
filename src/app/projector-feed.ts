/** Feeds the read-model projector from the event bus (and from recovery's replay), off the sequencer's path. */
import type pino from 'pino';
import type { EventBatch } from '../sequencer/event-bus.js';
import type { Projector } from '../store/index.js';

/**
 * Feeds event batches to the read-model projector in groups (one transaction per group), behind the
 * sequencer. Batches already projected (seq ≤ last_seq) are skipped by the projector itself.
 */
export class ProjectorFeed {
  private buffer: EventBatch[] = [];
  private running: Promise<void> | undefined;

  constructor(private readonly projector: Projector, private readonly log: pino.Logger) {}

  readonly push = (batch: EventBatch): void => {
    this.buffer.push(batch);
    if (!this.running) this.running = this.loop();
  };

  private async loop(): Promise<void> {
    while (this.buffer.length > 0) {
      const batches = this.buffer;
      this.buffer = [];
      try {
        await this.projector.project(batches);
      } catch (err) {
        this.log.error({ err, fromSeq: batches[0].seq, toSeq: batches[batches.length - 1].seq }, 'read-model projection failed');
      }
    }
    this.running = undefined;
  }

  async drain(): Promise<void> {
    while (this.running) await this.running;
  }
}
