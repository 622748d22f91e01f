/**
 * Event fan-out after the journal. The sequencer publishes one batch per command, in seq order, only once
 * the command is durable; subscribers (read-model projector, real-time channels, metrics) each get every
 * batch in that order.
 *
 * The split follows Centrifugo's broker/engine idea: `EventBroker` is only the transport (publish +
 * subscribe), so a NATS JetStream broker can replace the in-process one without the sequencer or the
 * subscribers changing. Subscribers are isolated from the sequencer and from each other: a throwing one
 * is logged and keeps receiving; a slow (async) one gets its own queue; one that falls too far behind is
 * detached and told so (it must rebuild from the journal) instead of growing memory without bound.
 */
import pino from 'pino';
import type { EventBatch } from '../engine/commands.js';
import type { EventBroker, EventHandler, SubscribeOptions, Subscription } from './ports.js';

const DEFAULT_MAX_QUEUE = 100_000;

/** One subscriber's ordered delivery queue. */
class SubscriberQueue {
  private readonly pending: EventBatch[] = [];
  private head = 0;
  private busy = false;
  private idleWaiters: Array<() => void> = [];
  lastDeliveredSeq = 0;
  detached = false;

  constructor(
    readonly name: string,
    private readonly handler: EventHandler,
    private readonly maxQueue: number,
    private readonly onOverflow: ((seq: number) => void) | undefined,
    private readonly log: pino.Logger,
    private readonly detach: () => void,
  ) {}

  deliver(batch: EventBatch): void {
    if (this.detached) return;
    if (!this.busy) {
      this.run(batch);
      return;
    }
    if (this.pending.length - this.head >= this.maxQueue) {
      this.log.error({ subscriber: this.name, seq: batch.seq, lastDeliveredSeq: this.lastDeliveredSeq },
        'event subscriber lagging; detached');
      this.detached = true;
      this.pending.length = 0;
      this.head = 0;
      this.detach();
      this.notifyIdle();
      try {
        this.onOverflow?.(this.lastDeliveredSeq);
      } catch (err) {
        this.log.error({ subscriber: this.name, err }, 'onOverflow threw');
      }
      return;
    }
    this.pending.push(batch);
  }

  private run(batch: EventBatch): void {
    let result: void | Promise<void>;
    try {
      result = this.handler(batch);
    } catch (err) {
      this.log.error({ subscriber: this.name, seq: batch.seq, err }, 'event subscriber threw');
      this.lastDeliveredSeq = batch.seq;
      return;
    }
    if (result && typeof (result as Promise<void>).then === 'function') {
      this.busy = true;
      (result as Promise<void>).then(
        () => this.next(batch.seq),
        (err: unknown) => {
          this.log.error({ subscriber: this.name, seq: batch.seq, err }, 'event subscriber rejected');
          this.next(batch.seq);
        },
      );
    } else {
      this.lastDeliveredSeq = batch.seq;
    }
  }

  private next(doneSeq: number): void {
    this.lastDeliveredSeq = doneSeq;
    this.busy = false;
    while (!this.busy && !this.detached && this.head < this.pending.length) {
      const batch = this.pending[this.head++];
      this.run(batch);
    }
    if (this.head === this.pending.length) {
      this.pending.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.pending.length) {
      this.pending.splice(0, this.head);
      this.head = 0;
    }
    if (!this.busy) this.notifyIdle();
  }

  close(): void {
    this.detached = true;
    this.pending.length = 0;
    this.head = 0;
    this.notifyIdle();
  }

  idle(): Promise<void> {
    if (!this.busy || this.detached) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private notifyIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}

export class InProcessEventBroker implements EventBroker {
  private subscribers: SubscriberQueue[] = [];
  private readonly log: pino.Logger;

  constructor(options: { logger?: pino.Logger } = {}) {
    this.log = options.logger ?? pino({ name: 'event-bus', level: process.env.LOG_LEVEL ?? 'info' });
  }

  publish(batch: EventBatch): void {
    // Iterate a stable copy: a handler may (un)subscribe while being called.
    for (const s of this.subscribers.slice()) s.deliver(batch);
  }

  subscribe(name: string, handler: EventHandler, options: SubscribeOptions = {}): Subscription {
    const remove = (): void => {
      this.subscribers = this.subscribers.filter((s) => s !== queue);
    };
    const queue: SubscriberQueue = new SubscriberQueue(
      name, handler, options.maxQueue ?? DEFAULT_MAX_QUEUE, options.onOverflow, this.log, remove,
    );
    this.subscribers.push(queue);
    return {
      name,
      unsubscribe: () => {
        queue.close();
        remove();
      },
    };
  }

  async drain(): Promise<void> {
    await Promise.all(this.subscribers.map((s) => s.idle()));
  }
}
