// Single-process broker: publications go straight to the local handler; channels with a
// history policy keep a bounded, TTL-trimmed stream identified by an epoch.
import { randomBytes } from 'node:crypto';
import type {
  Broker,
  HistoryOptions,
  HistoryResult,
  Publication,
  PublicationHandler,
  PublishOptions,
  StreamPosition,
} from './ports.js';

export interface InMemoryBrokerOptions {
  /** A stream idle (no publication) this long is forgotten; the next one starts a new epoch.
   *  Default 24 h. Bounds memory for per-user channels of users who went away. */
  streamMetaTtlMs?: number;
  /** Clock, injectable for tests. */
  now?: () => number;
}

interface Entry {
  offset: number;
  data: unknown;
  expiresAt: number;
}

interface Stream {
  epoch: string;
  top: number;
  /** Oldest first; bounded by the policy size. */
  entries: Entry[];
  lastPublishAt: number;
}

export class InMemoryBroker implements Broker {
  private readonly streams = new Map<string, Stream>();
  private readonly subscribed = new Set<string>();
  private handler: PublicationHandler | null = null;
  private readonly metaTtlMs: number;
  private readonly now: () => number;
  private readonly sweepTimer: NodeJS.Timeout;

  constructor(opts: InMemoryBrokerOptions = {}) {
    this.metaTtlMs = opts.streamMetaTtlMs ?? 24 * 3600_000;
    this.now = opts.now ?? Date.now;
    this.sweepTimer = setInterval(() => this.sweep(), Math.min(this.metaTtlMs, 60_000));
    this.sweepTimer.unref();
  }

  onPublication(handler: PublicationHandler): void {
    this.handler = handler;
  }

  async subscribe(channel: string): Promise<void> {
    this.subscribed.add(channel);
  }

  async unsubscribe(channel: string): Promise<void> {
    this.subscribed.delete(channel);
  }

  /** Synchronous core of publish, so in-process callers keep strict ordering cheaply. */
  publishSync(channel: string, data: unknown, opts?: PublishOptions): StreamPosition {
    let pub: Publication;
    let position: StreamPosition;
    if (opts?.history && opts.history.size > 0) {
      const now = this.now();
      const stream = this.liveStream(channel, now);
      stream.top += 1;
      stream.lastPublishAt = now;
      stream.entries.push({ offset: stream.top, data, expiresAt: now + opts.history.ttlMs });
      const excess = stream.entries.length - opts.history.size;
      if (excess > 0) stream.entries.splice(0, excess);
      pub = { offset: stream.top, data };
      position = { offset: stream.top, epoch: stream.epoch };
    } else {
      pub = { offset: 0, data };
      position = { offset: 0, epoch: '' };
    }
    if (this.handler && this.subscribed.has(channel)) this.handler(channel, pub, position);
    return position;
  }

  async publish(channel: string, data: unknown, opts?: PublishOptions): Promise<StreamPosition> {
    return this.publishSync(channel, data, opts);
  }

  async history(channel: string, opts: HistoryOptions): Promise<HistoryResult> {
    const now = this.now();
    const stream = this.liveStream(channel, now);
    trimExpired(stream, now);
    const result: HistoryResult = { publications: [], offset: stream.top, epoch: stream.epoch };
    if (opts.limit <= 0) return result;
    const since = opts.since && opts.since.epoch === stream.epoch ? opts.since.offset : null;
    if (opts.reverse) {
      // Newest first: from the top down, or from just below `since`.
      for (let i = stream.entries.length - 1; i >= 0; i--) {
        const e = stream.entries[i];
        if (since !== null && e.offset >= since) continue;
        result.publications.push({ offset: e.offset, data: e.data });
        if (result.publications.length >= opts.limit) break;
      }
      return result;
    }
    const after = since ?? 0;
    for (const e of stream.entries) {
      if (e.offset <= after) continue;
      result.publications.push({ offset: e.offset, data: e.data });
      if (result.publications.length >= opts.limit) break;
    }
    return result;
  }

  async close(): Promise<void> {
    clearInterval(this.sweepTimer);
    this.handler = null;
  }

  /** The channel's stream, started (new epoch) when absent or idle past the meta TTL. */
  private liveStream(channel: string, now: number): Stream {
    let stream = this.streams.get(channel);
    if (!stream || now - stream.lastPublishAt > this.metaTtlMs) {
      stream = { epoch: randomBytes(4).toString('hex'), top: 0, entries: [], lastPublishAt: now };
      this.streams.set(channel, stream);
    }
    return stream;
  }

  private sweep(): void {
    const now = this.now();
    for (const [channel, stream] of this.streams) {
      if (now - stream.lastPublishAt > this.metaTtlMs) this.streams.delete(channel);
      else trimExpired(stream, now);
    }
  }
}

function trimExpired(stream: Stream, now: number): void {
  let n = 0;
  while (n < stream.entries.length && stream.entries[n].expiresAt <= now) n++;
  if (n > 0) stream.entries.splice(0, n);
}
