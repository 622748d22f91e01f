// Centrifugo-protocol (JSON, bidirectional websocket) real-time server. Attaches to existing
// http.Servers through their 'upgrade' event (the `server` option or attach()), or runs its own.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  silentLogger, type Authorize, type Broker, type CheckConnectToken, type HistoryOptions, type HistoryPolicyFor, type HistoryResult, type Logger, type RealtimeStats, type StreamPosition,
} from './ports.js';
import { Disconnects, DisconnectCode } from './codes.js';
import { Connection, type ConnectionContext, type ConnectionSettings } from './connection.js';
import { FlushScheduler } from './flush-scheduler.js';
import { FrameBuilder } from './frame-builder.js';
import { LRUCache } from 'lru-cache';
import { Hub } from './hub.js';
import { ConnectionGate, type RealtimeLimits } from './limits.js';
import { InMemoryBroker } from './memory-broker.js';

export interface RealtimeServerOptions {
  /** Attach to this server ('upgrade' event). Omitted: a standalone server (call listen()), or attach() later. */
  server?: http.Server;
  /** Websocket path. Default `/connection/websocket` (what centrifuge clients use). */
  path?: string;
  /** Default: a new InMemoryBroker (closed with the server). */
  broker?: Broker;
  authorize: Authorize;
  /** Checks a connect command's token. Default: none is checked (a token, if sent, is ignored). */
  checkConnectToken?: CheckConnectToken;
  /** History (recoverability) per channel. Default: no channel keeps history. */
  historyFor?: HistoryPolicyFor;
  /** Server ping period. Default 25 000 ms. Announced to clients in whole seconds. */
  pingIntervalMs?: number;
  /** A ping unanswered this long drops the connection (3012 "no pong"). Default 10 000 ms. */
  pongTimeoutMs?: number;
  /** No connect command within this → 3502 "stale". Default 10 000 ms. */
  connectTimeoutMs?: number;
  /** Outgoing bytes (ws bufferedAmount + not yet written) beyond this → 3008 "slow". Default 1 MiB. */
  maxQueueBytes?: number;
  /** A slow connection not closed by then is destroyed. Default 1 000 ms. */
  slowTerminateMs?: number;
  /** Maximum publications one recovery returns (more missed → recovered: false). Default 1 000. */
  maxRecoveredPublications?: number;
  maxSubscriptionsPerConnection?: number;
  /** Largest client frame accepted, bytes. Default 64 KiB. */
  maxPayloadBytes?: number;
  /**
   * How long a connection's first queued message waits so more of them leave in one frame
   * (Centrifugo's write delay). 0 (default): written at once when the server is idle; under load
   * connections are written in turn and messages queued meanwhile share the frame (adaptive
   * batching, see FlushScheduler). A delay trades that much latency for fewer frames.
   */
  writeDelayMs?: number;
  /** Version string sent in the connect reply. */
  version?: string;
  logger?: Logger;
  /** Connection caps and command rates. Default: none (the app passes its configured ones). */
  limits?: RealtimeLimits;
  /**
   * The client's address, for the per-IP limits and ClientInfo. Default: the socket's remote address; an app
   * behind a trusted proxy passes its rule for forwarded addresses here.
   */
  clientIpOf?: (req: http.IncomingMessage) => string | undefined;
  /**
   * How long an ended session (endSession) stays refused: subscribes authorized with it get 103. Set it to
   * the access-token lifetime, so a token of the session cannot be replayed. Default 15 minutes.
   */
  endedSessionTtlMs?: number;
}

export interface RealtimeServer {
  /** Publishes to every subscriber (and to history when the channel keeps it). */
  publish(channel: string, data: unknown): Promise<StreamPosition>;
  history(channel: string, opts: HistoryOptions): Promise<HistoryResult>;
  /**
   * False only when nobody can receive a publication on the channel: no local subscriber and the broker
   * is this server's own in-process one (a shared broker may have subscribers on other nodes). Lets
   * publishers skip building data for channels without history that nobody listens to.
   */
  hasSubscribers(channel: string): boolean;
  /**
   * A login session ended (logout, refresh-token reuse): every subscription authorized with it ends at once
   * with a terminal unsubscribe push (2000 "session ended": the client does not resubscribe on its own), a
   * subscribe in progress with it is refused (103), and so is any later one, for endedSessionTtlMs.
   * Returns the number of subscriptions ended on this node.
   */
  endSession(sessionId: string): number;
  readonly stats: RealtimeStats;
  /** Serves websocket upgrades on `path` of this server too (one the server was not created with). */
  attach(server: http.Server): void;
  /** Standalone mode only: starts listening (port 0 = random). */
  listen(port?: number, host?: string): Promise<AddressInfo>;
  /** Disconnects everyone with a reconnect code (3001 shutdown) and stops. */
  close(reason?: string): Promise<void>;
}

/** The websocket path centrifuge clients use. */
export const DEFAULT_WS_PATH = '/connection/websocket';

/** Answers an upgrade with a plain HTTP error (the centrifuge client reconnects with backoff). */
function refuseUpgrade(socket: Duplex, status: 429 | 503, reason: string): void {
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nConnection: close\r\nRetry-After: 1\r\n` +
      `Content-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(reason)}\r\n\r\n${reason}`,
  );
}

export function createRealtimeServer(opts: RealtimeServerOptions): RealtimeServer {
  const path = opts.path ?? DEFAULT_WS_PATH;
  const logger = opts.logger ?? silentLogger;
  const ownBroker = !opts.broker;
  const broker = opts.broker ?? new InMemoryBroker();
  const historyFor = opts.historyFor ?? (() => null);
  const pingIntervalMs = opts.pingIntervalMs ?? 25_000;
  const pongTimeoutMs = opts.pongTimeoutMs ?? 10_000;
  const settings: ConnectionSettings = {
    version: opts.version ?? '0.1.0',
    pingIntervalMs,
    connectTimeoutMs: opts.connectTimeoutMs ?? 10_000,
    maxQueueBytes: opts.maxQueueBytes ?? 1024 * 1024,
    slowTerminateMs: opts.slowTerminateMs ?? 1_000,
    maxRecoveredPublications: opts.maxRecoveredPublications ?? 1_000,
    maxSubscriptionsPerConnection: opts.maxSubscriptionsPerConnection ?? 512,
  };

  const hub = new Hub(broker);
  const connections = new Set<Connection>();
  const gate = new ConnectionGate(opts.limits ?? {});
  const clientIpOf = opts.clientIpOf ?? ((req: http.IncomingMessage) => req.socket.remoteAddress);
  const endedSessions = new LRUCache<string, true>({ max: 100_000, ttl: opts.endedSessionTtlMs ?? 15 * 60_000 });
  const counters = { messagesSent: 0, framesSent: 0, bytesSent: 0, slowDisconnects: 0 };

  const flusher = new FlushScheduler(opts.writeDelayMs ?? 0);
  const frames = new FrameBuilder();

  const ctx: ConnectionContext = {
    settings,
    broker,
    hub,
    authorize: opts.authorize,
    checkConnectToken: opts.checkConnectToken,
    historyFor,
    logger,
    counters,
    frames,
    limits: opts.limits ?? {},
    sessionEnded(sessionId) {
      return endedSessions.has(sessionId);
    },
    scheduleFlush(conn) {
      flusher.add(conn);
    },
    closed(conn) {
      connections.delete(conn);
    },
  };

  // No permessage-deflate: Connection writes ready-made uncompressed frames to the socket.
  const wss = new WebSocketServer({ noServer: true, maxPayload: opts.maxPayloadBytes ?? 64 * 1024, perMessageDeflate: false });
  const accept = (ws: WebSocket, socket: Duplex, req: http.IncomingMessage, remoteAddress: string | undefined) => {
    const conn = new Connection(ws, socket, ctx, { remoteAddress, userAgent: req.headers['user-agent'] });
    connections.add(conn);
  };

  const httpServer =
    opts.server ??
    http.createServer((_req, res) => {
      res.writeHead(404).end();
    });
  // One upgrade listener per server it serves: removed again by close().
  const attached = new Map<http.Server, (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void>();
  const attach = (server: http.Server) => {
    if (attached.has(server)) return;
    const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      const pathname = (req.url ?? '').split('?')[0];
      if (pathname !== path) {
        // Leave it to another upgrade handler if there is one.
        if (server.listenerCount('upgrade') === 1) socket.destroy();
        return;
      }
      const ip = clientIpOf(req);
      const admission = gate.admit(ip ?? 'unknown');
      if (!admission.ok) {
        logger.debug({ ip, status: admission.status, reason: admission.reason }, 'websocket upgrade refused');
        refuseUpgrade(socket, admission.status, admission.reason);
        return;
      }
      // Counted until the socket closes, whether or not the handshake completes.
      socket.once('close', admission.release);
      wss.handleUpgrade(req, socket, head, (ws) => accept(ws, socket, req, ip));
    };
    attached.set(server, onUpgrade);
    server.on('upgrade', onUpgrade);
  };
  attach(httpServer);

  // Pings: one timer for all connections, then one check for the answers.
  let pongCheck: NodeJS.Timeout | null = null;
  const pingTimer = setInterval(() => {
    const now = Date.now();
    for (const c of connections) c.ping(now);
    if (pongCheck) clearTimeout(pongCheck);
    pongCheck = setTimeout(() => {
      pongCheck = null;
      const deadline = Date.now() - pongTimeoutMs;
      for (const c of connections) {
        if (c.pingSentAt !== 0 && c.pingSentAt <= deadline) c.disconnect(Disconnects.noPong);
      }
    }, pongTimeoutMs);
    pongCheck.unref();
  }, pingIntervalMs);
  pingTimer.unref();

  const stats: RealtimeStats = {
    get connections() {
      return connections.size;
    },
    get subscriptions() {
      return hub.subscriptions;
    },
    get messagesSent() {
      return counters.messagesSent;
    },
    get framesSent() {
      return counters.framesSent;
    },
    get bytesSent() {
      return counters.bytesSent;
    },
    get slowDisconnects() {
      return counters.slowDisconnects;
    },
  };

  let closing: Promise<void> | null = null;

  return {
    stats,
    publish(channel, data) {
      const policy = historyFor(channel);
      return broker.publish(channel, data, policy ? { history: policy } : undefined);
    },
    history(channel, o) {
      return broker.history(channel, o);
    },
    hasSubscribers(channel) {
      return !ownBroker || hub.has(channel);
    },
    attach(server) {
      if (closing) throw new Error('the real-time server is closed');
      attach(server);
    },
    endSession(sessionId) {
      // Remembered first: a subscribe whose token is being verified right now is refused when it completes.
      endedSessions.set(sessionId, true);
      let ended = 0;
      for (const c of connections) ended += c.endSession(sessionId);
      return ended;
    },
    listen(port = 0, host = '127.0.0.1') {
      if (opts.server) return Promise.reject(new Error('attached to an existing server: listen on it instead'));
      return new Promise((resolve, reject) => {
        httpServer.once('error', reject);
        httpServer.listen(port, host, () => {
          httpServer.off('error', reject);
          resolve(httpServer.address() as AddressInfo);
        });
      });
    },
    close(reason = 'shutdown') {
      closing ??= (async () => {
        clearInterval(pingTimer);
        if (pongCheck) clearTimeout(pongCheck);
        for (const [server, onUpgrade] of attached) server.off('upgrade', onUpgrade);
        attached.clear();
        const all = [...connections];
        for (const c of all) c.disconnect({ code: DisconnectCode.shutdown, reason }, { push: true, reconnect: true });
        // Give close handshakes a moment, then cut what's left.
        if (all.length > 0) await new Promise((r) => setTimeout(r, 200));
        for (const client of wss.clients) client.terminate();
        flusher.stop();
        await new Promise<void>((r) => wss.close(() => r()));
        if (!opts.server && httpServer.listening) {
          await new Promise<void>((r) => httpServer.close(() => r()));
        }
        if (ownBroker) await broker.close();
      })();
      return closing;
    },
  };
}
