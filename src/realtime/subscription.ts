// One connection's subscription to one channel: buffers live publications while the
// subscribe (and its recovery) is in progress, then delivers in offset order without
// duplicates.
import type { Publication, StreamPosition } from './ports.js';
import type { HubSubscriber } from './hub.js';

export interface SubscriptionOwner {
  enqueue(frame: Buffer): void;
  /** The stream restarted under a live subscription: the client must resubscribe. */
  streamLost(channel: string): void;
}

export class ChannelSubscription implements HubSubscriber {
  /** Live publications held back until the subscribe reply is queued. */
  private buffered: { pub: Publication; position: StreamPosition; frame: Buffer }[] | null = [];
  /** Stream position already sent to the client (history channels only). */
  private lastOffset = 0;
  private epoch = '';
  expiryTimer: NodeJS.Timeout | null = null;
  /** Login session of the credentials that authorized it (RealtimeServer.endSession). */
  sessionId: string | undefined;
  /** False once unsubscribed/cancelled; late async continuations check it. */
  active = true;

  constructor(
    readonly channel: string,
    private readonly owner: SubscriptionOwner,
    /** Whether the channel keeps history (publications carry offsets). */
    readonly withHistory: boolean,
  ) {}

  /** True once the subscribe reply went out. */
  get isStarted(): boolean {
    return this.buffered === null && this.active;
  }

  deliver(pub: Publication, position: StreamPosition, frame: Buffer): void {
    if (!this.active) return;
    if (this.buffered) {
      this.buffered.push({ pub, position, frame });
      return;
    }
    this.send(pub, position, frame);
  }

  /** Called right after the subscribe reply was queued, with the position the client holds. */
  start(position: StreamPosition): void {
    this.lastOffset = position.offset;
    this.epoch = position.epoch;
    const held = this.buffered ?? [];
    this.buffered = null;
    for (const b of held) {
      if (!this.active) return;
      this.send(b.pub, b.position, b.frame);
    }
  }

  private send(pub: Publication, position: StreamPosition, frame: Buffer): void {
    if (this.withHistory && pub.offset > 0) {
      if (this.epoch && position.epoch !== this.epoch) {
        // Offsets restarted with a new epoch: the client's position is meaningless now.
        this.owner.streamLost(this.channel);
        return;
      }
      // Already in the recovered publications or before the client's position.
      if (pub.offset <= this.lastOffset) return;
      this.lastOffset = pub.offset;
    }
    this.owner.enqueue(frame);
  }

  stop(): void {
    this.active = false;
    this.buffered = null;
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryTimer = null;
  }
}
