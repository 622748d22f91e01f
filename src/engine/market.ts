/** Per-instrument engine state: rules, book, prices, open interest and untriggered stop orders. */
import { mulDivHalfUp, type Units } from '../domain/fixed.js';
import type { TradingState } from '../domain/enums.js';
import type { Account } from './account.js';
import type { InstrumentRules } from './instrument-rules.js';
import { OrderBook } from './order-book.js';
import { StopOrders } from './stop-orders.js';
import type { DepthView, InstrumentStateView } from './records.js';

export class Market {
  readonly book = new OrderBook();
  trading: TradingState;
  indexPrice: Units | null = null;
  markPrice: Units | null = null;
  lastPrice: Units | null = null;
  /** Σ long sizes and Σ short sizes (Units); equal whenever no command is half-applied. */
  longInterest: Units = 0;
  shortInterest: Units = 0;
  /** Accounts holding a position here (derived from the accounts, not snapshotted): who a tick or funding concerns. */
  readonly holders = new Set<Account>();
  /** STOP_LIMIT orders waiting for their trigger, in arrival order and by stop price. */
  readonly stops = new StopOrders();
  /** Funding: Σ premium-index samples (1e-8 fractions) and their count since the last settlement. */
  premiumSum = 0n;
  premiumSamples = 0;
  /** Last settled funding rate (1e-8 fraction, signed) and its time (0 = never settled). */
  fundingRate = 0n;
  fundingRateAt = 0;
  /** Time of the last book change (strictly increasing, the depth `t`). */
  bookT = 0;
  updatedAt: number;
  /** Listed in the engine's changed books / changed instruments of the command being applied (not snapshotted). */
  bookTouched = false;
  stateTouched = false;

  constructor(public rules: InstrumentRules, ts: number) {
    this.trading = rules.config.trading;
    this.updatedAt = ts;
  }

  get id(): string {
    return this.rules.id;
  }

  /** Price used to value positions: mark, else last trade, else none (PnL 0). */
  get valuationPrice(): Units | null {
    return this.markPrice ?? this.lastPrice;
  }

  /**
   * Mark price = index + premium, premium = (mid of best bid/ask) − index clamped to ±markPriceLimit × index,
   * rounded to the price increment. Without a two-sided book the premium is 0 (mark = index).
   */
  computeMark(index: Units): Units {
    const bid = this.book.bestBid();
    const ask = this.book.bestAsk();
    let mark = index;
    if (bid !== undefined && ask !== undefined) {
      const sum = bid + ask;
      const mid = (sum - (sum % 2)) / 2; // integer halving: no fractional double
      const cap = Number(mulDivHalfUp(BigInt(index), BigInt(this.rules.markPriceLimit), 100_000_000n));
      let premium = mid - index;
      if (premium > cap) premium = cap;
      if (premium < -cap) premium = -cap;
      mark = index + premium;
    }
    const inc = this.rules.priceIncrement;
    if (inc > 0) {
      const r = mark % inc;
      mark = mark - r + (2 * r >= inc ? inc : 0);
    }
    return mark > 0 ? mark : index;
  }

  stateView(): InstrumentStateView {
    return {
      id: this.id, lastPrice: this.lastPrice, markPrice: this.markPrice, indexPrice: this.indexPrice,
      openInterest: this.longInterest, trading: this.trading, updatedAt: this.updatedAt,
      fundingRate: this.fundingRate, fundingRateAt: this.fundingRateAt === 0 ? null : this.fundingRateAt,
    };
  }

  depth(maxLevel: number, grouping: Units): DepthView {
    const asks = this.book.asks.depth(maxLevel, grouping);
    const bids = this.book.bids.depth(maxLevel, grouping).reverse();
    return { instrument: this.id, t: this.bookT, asks, bids };
  }
}
