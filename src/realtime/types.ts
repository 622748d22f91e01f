// Types shared by the server and the app that configures it.
import type { HistoryPolicy } from './broker.js';

/** What the server knows about a connection, given to the app's policy hooks. */
export interface ClientInfo {
  /** Client id (uuid) sent to the client in the connect reply. */
  id: string;
  remoteAddress?: string;
  userAgent?: string;
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
