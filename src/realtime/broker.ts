// The broker moves publications between the app and every real-time node, and keeps the
// per-channel history used for recovery. Shaped like Centrifugo's Broker so that a NATS
// JetStream implementation (stream per env, subject per channel, sequence = offset, stream
// creation time = epoch) can replace InMemoryBroker without touching the server.
import type { StreamPosition } from './protocol.js';

export type { StreamPosition };

export interface Publication {
  /** Position in the channel stream; 0 when the channel keeps no history. */
  offset: number;
  data: unknown;
}

/** How much history to keep for a channel. Channels without it have no stream/offsets. */
export interface HistoryPolicy {
  /** Maximum publications retained. */
  size: number;
  /** Retention time of each publication, ms. */
  ttlMs: number;
}

export interface PublishOptions {
  history?: HistoryPolicy;
}

export interface HistoryOptions {
  /** Return publications after this position (exclusive). Omitted: from the oldest kept. */
  since?: StreamPosition;
  /** Maximum publications returned; 0 returns only the stream top. */
  limit: number;
  /**
   * Newest first (Centrifugo's `reverse`): the last `limit` publications, or with `since` those before
   * that position (exclusive), in descending offset order.
   */
  reverse?: boolean;
}

export interface HistoryResult {
  publications: Publication[];
  /** Top of the stream (offset of the last publication) and its epoch. */
  offset: number;
  epoch: string;
}

/** Receives every publication of channels this node subscribed to, in offset order. */
export type PublicationHandler = (channel: string, pub: Publication, position: StreamPosition) => void;

export interface Broker {
  /** Appends to the channel (and its history, when given) and fans out to subscribed nodes. */
  publish(channel: string, data: unknown, opts?: PublishOptions): Promise<StreamPosition>;
  /** Reads history. An epoch mismatch in `since` returns the current stream, caller decides. */
  history(channel: string, opts: HistoryOptions): Promise<HistoryResult>;
  /** Sets the single handler the node's fan-out hangs on. */
  onPublication(handler: PublicationHandler): void;
  /** Starts/stops delivery of a channel to this node (first/last local subscriber). */
  subscribe(channel: string): Promise<void>;
  unsubscribe(channel: string): Promise<void>;
  close(): Promise<void>;
}
