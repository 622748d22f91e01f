// One connection's channel subscriptions and their life: reserved while the subscribe is authorized and its
// stream position read, live once authorized and answered, ended by unsubscribe, expiry, a lost stream or
// the end of the login session behind them. Only a live subscription is ever served (publications, history):
// reservations sit in a map of their own, and one method alone moves a subscription into the live map.
import type { ClientInfo, HistoryPolicy } from './ports.js';
import { Errors, UnsubscribeCode, type ProtocolError } from './codes.js';
import type { ConnectionContext } from './connection.js';
import { encodeReply, encodeUnsubscribePush, type SubscribeRequest } from './protocol.js';
import { resolveStream, type StreamPart } from './recovery.js';
import { ChannelSubscription, type SubscriptionOwner } from './subscription.js';

/** setTimeout's longest delay (a signed 32-bit ms count); a longer one would fire at once. */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** What the subscriptions need from their connection. */
export interface SubscriptionsHost {
  readonly info: ClientInfo;
  readonly isClosed: boolean;
  enqueue(frame: Buffer): void;
  replyError(id: number, error: ProtocolError): void;
}

/** A subscribe in progress: reserved so a second one for the channel gets 105, but served by nothing. */
interface Reservation {
  /** Id of the subscribe command, for its reply. */
  id: number;
  sub: ChannelSubscription;
}

export class ConnectionSubscriptions implements SubscriptionOwner {
  /** Authorized subscriptions whose subscribe reply went out. */
  private readonly live = new Map<string, ChannelSubscription>();
  /** Subscribes still authorizing or reading their stream position, by channel. Never in `live`. */
  private readonly reserved = new Map<string, Reservation>();

  constructor(
    private readonly host: SubscriptionsHost,
    private readonly ctx: ConnectionContext,
  ) {}

  /** The live subscription to the channel, if any: what every per-channel command (history…) must require. */
  liveSubscription(channel: string): ChannelSubscription | undefined {
    return this.live.get(channel);
  }

  enqueue(frame: Buffer): void {
    this.host.enqueue(frame);
  }

  private send(msg: string): void {
    this.host.enqueue(Buffer.from(msg));
  }

  subscribe(id: number, req: SubscribeRequest): void {
    const channel = req.channel;
    if (typeof channel !== 'string' || channel === '' || channel.length > 255) {
      this.host.replyError(id, Errors.badRequest);
      return;
    }
    if (this.live.has(channel) || this.reserved.has(channel)) {
      this.host.replyError(id, Errors.alreadySubscribed);
      return;
    }
    if (this.live.size + this.reserved.size >= this.ctx.settings.maxSubscriptionsPerConnection) {
      this.host.replyError(id, { code: 106, message: 'limit exceeded' });
      return;
    }
    const policy: HistoryPolicy | null = this.ctx.historyFor(channel);
    // An unsubscribe meanwhile cancels the reservation.
    const sub = new ChannelSubscription(channel, this, policy !== null);
    this.reserved.set(channel, { id, sub });
    this.authorizeAndStart(id, req, sub, policy).catch((err) => {
      this.ctx.logger.error({ err, client: this.host.info.id, channel }, 'subscribe failed');
      // Internal is temporary: the client retries.
      this.refuse(sub, Errors.internal);
    });
  }

  private async authorizeAndStart(id: number, req: SubscribeRequest, sub: ChannelSubscription, policy: HistoryPolicy | null): Promise<void> {
    const auth = await this.ctx.authorize(sub.channel, req.data, this.host.info);
    if (!auth.allowed) {
      const error: ProtocolError = { code: auth.code, message: auth.message };
      if (auth.temporary) error.temporary = true;
      this.refuse(sub, error);
      return;
    }
    if (auth.sessionId !== undefined) {
      // The session may have ended while its token was being verified.
      if (this.ctx.sessionEnded(auth.sessionId)) {
        this.refuse(sub, Errors.sessionEnded);
        return;
      }
      sub.sessionId = auth.sessionId;
    }
    if (!this.isReserved(sub)) return;

    // Join the fan-out before reading the stream position: publications racing the
    // history read are held in the subscription and de-duplicated by offset.
    await this.ctx.hub.add(sub.channel, sub);
    const stream = await resolveStream(this.ctx.broker, req, policy, this.ctx.settings.maxRecoveredPublications);
    if (!this.isReserved(sub)) return;
    if ('error' in stream) {
      this.refuse(sub, stream.error);
      return;
    }
    this.goLive(id, sub, stream, auth.expiresAt);
  }

  /** The one place a subscription enters `live`: authorized, stream resolved, reply queued. */
  private goLive(id: number, sub: ChannelSubscription, stream: StreamPart, expiresAt: number | undefined): void {
    this.send(encodeReply(id, 'subscribe', stream.result));
    // A slow-client disconnect on that reply already dropped it with the other reservations.
    if (this.host.isClosed) return;
    this.reserved.delete(sub.channel);
    this.live.set(sub.channel, sub);
    sub.start(stream.position);
    if (expiresAt !== undefined && sub.active) this.armExpiry(sub, expiresAt);
  }

  /** Still reserved for this subscribe (not unsubscribed, refused or closed meanwhile). */
  private isReserved(sub: ChannelSubscription): boolean {
    return !this.host.isClosed && this.reserved.get(sub.channel)?.sub === sub;
  }

  /** Ends a subscribe in progress with an error reply; nothing if it was cancelled meanwhile. */
  private refuse(sub: ChannelSubscription, error: ProtocolError): void {
    const r = this.reserved.get(sub.channel);
    if (this.host.isClosed || r?.sub !== sub) return;
    this.reserved.delete(sub.channel);
    this.drop(sub);
    this.host.replyError(r.id, error);
  }

  /** The client's unsubscribe: ends a live subscription or cancels one in progress. */
  unsubscribe(channel: string): void {
    const sub = this.live.get(channel) ?? this.reserved.get(channel)?.sub;
    if (!sub) return;
    this.live.delete(channel);
    this.reserved.delete(channel);
    this.drop(sub);
  }

  /**
   * Ends every subscription authorized with this login session: live ones with a terminal unsubscribe push
   * (2000: the client does not resubscribe with the same data), subscribes in progress with 103. Returns how many.
   */
  endSession(sessionId: string): number {
    let ended = 0;
    for (const sub of [...this.live.values()]) {
      if (sub.sessionId !== sessionId) continue;
      this.end(sub.channel, UnsubscribeCode.server, 'session ended');
      ended++;
    }
    for (const { sub } of [...this.reserved.values()]) {
      if (sub.sessionId !== sessionId) continue;
      this.refuse(sub, Errors.sessionEnded);
      ended++;
    }
    return ended;
  }

  /** When the authorization lapses the client is told to resubscribe (2501): it sends its
   *  subscribe again with fresh data (getData) and recovers what it missed meanwhile. */
  private armExpiry(sub: ChannelSubscription, expiresAt: number): void {
    const delay = Math.max(0, expiresAt - Date.now());
    // A session lives for weeks, past what one timer can wait: wait in steps (stop() clears the current one).
    sub.expiryTimer =
      delay > MAX_TIMER_DELAY_MS
        ? setTimeout(() => this.armExpiry(sub, expiresAt), MAX_TIMER_DELAY_MS)
        : setTimeout(() => this.end(sub.channel, UnsubscribeCode.expired, 'subscription expired'), delay);
    sub.expiryTimer.unref();
  }

  streamLost(channel: string): void {
    // 2500 "insufficient state": the client resubscribes, recovery fails, the app reloads.
    this.end(channel, 2500, 'insufficient state');
  }

  /** Server-side unsubscribe of a live subscription, with a push telling the client why. */
  private end(channel: string, code: number, reason: string): void {
    const sub = this.live.get(channel);
    if (!sub || this.host.isClosed) return;
    this.live.delete(channel);
    this.drop(sub);
    this.send(encodeUnsubscribePush(channel, code, reason));
  }

  /** The connection closed: everything leaves the fan-out. */
  dropAll(): void {
    for (const sub of this.live.values()) this.drop(sub);
    for (const { sub } of this.reserved.values()) this.drop(sub);
    this.live.clear();
    this.reserved.clear();
  }

  private drop(sub: ChannelSubscription): void {
    sub.stop();
    this.ctx.hub.remove(sub.channel, sub);
  }
}
