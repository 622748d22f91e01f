/**
 * The real-time module's ports: the broker (publications between the app and every real-time node, and the
 * per-channel history used for recovery; shaped like Centrifugo's Broker, so a NATS JetStream implementation can
 * replace InMemoryBroker without touching the server), the publishing port the channels write through, and the
 * policy hooks the app configures the server with.
 */
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

// ---- publishing ----

/** What the channels, the coalescer and the heartbeat publish through (RealtimeServer). */
export type Publish = (channel: string, data: unknown) => unknown;

export interface ChannelPublisher {
  publish: Publish;
  /**
   * False only when nobody can receive a publication on the channel (RealtimeServer.hasSubscribers): channels
   * without history may then skip building it.
   */
  hasSubscribers(channel: string): boolean;
}

// ---- policy hooks and shared types ----

/** What the server knows about a connection, given to the app's policy hooks. */
export interface ClientInfo {
  /** Client id (uuid) sent to the client in the connect reply. */
  id: string;
  remoteAddress?: string;
  userAgent?: string;
  /** The token the client connected with, once found valid: a subscribe without a credential of its own uses it. */
  connectToken?: string;
}

export type Authorization =
  | {
      allowed: true;
      /** ms since epoch; the subscription is ended (and the client resubscribes) then. */
      expiresAt?: number;
      /** The login session the credentials belong to: RealtimeServer.endSession(id) ends the subscription. */
      sessionId?: string;
    }
  | {
      allowed: false;
      code: number;
      message: string;
      /** Make the client retry the subscribe with backoff (and call its getData again). */
      temporary?: boolean;
    };

/**
 * Channel access policy supplied by the app. `data` is the subscribe request's `data` member,
 * e.g. `{ accessToken: "<JWT>" }` for per-user channels. Unknown channels must be refused
 * (code 102). Throwing answers 100 internal (temporary: the client retries).
 */
export type Authorize = (channel: string, data: unknown, client: ClientInfo) => Promise<Authorization>;

/**
 * Checks the token of a connect command (a market-data token). It grants nothing beyond the public channels,
 * which need none: it is checked so a client given a bad or expired one learns so (3500, or 109 to renew it).
 */
export type CheckConnectToken = (token: string) => Promise<'valid' | 'expired' | 'invalid'>;

/** Which channels keep history (and so are recoverable); null for the others. */
export type HistoryPolicyFor = (channel: string) => HistoryPolicy | null;

/** Minimal logger shape (pino-compatible). */
export interface Logger {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: Logger = { debug() {}, warn() {}, error() {} };

export interface RealtimeStats {
  /** Open websocket connections. */
  readonly connections: number;
  /** Live channel subscriptions over all connections. */
  readonly subscriptions: number;
  /** Protocol messages queued to clients (replies, pushes, pings). */
  readonly messagesSent: number;
  /** Frames written to sockets (several messages may share one frame). */
  readonly framesSent: number;
  readonly bytesSent: number;
  /** Connections dropped because their queue exceeded maxQueueBytes. */
  readonly slowDisconnects: number;
}
