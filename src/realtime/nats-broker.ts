/**
 * Broker on NATS JetStream: the real-time broker of a cluster, so history and recovery of a channel survive a
 * client reconnecting to another gateway.
 *
 * One publisher (the engine leader) numbers each channel's publications (offset, epoch) and appends them to one
 * stream per cluster, a subject per channel, with max_msgs_per_subject = the history size: the server trims each
 * channel, `last_by_subj` reads a channel's top in one request, and one stream is one thing to operate (a KV
 * bucket keeps at most 64 revisions per key, fewer than a channel's history). Every gateway's broker holds a
 * core NATS subscription per channel its clients follow (the stream's subjects are plain subjects too) and
 * reads history from the stream. Channels without history go over core NATS only.
 *
 * A publication carries its own offset, epoch, expiry and the channel's history size, so any gateway trims
 * history the way the publisher's policy says. After a restart the publisher continues each channel from the
 * top kept in the stream; a channel idle past `streamMetaTtlMs` (the stream's max_age) starts a new epoch.
 */
import { randomBytes } from 'node:crypto';
import {
  DiscardPolicy, jetstream, jetstreamManager, JetStreamApiError, RetentionPolicy, StorageType,
  type JetStreamClient, type JetStreamManager, type StreamConfig,
} from '@nats-io/jetstream';
import { nanos, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { Broker, HistoryOptions, HistoryResult, Publication, PublicationHandler, PublishOptions, StreamPosition } from './ports.js';

export interface NatsBrokerOptions {
  /** Open connection; the caller closes it after the broker. */
  nc: NatsConnection;
  /** Stream of the channel histories, e.g. PERPX_<cluster>_REALTIME. */
  stream: string;
  /** Subject prefix, e.g. perpx.<cluster>.rt: history channels on <prefix>.h.<channel>, the others on <prefix>.l.<channel>. */
  subjectPrefix: string;
  /** Publications the stream keeps per channel: the largest history size of any channel. */
  maxHistorySize: number;
  /** A channel idle this long is forgotten (stream max_age); its next publication starts a new epoch. Default 24 h. */
  streamMetaTtlMs?: number;
  /** Stream replicas when it is created (1 on one server, 3 in production). */
  replicas?: number;
  /**
   * Whether this broker creates the stream and sets its limits (default true: the publisher). A gateway only reads
   * history and hears channels: false, so its NATS user needs no right to change streams; the stream must exist.
   */
  manageStream?: boolean;
  now?: () => number;
}

/** What a history channel's message carries. */
interface Envelope {
  /** offset */
  o: number;
  /** epoch */
  e: string;
  /** expiry (ms since epoch) of this publication */
  x: number;
  /** the channel's history size when published */
  n: number;
  /** data */
  d: unknown;
}

interface ChannelTop {
  epoch: string;
  top: number;
  lastPublishAt: number;
}

const newEpoch = () => randomBytes(4).toString('hex');
const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * A channel name as one subject token: characters other than letters, digits, `_`, `-` and `:` (and `~` itself)
 * become `~` and their UTF-8 bytes in hex, so `.`, `*`, `>` and spaces never reach the subject.
 */
export function channelToken(channel: string): string {
  return channel.replace(/[^A-Za-z0-9_:-]/gu, (c) => [...encoder.encode(c)].map((b) => `~${b.toString(16).padStart(2, '0')}`).join(''));
}

export function realtimeStreamConfig(o: Pick<NatsBrokerOptions, 'stream' | 'subjectPrefix' | 'maxHistorySize' | 'streamMetaTtlMs' | 'replicas'>): Partial<StreamConfig> & { name: string } {
  return {
    name: o.stream,
    subjects: [`${o.subjectPrefix}.h.>`],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    max_msgs_per_subject: o.maxHistorySize,
    max_age: nanos(o.streamMetaTtlMs ?? 24 * 3600_000),
    allow_direct: true,
    num_replicas: o.replicas ?? 1,
  };
}

export class NatsBroker implements Broker {
  private handler: PublicationHandler | null = null;
  private readonly subscriptions = new Map<string, Subscription>();
  /** The publisher's view of each channel it published to, loaded from the stream on first use. */
  private readonly tops = new Map<string, Promise<ChannelTop>>();
  private readonly now: () => number;
  private readonly metaTtlMs: number;
  private readonly sweepTimer: NodeJS.Timeout;

  private constructor(
    private readonly opts: NatsBrokerOptions,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
  ) {
    this.now = opts.now ?? Date.now;
    this.metaTtlMs = opts.streamMetaTtlMs ?? 24 * 3600_000;
    this.sweepTimer = setInterval(() => void this.sweep(), Math.min(this.metaTtlMs, 60_000));
    this.sweepTimer.unref();
  }

  /** Creates the stream, or brings an existing one to these limits (only checks it is there, unless `manageStream`). */
  static async open(opts: NatsBrokerOptions): Promise<NatsBroker> {
    const jsm = await jetstreamManager(opts.nc);
    const config = realtimeStreamConfig(opts);
    if (opts.manageStream === false) {
      await jsm.streams.info(config.name).catch((err: unknown) => {
        throw new Error(`real-time stream ${config.name} is not there (the engine leader creates it: start it first): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      });
      return new NatsBroker(opts, jetstream(opts.nc), jsm);
    }
    try {
      const existing = (await jsm.streams.info(config.name)).config;
      if (existing.max_msgs_per_subject !== config.max_msgs_per_subject || existing.max_age !== config.max_age || !existing.allow_direct) {
        await jsm.streams.update(config.name, { ...existing, max_msgs_per_subject: config.max_msgs_per_subject, max_age: config.max_age, allow_direct: true });
      }
    } catch (err) {
      if (!(err instanceof JetStreamApiError) || err.status !== 404) throw err;
      await jsm.streams.add(config);
    }
    return new NatsBroker(opts, jetstream(opts.nc), jsm);
  }

  onPublication(handler: PublicationHandler): void {
    this.handler = handler;
  }

  async subscribe(channel: string): Promise<void> {
    if (this.subscriptions.has(channel)) return;
    const token = channelToken(channel);
    const sub = this.opts.nc.subscribe(`${this.opts.subjectPrefix}.*.${token}`, {
      callback: (err, msg) => {
        if (err || !this.handler) return;
        const withHistory = msg.subject.startsWith(`${this.opts.subjectPrefix}.h.`);
        this.deliver(channel, withHistory, msg.data);
      },
    });
    this.subscriptions.set(channel, sub);
    // Once the server has the interest, a history read cannot miss a publication (Hub.add).
    await this.opts.nc.flush();
  }

  async unsubscribe(channel: string): Promise<void> {
    this.subscriptions.get(channel)?.unsubscribe();
    this.subscriptions.delete(channel);
  }

  async publish(channel: string, data: unknown, opts?: PublishOptions): Promise<StreamPosition> {
    const token = channelToken(channel);
    const policy = opts?.history;
    if (!policy || policy.size <= 0) {
      this.opts.nc.publish(`${this.opts.subjectPrefix}.l.${token}`, encoder.encode(JSON.stringify(data)));
      return { offset: 0, epoch: '' };
    }
    // Every publish of a channel awaits the same promise, so their continuations (and offsets) keep call order.
    const channelTop = await this.topFor(channel);
    const now = this.now();
    if (now - channelTop.lastPublishAt > this.metaTtlMs) Object.assign(channelTop, { epoch: newEpoch(), top: 0 });
    channelTop.top += 1;
    channelTop.lastPublishAt = now;
    const envelope: Envelope = { o: channelTop.top, e: channelTop.epoch, x: now + policy.ttlMs, n: policy.size, d: data };
    try {
      await this.js.publish(`${this.opts.subjectPrefix}.h.${token}`, encoder.encode(JSON.stringify(envelope)));
    } catch (err) {
      // The offset may or may not be stored: a new epoch tells every client to resynchronize instead of guessing.
      if (channelTop.epoch === envelope.e) Object.assign(channelTop, { epoch: newEpoch(), top: 0 });
      throw err;
    }
    return { offset: envelope.o, epoch: envelope.e };
  }

  async history(channel: string, opts: HistoryOptions): Promise<HistoryResult> {
    const subject = `${this.opts.subjectPrefix}.h.${channelToken(channel)}`;
    const last = await this.jsm.direct.getMessage(this.opts.stream, { last_by_subj: subject });
    // Nothing kept: no position yet. An empty epoch matches whatever epoch the first publication starts.
    if (!last) return { publications: [], offset: 0, epoch: '' };
    const top = last.json<Envelope>();
    const result: HistoryResult = { publications: [], offset: top.o, epoch: top.e };
    if (opts.limit <= 0) return result;
    const now = this.now();
    const since = opts.since && opts.since.epoch === top.e ? opts.since.offset : null;
    // Kept: this epoch, within the channel's size and unexpired.
    const kept = (await this.readSubject(subject, last.seq)).filter((p) => p.e === top.e && p.o > top.o - top.n && p.x > now);
    const pick = opts.reverse
      ? kept.filter((p) => since === null || p.o < since).reverse()
      : kept.filter((p) => p.o > (since ?? 0));
    result.publications = pick.slice(0, opts.limit).map((p): Publication => ({ offset: p.o, data: p.d }));
    return result;
  }

  async close(): Promise<void> {
    clearInterval(this.sweepTimer);
    for (const sub of this.subscriptions.values()) sub.unsubscribe();
    this.subscriptions.clear();
    this.handler = null;
  }

  private deliver(channel: string, withHistory: boolean, data: Uint8Array): void {
    let pub: Publication;
    let position: StreamPosition;
    try {
      if (withHistory) {
        const e = JSON.parse(decoder.decode(data)) as Envelope;
        pub = { offset: e.o, data: e.d };
        position = { offset: e.o, epoch: e.e };
      } else {
        pub = { offset: 0, data: JSON.parse(decoder.decode(data)) };
        position = { offset: 0, epoch: '' };
      }
    } catch {
      return; // not ours: only the publisher writes these subjects
    }
    this.handler?.(channel, pub, position);
  }

  /** The channel's messages in stream order, up to the one at stream sequence `lastSeq`. */
  private async readSubject(subject: string, lastSeq: number): Promise<Envelope[]> {
    const consumer = await this.js.consumers.get(this.opts.stream, { filter_subjects: subject });
    const out: Envelope[] = [];
    const messages = await consumer.consume({ max_messages: Math.min(this.opts.maxHistorySize, 1000) });
    try {
      for await (const m of messages) {
        out.push(m.json<Envelope>());
        if (m.seq >= lastSeq || m.info.pending === 0) break;
      }
    } finally {
      await messages.close();
      await consumer.delete().catch(() => undefined);
    }
    return out;
  }

  private topFor(channel: string): Promise<ChannelTop> {
    let top = this.tops.get(channel);
    if (!top) {
      top = this.loadTop(channel);
      this.tops.set(channel, top);
      // A failed load is not cached: the next publish asks the stream again.
      top.catch(() => this.tops.delete(channel));
    }
    return top;
  }

  private async loadTop(channel: string): Promise<ChannelTop> {
    const last = await this.jsm.direct.getMessage(this.opts.stream, { last_by_subj: `${this.opts.subjectPrefix}.h.${channelToken(channel)}` });
    if (!last) return { epoch: newEpoch(), top: 0, lastPublishAt: this.now() };
    const e = last.json<Envelope>();
    return { epoch: e.e, top: e.o, lastPublishAt: last.timestamp ? Date.parse(last.timestamp) : this.now() };
  }

  /** Forgets channels idle past the meta TTL (their next publication reloads from the stream). */
  private async sweep(): Promise<void> {
    const now = this.now();
    for (const [channel, pending] of this.tops) {
      const top = await pending.catch(() => undefined);
      if (top && now - top.lastPublishAt > this.metaTtlMs && this.tops.get(channel) === pending) this.tops.delete(channel);
    }
  }
}
