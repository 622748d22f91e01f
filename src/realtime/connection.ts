// One client connection: parses command frames, answers them, and owns the outgoing queue.
// Messages queued until its turn in the server's flush pass leave as one newline-delimited frame.
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { WebSocket, type RawData } from 'ws';
import type { Broker, HistoryPolicy } from './broker.js';
import { Disconnects, Errors, UnsubscribeCode, type Disconnect, type ProtocolError } from './codes.js';
import type { Hub } from './hub.js';
import {
  PING,
  encodeDisconnectPush,
  encodeErrorReply,
  encodeReply,
  encodeUnsubscribePush,
  parseFrame,
  type Command,
  type HistoryRequest,
  type SubscribeRequest,
} from './protocol.js';
import type { FrameBuilder } from './frame-builder.js';
import { resolveStream } from './recovery.js';
import { ChannelSubscription, type SubscriptionOwner } from './subscription.js';
import type { Authorize, ClientInfo, HistoryPolicyFor, Logger } from './types.js';

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
  historyFor: HistoryPolicyFor;
  logger: Logger;
  counters: { messagesSent: number; framesSent: number; bytesSent: number; slowDisconnects: number };
  frames: FrameBuilder;
  scheduleFlush(conn: Connection): void;
  closed(conn: Connection): void;
}

// Commands this server knows but does not offer: a clear error instead of 104.
const NOT_AVAILABLE = new Set(['refresh', 'sub_refresh', 'presence', 'presence_stats']);

export class Connection implements SubscriptionOwner {
  readonly info: ClientInfo;
  private connected = false;
  private isClosed = false;
  private readonly subs = new Map<string, ChannelSubscription>();
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
    ws.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    ws.on('close', () => this.cleanup());
    ws.on('error', (err) => ctx.logger.debug({ err, client: this.info.id }, 'websocket error'));
    // A socket that never sends connect holds resources for nothing.
    this.connectTimer = setTimeout(() => this.disconnect(Disconnects.stale), ctx.settings.connectTimeoutMs);
    this.connectTimer.unref();
  }

  get isConnected(): boolean {
    return this.connected && !this.isClosed;
  }

  get subscriptionCount(): number {
    return this.subs.size;
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
    if (this.isClosed) return;
    this.isClosed = true;
    clearTimeout(this.connectTimer);
    for (const sub of this.subs.values()) this.dropSubscription(sub);
    this.subs.clear();
    this.pending = [];
    this.pendingBytes = 0;
    this.ctx.closed(this);
  }

  // ---- incoming ----

  private onMessage(data: RawData, isBinary: boolean): void {
    if (this.isClosed) return;
    // Any data from the client proves it alive, not only the pong itself.
    this.pingSentAt = 0;
    let commands: Command[];
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
      this.handle(cmd);
    }
  }

  private handle(cmd: Command): void {
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
      if (cmd.connect) this.handleConnect(id);
      else this.disconnect(Disconnects.badRequest); // Centrifugo: first command must be connect
      return;
    }
    if (cmd.subscribe) {
      const channel = cmd.subscribe.channel;
      this.handleSubscribe(id, cmd.subscribe).catch((err) => {
        this.ctx.logger.error({ err, client: this.info.id, channel }, 'subscribe failed');
        // Release the reservation; internal is temporary, so the client retries.
        const sub = this.subs.get(channel);
        if (sub && !sub.isStarted) {
          this.subs.delete(channel);
          this.dropSubscription(sub);
        }
        this.replyError(id, Errors.internal);
      });
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

  private handleConnect(id: number): void {
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

  private async handleSubscribe(id: number, req: SubscribeRequest): Promise<void> {
    const channel = req.channel;
    if (typeof channel !== 'string' || channel === '' || channel.length > 255) {
      this.replyError(id, Errors.badRequest);
      return;
    }
    if (this.subs.has(channel)) {
      this.replyError(id, Errors.alreadySubscribed);
      return;
    }
    if (this.subs.size >= this.ctx.settings.maxSubscriptionsPerConnection) {
      this.replyError(id, { code: 106, message: 'limit exceeded' });
      return;
    }
    const policy: HistoryPolicy | null = this.ctx.historyFor(channel);
    // Reserve the channel now: a second subscribe in the same frame gets 105, and an
    // unsubscribe meanwhile cancels this one (sub.active = false).
    const sub = new ChannelSubscription(channel, this, policy !== null);
    this.subs.set(channel, sub);

    const auth = await this.ctx.authorize(channel, req.data, this.info);
    if (!sub.active || this.isClosed) return;
    if (!auth.allowed) {
      this.subs.delete(channel);
      sub.stop();
      const error: ProtocolError = { code: auth.code, message: auth.message };
      if (auth.temporary) error.temporary = true;
      this.replyError(id, error);
      return;
    }

    // Join the fan-out before reading the stream position: publications racing the
    // history read are held in the subscription and de-duplicated by offset.
    await this.ctx.hub.add(channel, sub);
    const stream = await resolveStream(this.ctx.broker, req, policy, this.ctx.settings.maxRecoveredPublications);
    if (!sub.active || this.isClosed) return;
    if ('error' in stream) {
      this.subs.delete(channel);
      this.dropSubscription(sub);
      this.replyError(id, stream.error);
      return;
    }
    this.enqueueString(encodeReply(id, 'subscribe', stream.result));
    sub.start(stream.position);
    if (auth.expiresAt !== undefined) this.armExpiry(sub, auth.expiresAt);
  }

  /** When the authorization lapses the client is told to resubscribe (2501): it sends its
   *  subscribe again with fresh data (getData) and recovers what it missed meanwhile. */
  private armExpiry(sub: ChannelSubscription, expiresAt: number): void {
    const delay = Math.max(0, expiresAt - Date.now());
    sub.expiryTimer = setTimeout(() => this.endSubscription(sub.channel, UnsubscribeCode.expired, 'subscription expired'), delay);
    sub.expiryTimer.unref();
  }

  streamLost(channel: string): void {
    // 2500 "insufficient state": the client resubscribes, recovery fails, the app reloads.
    this.endSubscription(channel, 2500, 'insufficient state');
  }

  /** Server-side unsubscribe with a push telling the client why. */
  endSubscription(channel: string, code: number, reason: string): void {
    const sub = this.subs.get(channel);
    if (!sub || this.isClosed) return;
    this.subs.delete(channel);
    this.dropSubscription(sub);
    this.enqueueString(encodeUnsubscribePush(channel, code, reason));
  }

  private handleUnsubscribe(id: number, channel: string): void {
    const sub = this.subs.get(channel);
    if (sub) {
      this.subs.delete(channel);
      this.dropSubscription(sub);
    }
    this.enqueueString(encodeReply(id, 'unsubscribe', {}));
  }

  private async handleHistory(id: number, req: HistoryRequest): Promise<void> {
    const policy = typeof req.channel === 'string' ? this.ctx.historyFor(req.channel) : null;
    // History is readable only with a live subscription: its authorization covers it.
    if (!policy || !this.subs.has(req.channel)) {
      this.replyError(id, policy ? Errors.permissionDenied : Errors.notAvailable);
      return;
    }
    const since = req.since ? { offset: Number(req.since.offset ?? 0), epoch: req.since.epoch ?? '' } : undefined;
    const limit = Math.min(Number(req.limit ?? 0), this.ctx.settings.maxRecoveredPublications);
    const h = await this.ctx.broker.history(req.channel, { since, limit, reverse: req.reverse === true });
    if (this.isClosed) return;
    const pubs = h.publications.map((p) => ({ data: p.data, offset: p.offset }));
    this.enqueueString(encodeReply(id, 'history', { publications: pubs, offset: h.offset, epoch: h.epoch }));
  }

  private dropSubscription(sub: ChannelSubscription): void {
    sub.stop();
    this.ctx.hub.remove(sub.channel, sub);
  }

  private replyError(id: number, error: ProtocolError): void {
    this.enqueueString(encodeErrorReply(id, error));
  }
}
