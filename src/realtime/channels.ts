/**
 * Maps the engine's event batches onto the public real-time channels (`{env}:{name}`, docs/api.md) and
 * publishes them through a ChannelPublisher (the real-time server). Who may subscribe: channel-policy.ts.
 *
 * Per-user channels (`{id}` = exchangeId): user, funding, transfer-update, position, order, orderFills,
 * order-fee, tpsl. Public: heartbeat, info, instruments, coin-price, funding-rate, recent-trade-{instrument},
 * trade-{instrument}, orderBook-{instrument}-{0.1|1|10|50|100|best}. Order books are coalesced (latest
 * state, at most one publication per channel per interval) and built from `engine.depth` when sent.
 * Comparison fields strictly increase per entity as clients key them (they drop anything not newer): info
 * across snapshots and changes, trades per instrument, positions per user and instrument (StrictTimes).
 */
import { parseUnits } from '../domain/fixed.js';
import type { EngineQueries } from '../engine/api.js';
import type { EngineEvent } from '../engine/records.js';
import {
  coinsFromInstruments, iso, toAccountEvent, toFundingRateEvent, toCoin, toDepthEvent, toFundingEvent, toInstrumentLive, toMatcherEvent, toOrder,
  toOrderFeeEvent, toOrderFill, toPosition, toRecentTrade, toTpSl, toTradeEvent, toTransferEvent, type InstrumentStats,
} from '../records/index.js';
import { BOOK_CHANNEL_LEVELS, BOOK_SUFFIXES } from './channel-policy.js';
import { CoalescingPublisher } from './coalescer.js';
import { Heartbeat } from './heartbeat.js';
import type { ChannelPublisher } from './ports.js';

/**
 * Per-key clock for comparison fields that must strictly increase per entity as the public client keys the
 * entity, where the engine's own times can repeat: the trades of an instrument (the fills of one command share
 * its time; the client keeps the last trade time per instrument) and a user's position on an instrument (a
 * position closed and a new one opened in the same millisecond; the client keeps positions by instrument).
 * A repeated or earlier time is published 1 ms after the previous one of the same key.
 */
class StrictTimes {
  private readonly last = new Map<string, number>();
  private limit: number;

  constructor(private readonly now: () => number, private readonly maxEntries = 100_000) {
    this.limit = maxEntries;
  }

  next(key: string, at: number): number {
    const prev = this.last.get(key);
    const t = prev !== undefined && at <= prev ? prev + 1 : at;
    this.last.set(key, t);
    if (this.last.size > this.limit) this.prune();
    return t;
  }

  /** Drops keys quiet for a minute: engine times follow the clock, so a new event is later than those anyway. */
  private prune(): void {
    const horizon = this.now() - 60_000;
    for (const [k, t] of this.last) if (t < horizon) this.last.delete(k);
    this.limit = Math.max(this.maxEntries, this.last.size * 2);
  }
}

export interface ChannelsOptions {
  /** Channel prefix, e.g. `futures-perp-dev`. */
  env: string;
  engine: EngineQueries;
  /**
   * Where publications go: the real-time server (or a fake in tests). Its hasSubscribers lets channels without
   * history that nobody listens to skip building their data (a depth snapshot per book change is the costly part).
   */
  publisher: ChannelPublisher;
  bookIntervalMs?: number;
  heartbeatMs?: number;
  now?: () => number;
  onError?: (err: unknown, channel: string) => void;
  /** Rolling 24 h statistics for the instruments channel (high, low, volumes; synchronous). Default: none (zeros). */
  instrumentStats?: (instrument: string) => InstrumentStats | undefined;
}

export interface BatchLike {
  events: readonly EngineEvent[];
}

export class ExchangeChannels {
  readonly env: string;
  private readonly engine: EngineQueries;
  private readonly publisher: ChannelPublisher;
  private readonly books: CoalescingPublisher;
  private readonly heartbeat: Heartbeat;
  private readonly infoIntervalMs: number;
  private infoTimer: NodeJS.Timeout | null = null;
  /** updatedAt (ms) of the last info publication: snapshots and changes share one strictly increasing clock. */
  private infoAt = 0;
  /** Trade createdAt per instrument, position updatedAt per user and instrument (see StrictTimes). */
  private readonly tradeTimes: StrictTimes;
  private readonly positionTimes: StrictTimes;
  /** Book time (t) of the last publication per order-book channel. */
  private readonly bookSentT = new Map<string, number>();
  private readonly now: () => number;
  private readonly onError: (err: unknown, channel: string) => void;
  private readonly instrumentStats: (instrument: string) => InstrumentStats | undefined;

  constructor(opts: ChannelsOptions) {
    this.env = opts.env;
    this.engine = opts.engine;
    this.publisher = opts.publisher;
    this.now = opts.now ?? Date.now;
    this.onError = opts.onError ?? (() => {});
    this.instrumentStats = opts.instrumentStats ?? (() => undefined);
    this.books = new CoalescingPublisher((ch, data) => this.send(ch, data), {
      intervalMs: opts.bookIntervalMs ?? 50,
      onError: this.onError,
    });
    this.heartbeat = new Heartbeat((ch, data) => this.send(ch, data), this.channel('heartbeat'), opts.heartbeatMs ?? 5000, this.now);
    this.infoIntervalMs = opts.heartbeatMs ?? 5000;
    this.tradeTimes = new StrictTimes(this.now);
    this.positionTimes = new StrictTimes(this.now);
  }

  channel(name: string): string {
    return `${this.env}:${name}`;
  }

  /**
   * Starts the heartbeat and the matcher snapshots: `{env}:info` carries "snapshots of matcher state", so the
   * current state is published every heartbeat period, not only when it changes. A client that subscribes (and
   * drops anything not newer than the moment it subscribed, as the public client does) learns the state within
   * one period instead of never.
   */
  start(): void {
    this.heartbeat.start();
    if (this.infoTimer) return;
    this.infoTimer = setInterval(() => {
      try {
        this.publishInfo(this.engine.matcher().state, this.now());
      } catch (err) {
        this.onError(err, this.channel('info'));
      }
    }, this.infoIntervalMs);
    this.infoTimer.unref();
  }

  /** Sends pending order books, stops the heartbeat and the matcher snapshots. */
  stop(): void {
    this.heartbeat.stop();
    if (this.infoTimer) clearInterval(this.infoTimer);
    this.infoTimer = null;
    this.books.flush();
    this.books.close();
  }

  /** Event-bus subscriber: one batch per command, in seq order. */
  readonly onBatch = (batch: BatchLike): void => {
    for (const ev of batch.events) {
      try {
        this.route(ev);
      } catch (err) {
        this.onError(err, ev.type);
      }
    }
  };

  /** One info publication; its updatedAt is strictly later than the previous one's (clients drop the rest). */
  private publishInfo(state: string, at: number): void {
    const t = at > this.infoAt ? at : this.infoAt + 1;
    this.infoAt = t;
    this.send(this.channel('info'), toMatcherEvent({ state, updatedAt: t }));
  }

  private send(channel: string, data: unknown): void {
    try {
      const r = this.publisher.publish(channel, data);
      if (r instanceof Promise) r.catch((err: unknown) => this.onError(err, channel));
    } catch (err) {
      this.onError(err, channel);
    }
  }

  private route(ev: EngineEvent): void {
    switch (ev.type) {
      case 'order':
        return this.send(this.channel(`order-${ev.order.userId}`), toOrder(ev.order));
      case 'fill':
        return this.send(this.channel(`orderFills-${ev.fill.userId}`), toOrderFill(ev.fill));
      case 'orderFee':
        return this.send(this.channel(`order-fee-${ev.fee.userId}`), toOrderFeeEvent(ev.fee));
      case 'position': {
        const p = ev.position;
        const rec = toPosition(p);
        const t = this.positionTimes.next(`${p.userId}:${p.instrument}`, p.updatedAt);
        if (t !== p.updatedAt) rec.updatedAt = iso(t);
        return this.send(this.channel(`position-${p.userId}`), rec);
      }
      case 'funding':
        return this.send(this.channel(`funding-${ev.funding.userId}`), toFundingEvent(ev.funding));
      case 'transfer':
        return this.send(this.channel(`transfer-update-${ev.transfer.userId}`), toTransferEvent(ev.transfer));
      case 'tpsl':
        return this.send(this.channel(`tpsl-${ev.tpsl.userId}`), toTpSl(ev.tpsl));
      case 'account':
        return this.send(this.channel(`user-${ev.userId}`), toAccountEvent(ev.userId, ev.marginCall, ev.updatedAt));
      case 'trade': {
        const t = this.tradeTimes.next(ev.trade.instrument, ev.trade.createdAt);
        const view = t === ev.trade.createdAt ? ev.trade : { ...ev.trade, createdAt: t };
        const recent = this.channel(`recent-trade-${view.instrument}`);
        if (this.publisher.hasSubscribers(recent)) this.send(recent, toRecentTrade(view));
        const trade = this.channel(`trade-${view.instrument}`);
        if (this.publisher.hasSubscribers(trade)) this.send(trade, toTradeEvent(view));
        return;
      }
      case 'book':
        return this.scheduleBooks(ev.instrument);
      case 'instrument': {
        // No history on this channel: without subscribers there is nothing to build (nor statistics to fold).
        const channel = this.channel('instruments');
        if (!this.publisher.hasSubscribers(channel)) return;
        const config = this.engine.instrumentConfig(ev.instrument.id);
        if (!config) return;
        return this.send(channel, toInstrumentLive(config, ev.instrument, this.instrumentStats(ev.instrument.id)));
      }
      case 'matcher':
        return this.publishInfo(ev.matcher.state, ev.matcher.updatedAt);
      case 'fundingRate':
        return this.send(this.channel('funding-rate'), toFundingRateEvent(ev.instrument, ev.rate, ev.createdAt));
      case 'price': {
        const config = this.engine.instrumentConfig(ev.instrument);
        if (!config) return;
        const coin = coinsFromInstruments([config]).find((c) => c.symbol === config.from);
        if (coin) this.send(this.channel('coin-price'), toCoin(coin, ev.indexPrice));
        return;
      }
    }
  }

  private scheduleBooks(instrument: string): void {
    for (const suffix of BOOK_SUFFIXES) {
      const channel = this.channel(`orderBook-${instrument}-${suffix}`);
      // A later subscriber gets the state of the next change, as it would have with a publication now.
      if (!this.publisher.hasSubscribers(channel)) continue;
      const best = suffix === 'best';
      const grouping = best ? 0 : parseUnits(suffix);
      this.books.schedule(channel, () => {
        const d = this.engine.depth(instrument, best ? 1 : BOOK_CHANNEL_LEVELS, grouping);
        if (!d) return { instrument, orderBook: { t: this.now(), asks: [], bids: [] } };
        // The book is read when sent, so a publication can already show a later change than the event that
        // scheduled it; the next one would repeat the same book and t, which clients drop: not sent.
        if (this.bookSentT.get(channel) === d.t) return undefined;
        this.bookSentT.set(channel, d.t);
        return toDepthEvent(d, best);
      });
    }
  }
}
