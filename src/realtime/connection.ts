// One client connection: parses command frames, answers them, and owns the outgoing queue.
// Messages queued until its turn in the server's flush pass leave as one newline-delimited frame.
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { WebSocket, type RawData } from 'ws';
import type { Authorize, Broker, CheckConnectToken, ClientInfo, HistoryPolicyFor, Logger } from './ports.js';
import { Disconnects, Errors, type Disconnect, type ProtocolError } from './codes.js';
import type { Hub } from './hub.js';
import { CommandLimiter, type ClientCommandKind, type RealtimeLimits } from './limits.js';
import {
  PING,
  encodeDisconnectPush,
  encodeErrorReply,
  encodeReply,
  parseFrame,
  type ClientCommand,
  type HistoryRequest,
} from './protocol.js';
import type { FrameBuilder } from './frame-builder.js';
import { ConnectionSubscriptions, type SubscriptionsHost } from './connection-subscriptions.js';

export interface ConnectionSettings {
  version: string;
  pingIntervalMs: number;
  connectTimeoutMs: number;
  maxQueueBytes: number;
  slowTerminateMs: number;
  maxRecoveredPublications: number;
  maxSubscriptionsPerConnection: number;
}

/** What a connection needs from its server. */
export interface ConnectionContext {
  settings: ConnectionSettings;
  broker: Broker;
  hub: Hub;
  authorize: Authorize;
  /** Checks a connect command's token (market-data tokens); absent: tokens are not looked at. */
  checkConnectToken?: CheckConnectToken;
  historyFor: HistoryPolicyFor;
  logger: Logger;
  counters: { messagesSent: number; framesSent: number; bytesSent: number; slowDisconnects: number };
  frames: FrameBuilder;
  limits: RealtimeLimits;
  /** True for a session ended by RealtimeServer.endSession (remembered as long as its tokens may live). */
  sessionEnded(sessionId: string): boolean;
  scheduleFlush(conn: Connection): void;
  closed(conn: Connection): void;
}

/** Commands a client may send while its connect token is checked; one more is a bad request. */
const MAX_QUEUED_WHILE_CONNECTING = 64;

// Commands this server knows but does not offer: a clear error instead of 104.
const NOT_AVAILABLE = new Set(['refresh', 'sub_refresh', 'presence', 'presence_stats']);

export class Connection implements SubscriptionsHost {
  readonly info: ClientInfo;
  private connected = false;
  /** Commands that arrived while the connect token is being checked (null when none is). */
  private connecting: ClientCommand[] | null = null;
  private ended = false;
  private readonly subscriptions: ConnectionSubscriptions;
  private readonly limiter: CommandLimiter | null;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private readonly connectTimer: NodeJS.Timeout;
  /** When the unanswered ping was sent; 0 when none is outstanding. */
  pingSentAt = 0;

  constructor(
    private readonly ws: WebSocket,
    /** The upgraded socket under `ws`: queued messages are written to it as ready-made frames. */
    private readonly socket: Duplex,
    private readonly ctx: ConnectionContext,
    meta: { remoteAddress?: string; userAgent?: string },
  ) {
    this.info = { id: randomUUID(), ...meta };
    this.limiter = CommandLimiter.create(ctx.limits);
    this.subscriptions = new ConnectionSubscriptions(this, ctx);
    ws.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    ws.on('close', () => this.cleanup());
    ws.on('error', (err) => ctx.logger.debug({ err, client: this.info.id }, 'websocket error'));
    // A socket that never sends connect holds resources for nothing.
    this.connectTimer = setTimeout(() => this.disconnect(Disconnects.stale), ctx.settings.connectTimeoutMs);
    this.connectTimer.unref();
  }

  get isConnected(): boolean {
    return this.connected && !this.ended;
  }

  get isClosed(): boolean {
    return this.ended;
  }

  // ---- outgoing ----

  enqueue(frame: Buffer): void {
    if (this.isClosed) return;
    const queued = this.socket.writableLength + this.pendingBytes + frame.length;
    if (queued > this.ctx.settings.maxQueueBytes) {
      this.ctx.counters.slowDisconnects++;
      this.disconnect(Disconnects.slow);
      return;
    }
    this.pending.push(frame);
    this.pendingBytes += frame.length;
    this.ctx.counters.messagesSent++;
    if (this.pending.length === 1) this.ctx.scheduleFlush(this);
  }

  private enqueueString(msg: string): void {
    this.enqueue(Buffer.from(msg));
  }

  /** Writes everything queued as one frame. Called by the server's flush pass. */
  flush(): void {
    if (this.isClosed || this.pending.length === 0) return;
    const parts = this.pending;
    const bytes = this.pendingBytes + parts.length - 1;
    this.pending = [];
    this.pendingBytes = 0;
    // Not after ws sent its close frame (the client initiated the close handshake).
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.ctx.counters.framesSent++;
    this.ctx.counters.bytesSent += bytes;
    // A complete frame straight to the socket, next to ws's own writes: ws writes each of its
    // frames whole and in order (no permessage-deflate here), so frames never interleave.
    this.socket.write(this.ctx.frames.build(parts));
  }

  ping(now: number): void {
    if (!this.isConnected) return;
    if (this.pingSentAt === 0) this.pingSentAt = now;
    this.enqueue(PING);
  }

  // ---- lifecycle ----

  /**
   * Ends the connection with a close frame carrying code and reason (which the client acts
   * on); `push` also sends a disconnect push first, for transports that lose close reasons.
   */
  disconnect(d: Disconnect, opts: { push?: boolean; reconnect?: boolean } = {}): void {
    if (this.isClosed) return;
    const slow = d.code === Disconnects.slow.code;
    if (opts.push && !slow) {
      this.pending.push(Buffer.from(encodeDisconnectPush(d.code, d.reason, opts.reconnect ?? true)));
      this.flush();
    }
    this.cleanup();
    try {
      this.ws.close(d.code, d.reason);
    } catch {
      this.ws.terminate();
    }
    if (slow) {
      // A client that doesn't read won't complete the close handshake either.
      setTimeout(() => this.ws.terminate(), this.ctx.settings.slowTerminateMs).unref();
    }
  }

  /** Kills the socket without a handshake (server shutdown after the grace period). */
  terminate(): void {
    this.cleanup();
    this.ws.terminate();
  }

  private cleanup(): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.connectTimer);
    this.subscriptions.dropAll();
    this.pending = [];
    this.pendingBytes = 0;
    this.ctx.closed(this);
  }

  // ---- incoming ----

  private onMessage(data: RawData, isBinary: boolean): void {
    if (this.isClosed) return;
    // Any data from the client proves it alive, not only the pong itself.
    this.pingSentAt = 0;
    let commands: ClientCommand[];
    try {
      if (isBinary) throw new Error('binary frame on the JSON protocol');
      commands = parseFrame(data.toString());
    } catch (err) {
      this.ctx.logger.debug({ err, client: this.info.id }, 'malformed frame');
      this.disconnect(Disconnects.badRequest);
      return;
    }
    for (const cmd of commands) {
      if (this.isClosed) return;
      if (this.limiter && !this.withinLimits(this.limiter, cmd)) continue;
      this.handle(cmd);
    }
  }

  /** Counts the command against the connection's budget; beyond it: 111, and after many of those 3013. */
  private withinLimits(limiter: CommandLimiter, cmd: ClientCommand): boolean {
    const kind: ClientCommandKind = cmd.subscribe ? 'subscribe' : cmd.history ? 'history' : 'other';
    const verdict = limiter.check(kind);
    if (verdict === 'ok') return true;
    if (verdict === 'disconnect') {
      this.disconnect(Disconnects.tooManyRequests, { push: true, reconnect: true });
    } else if (Number.isInteger(cmd.id) && (cmd.id as number) > 0) {
      this.replyError(cmd.id as number, Errors.tooManyRequests);
    }
    return false;
  }

  private handle(cmd: ClientCommand): void {
    if (this.connecting) {
      if (this.connecting.length >= MAX_QUEUED_WHILE_CONNECTING) this.disconnect(Disconnects.badRequest);
      else this.connecting.push(cmd);
      return;
    }
    const id = cmd.id;
    if (id === undefined || id === 0) {
      // `{}` is the pong; `send` (async message) has no reply and no use here.
      return;
    }
    if (!Number.isInteger(id) || id < 0) {
      this.disconnect(Disconnects.badRequest);
      return;
    }
    if (!this.connected) {
      if (cmd.connect) this.handleConnect(id, cmd.connect.token);
      else this.disconnect(Disconnects.badRequest); // Centrifugo: first command must be connect
      return;
    }
    if (cmd.subscribe) {
      this.subscriptions.subscribe(id, cmd.subscribe);
    } else if (cmd.unsubscribe) {
      this.handleUnsubscribe(id, cmd.unsubscribe.channel);
    } else if (cmd.history) {
      this.handleHistory(id, cmd.history).catch((err) => {
        this.ctx.logger.error({ err, client: this.info.id }, 'history failed');
        this.replyError(id, Errors.internal);
      });
    } else if (cmd.connect) {
      this.disconnect(Disconnects.badRequest); // connect twice
    } else if (cmd.publish) {
      this.replyError(id, Errors.permissionDenied); // clients never publish on an exchange
    } else {
      const method = Object.keys(cmd).find((k) => k !== 'id');
      this.replyError(id, method && NOT_AVAILABLE.has(method) ? Errors.notAvailable : Errors.methodNotFound);
    }
  }

  /**
   * A connect without a token is accepted at once. With one, the commands that follow wait for its check: valid →
   * connected, then they run in order; expired → error 109 (the client renews the token and connects again);
   * anything else → 3500 invalid token. The token's expiry does not end the connection later: a market-data token
   * grants no more than the public channels, and an access token only authorizes subscribes, each of which then
   * lives by its own session.
   */
  private handleConnect(id: number, token: unknown): void {
    const check = this.ctx.checkConnectToken;
    if (!check || token === undefined || token === '') {
      this.acceptConnect(id);
      return;
    }
    if (typeof token !== 'string') {
      this.disconnect(Disconnects.badRequest);
      return;
    }
    this.connecting = [];
    check(token).then((verdict) => {
      const queued = this.connecting ?? [];
      this.connecting = null;
      if (this.isClosed) return;
      if (verdict === 'expired') this.replyError(id, Errors.tokenExpired);
      else if (verdict !== 'valid') this.disconnect(Disconnects.invalidToken);
      else {
        this.info.connectToken = token;
        this.acceptConnect(id);
        for (const cmd of queued) if (!this.isClosed) this.handle(cmd);
      }
    }, (err: unknown) => {
      this.connecting = null;
      this.ctx.logger.error({ err, client: this.info.id }, 'connect token check failed');
      this.disconnect(Disconnects.serverError);
    });
  }

  private acceptConnect(id: number): void {
    this.connected = true;
    clearTimeout(this.connectTimer);
    const s = this.ctx.settings;
    this.enqueueString(
      encodeReply(id, 'connect', {
        client: this.info.id,
        version: s.version,
        // Seconds, as the protocol says; the client drops the connection after
        // ping + maxServerPingDelay (10 s by default) without data from us.
        ping: Math.max(1, Math.round(s.pingIntervalMs / 1000)),
        pong: true,
      }),
    );
  }

  private handleUnsubscribe(id: number, channel: string): void {
    this.subscriptions.unsubscribe(channel);
    this.enqueueString(encodeReply(id, 'unsubscribe', {}));
  }

  /** See ConnectionSubscriptions.endSession. */
  endSession(sessionId: string): number {
    return this.isClosed ? 0 : this.subscriptions.endSession(sessionId);
  }

  private async handleHistory(id: number, req: HistoryRequest): Promise<void> {
    const policy = typeof req.channel === 'string' ? this.ctx.historyFor(req.channel) : null;
    // History is readable only with a live subscription (authorized, subscribe answered): its authorization
    // covers it. A subscribe still in progress is not one.
    const sub = policy ? this.subscriptions.liveSubscription(req.channel) : undefined;
    if (!sub) {
      this.replyError(id, policy ? Errors.permissionDenied : Errors.notAvailable);
      return;
    }
    const since = req.since ? { offset: Number(req.since.offset ?? 0), epoch: req.since.epoch ?? '' } : undefined;
    const limit = Math.min(Number(req.limit ?? 0), this.ctx.settings.maxRecoveredPublications);
    const h = await this.ctx.broker.history(req.channel, { since, limit, reverse: req.reverse === true });
    if (this.isClosed) return;
    // A position in another stream (the epoch changed) is no position in this one: 112, as Centrifugo answers.
    if (since && since.epoch !== '' && since.epoch !== h.epoch) {
      this.replyError(id, Errors.unrecoverablePosition);
      return;
    }
    // Ended meanwhile (unsubscribe, session ended): its authorization no longer covers the answer.
    if (this.subscriptions.liveSubscription(req.channel) !== sub) {
      this.replyError(id, Errors.permissionDenied);
      return;
    }
    const pubs = h.publications.map((p) => ({ data: p.data, offset: p.offset }));
    this.enqueueString(encodeReply(id, 'history', { publications: pubs, offset: h.offset, epoch: h.epoch }));
  }

  replyError(id: number, error: ProtocolError): void {
    this.enqueueString(encodeErrorReply(id, error));
  }
}
