/**
 * Demo market makers: system accounts that keep a two-sided book around each instrument's mark (or index)
 * price and now and then cross the spread so trades happen. They use the same command path as users: every
 * action is a sequencer command (`order.cancelAll`, `order.placeBatch`, an IOC `order.place`), so it is
 * journaled, replayed, checked by the engine's margin rules and published like any user's order.
 *
 * A round, per bot and instrument: cancel the bot's orders, place `levels` bids and asks at
 * reference × (1 ∓ (spread/2 + i × step)), skewed against the bot's inventory; then, with probability
 * `aggressiveness`, send one IOC order through the best opposite price (sized to reduce inventory when
 * the bot holds any). Self-match prevention stops a bot from trading with itself.
 */
import pino from 'pino';
import type { CommandInput, PlaceOrderInput, Submit } from '../engine/commands.js';
import { parseUnits, type Units } from '../domain/fixed.js';
import type { InstrumentConfig } from '../domain/instrument.js';
import { orderIdPrefix } from '../domain/order-id.js';
import type { ExchangeEngine } from '../engine/api.js';
import { MAX_BATCH_CREATE } from '../engine/engine.js';
import { mulberry32 } from './seeded-random.js';

export interface MarketMakerSettings {
  /** Full quoted spread around the reference price, basis points. */
  spreadBps: number;
  /** Price levels per side. */
  levels: number;
  /** Distance between levels, basis points. */
  levelStepBps: number;
  /** Target notional per quoted level, USDT (decimal string). */
  orderNotional: string;
  /** Probability (0..1) per bot, instrument and round of one crossing IOC order. */
  aggressiveness: number;
  /** Leverage of the bots' orders. */
  leverage: number;
  /** Inventory (position notional, USDT) at which quotes are skewed by a full half-spread. */
  maxInventory: string;
}

export const DEFAULT_MARKET_MAKER_SETTINGS: MarketMakerSettings = {
  spreadBps: 10,
  levels: 5,
  levelStepBps: 5,
  orderNotional: '5000',
  aggressiveness: 0.3,
  leverage: 10,
  maxInventory: '100000',
};

export interface MarketMakerDeps {
  engine: ExchangeEngine;
  submit: Submit;
  /** Wall clock (ms) for order-id dates. */
  clock: () => number;
  /** Uniform [0, 1); seed it for reproducible runs. Default Math.random. */
  random?: () => number;
  logger?: pino.Logger;
}

const SCALE = 100_000_000;


interface Rules {
  tick: Units;
  lot: Units;
  minQty: Units;
  maxQty: Units;
  minPrice: Units;
  maxPrice: Units;
}

function rulesOf(c: InstrumentConfig): Rules {
  return {
    tick: parseUnits(c.priceIncrement), lot: parseUnits(c.quantityIncrement), minQty: parseUnits(c.minQuantity),
    maxQty: parseUnits(c.maxQuantity), minPrice: parseUnits(c.minPrice), maxPrice: parseUnits(c.maxPrice),
  };
}

const floorTo = (v: number, step: number) => Math.floor(v / step) * step;
const ceilTo = (v: number, step: number) => Math.ceil(v / step) * step;

/** Outcome counters (for logs and tests). */
export interface MarketMakerCounters {
  rounds: number;
  commands: number;
  /** Commands the engine refused (reply.ok = false). */
  refused: number;
  /** Orders recorded as REJECTED or failed inside a batch (e.g. not enough margin). */
  rejectedOrders: number;
  crossingOrders: number;
}

export class MarketMakerFleet {
  readonly counters: MarketMakerCounters = { rounds: 0, commands: 0, refused: 0, rejectedOrders: 0, crossingOrders: 0 };
  private readonly random: () => number;
  private readonly log: pino.Logger;
  private readonly orderNotional: number;
  private readonly maxInventory: number;
  /** Order ids: day prefix + per-process salt + counter, unique without coordination. */
  private readonly salt: string;
  private counter = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly deps: MarketMakerDeps,
    private readonly settings: MarketMakerSettings,
    /** Engine user ids (exchangeIds) of the bots. */
    readonly userIds: readonly number[],
  ) {
    this.random = deps.random ?? Math.random;
    this.log = deps.logger ?? pino({ level: 'silent' });
    this.orderNotional = Number(parseUnits(settings.orderNotional));
    this.maxInventory = Number(parseUnits(settings.maxInventory));
    this.salt = Math.floor(this.random() * 2 ** 40).toString(16).padStart(10, '0');
  }

  /** Runs a round every `intervalMs` until stop(). */
  start(intervalMs: number): void {
    const loop = () => {
      if (this.stopped) return;
      this.running = this.round().finally(() => {
        this.running = undefined;
        if (!this.stopped) this.timer = setTimeout(loop, intervalMs);
      });
    };
    this.timer = setTimeout(loop, 0);
  }

  /** Stops the loop and waits for the round in flight (call before stopping the sequencer). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** One round: every bot requotes every tradable instrument. Errors are logged, not thrown. */
  async round(): Promise<void> {
    this.counters.rounds++;
    const { engine } = this.deps;
    if (engine.matcher().state !== 'active') return;
    for (const config of engine.instrumentConfigs()) {
      const state = engine.instrumentState(config.id);
      if (!state || state.trading !== 'all') continue;
      const reference = state.markPrice ?? state.indexPrice;
      if (reference === null) continue;
      for (let k = 0; k < this.userIds.length; k++) {
        if (this.stopped) return;
        try {
          await this.quote(k, config, reference);
        } catch (err) {
          if (this.stopped) return;
          this.log.warn({ err, bot: this.userIds[k], instrument: config.id }, 'market maker round failed');
          return;
        }
      }
    }
  }

  private nextId(): string {
    this.counter++;
    return `${orderIdPrefix(this.deps.clock())}:${this.salt}${this.counter.toString(16).padStart(16, '0')}`;
  }

  private async send(cmd: CommandInput): Promise<boolean> {
    this.counters.commands++;
    const { reply } = await this.deps.submit(cmd);
    if (!reply.ok) {
      this.counters.refused++;
      this.log.debug({ kind: cmd.kind, error: reply.error }, 'market maker command refused');
      return false;
    }
    if (reply.batch) this.counters.rejectedOrders += reply.batch.filter((b) => !b.success).length;
    if (reply.order?.status === 'REJECTED') this.counters.rejectedOrders++;
    return true;
  }

  private async quote(k: number, config: InstrumentConfig, reference: Units): Promise<void> {
    const userId = this.userIds[k];
    const s = this.settings;
    const r = rulesOf(config);
    const position = this.deps.engine.positions(userId).find((p) => p.instrument === config.id);
    const signedQty = position ? (position.side === 'BUY' ? position.quantity : -position.quantity) : 0;
    // Inventory in [-1, 1]; quotes shift against it (a long bot quotes lower, so it sells more and buys less).
    const inventory = Math.max(-1, Math.min(1, (signedQty / SCALE) * reference / this.maxInventory));
    // Bots layer: bot k quotes a little wider than bot k-1.
    const half = (s.spreadBps / 2) * (1 + 0.25 * k);
    const skew = -inventory * half * 0.9;
    const smp = { smp: true, smpId: `mm-${userId}` };
    const size = (price: number): number => {
      const target = (this.orderNotional * (0.5 + this.random())) / (price / SCALE);
      return Math.min(r.maxQty, Math.max(r.minQty, floorTo(target, r.lot)));
    };

    const orders: PlaceOrderInput[] = [];
    const levels = Math.min(s.levels, Math.floor(MAX_BATCH_CREATE / 2));
    for (let i = 0; i < levels; i++) {
      const offset = half + i * s.levelStepBps;
      const bid = floorTo(reference * (1 - (offset - skew) / 10_000), r.tick);
      const ask = ceilTo(reference * (1 + (offset + skew) / 10_000), r.tick);
      if (bid >= r.minPrice && bid < ask) {
        orders.push({ id: this.nextId(), instrument: config.id, side: 'BUY', type: 'LIMIT', timeInForce: 'GTC', leverage: s.leverage, quantity: size(bid), limitPrice: bid, postOnly: false, smp });
      }
      if (ask <= r.maxPrice && ask > bid) {
        orders.push({ id: this.nextId(), instrument: config.id, side: 'SELL', type: 'LIMIT', timeInForce: 'GTC', leverage: s.leverage, quantity: size(ask), limitPrice: ask, postOnly: false, smp });
      }
    }
    await this.send({ kind: 'order.cancelAll', userId, instrument: config.id });
    if (orders.length > 0) await this.send({ kind: 'order.placeBatch', userId, instrument: config.id, orders });

    if (this.random() < s.aggressiveness) {
      const book = this.deps.engine.depth(config.id, 1, 0);
      // Reduce inventory when holding some; otherwise a coin flip.
      const buy = inventory > 0.1 ? false : inventory < -0.1 ? true : this.random() < 0.5;
      const best = buy ? book?.asks[0]?.price : book?.bids[book.bids.length - 1]?.price;
      if (best === undefined) return;
      const price = buy ? ceilTo(best * 1.0005, r.tick) : floorTo(best * 0.9995, r.tick);
      const quantity = Math.min(r.maxQty, Math.max(r.minQty, floorTo((this.orderNotional * 0.3 * (0.5 + this.random())) / (price / SCALE), r.lot)));
      this.counters.crossingOrders++;
      await this.send({
        kind: 'order.place', userId,
        order: { id: this.nextId(), instrument: config.id, side: buy ? 'BUY' : 'SELL', type: 'LIMIT', timeInForce: 'IOC', leverage: s.leverage, quantity, limitPrice: price, smp },
      });
    }
  }
}
