// Local fan-out: channel → subscriptions of this node. Each broker publication is encoded
// once into a push frame and the same bytes are queued on every subscriber's connection.
import type { Broker, Publication, StreamPosition } from './ports.js';
import { encodePublicationPush } from './protocol.js';

/** One connection's subscription as the hub sees it. */
export interface HubSubscriber {
  deliver(pub: Publication, position: StreamPosition, frame: Buffer): void;
}

export class Hub {
  private readonly channels = new Map<string, Set<HubSubscriber>>();
  private count = 0;

  constructor(private readonly broker: Broker) {
    broker.onPublication((channel, pub, position) => this.fanOut(channel, pub, position));
  }

  get subscriptions(): number {
    return this.count;
  }

  /** Whether any connection of this node is subscribed to the channel. */
  has(channel: string): boolean {
    return this.channels.has(channel);
  }

  /** Registers the subscriber; resolves once the broker delivers the channel to this node,
   *  so a history read after it cannot miss a publication. */
  async add(channel: string, sub: HubSubscriber): Promise<void> {
    let set = this.channels.get(channel);
    const first = !set;
    if (!set) {
      set = new Set();
      this.channels.set(channel, set);
    }
    if (!set.has(sub)) {
      set.add(sub);
      this.count++;
    }
    if (first) await this.broker.subscribe(channel);
  }

  remove(channel: string, sub: HubSubscriber): void {
    const set = this.channels.get(channel);
    if (!set || !set.delete(sub)) return;
    this.count--;
    if (set.size === 0) {
      this.channels.delete(channel);
      // A failure only leaves extra deliveries to a node without subscribers: harmless.
      this.broker.unsubscribe(channel).catch(() => {});
    }
  }

  private fanOut(channel: string, pub: Publication, position: StreamPosition): void {
    const set = this.channels.get(channel);
    if (!set || set.size === 0) return;
    const frame = encodePublicationPush(channel, pub.offset > 0 ? { data: pub.data, offset: pub.offset } : { data: pub.data });
    for (const sub of set) sub.deliver(pub, position, frame);
  }
}
