/** Public market records: matcher info, coins, instruments, live instrument snapshots, depth. */
import { Type, type Static } from '@sinclair/typebox';
import { formatUnits, parseUnits, type Money, type Units } from '../domain/fixed.js';
import { MARKET_STATES, TRADING_STATES, VISIBILITY_STATES } from '../domain/enums.js';
import type { InstrumentConfig } from '../domain/instrument.js';
import type { DepthView, InstrumentStateView, MatcherView } from '../engine/records.js';
import { IsoTime, StringEnum, iso, num } from './common.js';

/** Config decimals are strings; the wire wants numbers. Parsed through fixed point, never parseFloat. */
function dec(s: string): number {
  return num(parseUnits(s));
}

export const MarketInfoRecord = Type.Object({
  state: Type.String({ description: 'matcher state; anything but `active` is a global halt' }),
  fees: Type.Object({ maker: Type.Number(), taker: Type.Number(), liquidation: Type.Number() }),
  updatedAt: Type.String({ description: 'ISO 8601 time of this snapshot of the state' }),
}, { description: 'Market info' });
export type MarketInfoRecord = Static<typeof MarketInfoRecord>;

export interface FeeSchedule { maker: string; taker: string; liquidation: string }

export function toMarketInfo(m: MatcherView, fees: FeeSchedule): MarketInfoRecord {
  return { state: m.state, fees: { maker: dec(fees.maker), taker: dec(fees.taker), liquidation: dec(fees.liquidation) }, updatedAt: iso(m.updatedAt) };
}

/** info channel payload: a snapshot of the matcher state (published periodically and on every change). */
export function toMatcherEvent(m: MatcherView): { state: string; updatedAt: string } {
  return { state: m.state, updatedAt: iso(m.updatedAt) };
}

/** A coin as configured (derived from the instrument list unless the operator configures coins). */
export interface CoinInfo {
  id: string;
  name: string;
  symbol: string;
  image: string;
  precision: number;
  showPrecision: number;
  createdAt: number;
}

const coinFields = {
  id: Type.String(),
  name: Type.String(),
  symbol: Type.String(),
  image: Type.String(),
  precision: Type.Integer(),
  showPrecision: Type.Integer(),
};
export const CoinRecord = Type.Object({ ...coinFields, price: Type.Number(), createdAt: IsoTime }, { description: 'Coin' });
export type CoinRecord = Static<typeof CoinRecord>;
export const CoinListRecord = Type.Object({ list: Type.Array(CoinRecord) });

export function toCoin(c: CoinInfo, price: Units | null): CoinRecord {
  return {
    id: c.id, name: c.name, symbol: c.symbol, image: c.image, precision: c.precision, showPrecision: c.showPrecision,
    price: price === null ? 0 : num(price), createdAt: iso(c.createdAt),
  };
}

function decimalsOf(s: string): number {
  const i = s.indexOf('.');
  return i < 0 ? 0 : s.length - i - 1;
}

/** One coin per distinct symbol of the instrument list; precision from the increments that quote it. */
export function coinsFromInstruments(configs: InstrumentConfig[]): CoinInfo[] {
  const coins = new Map<string, CoinInfo>();
  for (const c of configs) {
    const createdAt = Date.parse(c.startDate) || 0;
    const add = (symbol: string, showPrecision: number) => {
      if (!coins.has(symbol)) {
        coins.set(symbol, { id: symbol.toLowerCase(), name: symbol, symbol, image: '', precision: 8, showPrecision, createdAt });
      }
    };
    add(c.from, decimalsOf(c.quantityIncrement));
    add(c.to, decimalsOf(c.priceIncrement));
  }
  return [...coins.values()];
}

/**
 * Rolling 24 h statistics the engine does not keep (the read model folds them from the trades, minute buckets:
 * src/store/exchange-statistics.ts); zeros when unknown. The funding rate comes from the engine unless given.
 */
export interface InstrumentStats {
  high: Units;
  low: Units;
  /** The price 24 h ago (last trade before the window). */
  closePrice: Units;
  volume: Money;
  volumeBase: Units;
  /** Current funding rate, decimal fraction string. */
  fundingRate?: string;
  fundingRateCreatedAt?: number | null;
}

const CoinRef = Type.Object({ ...coinFields, createdAt: IsoTime });
const instrumentFields = {
  id: Type.String(),
  name: Type.String(),
  displayName: Type.String(),
  from: Type.Object({ ...coinFields, createdAt: IsoTime, avgLastPrice: Type.Number() }),
  to: CoinRef,
  maxLeverage: Type.Integer(),
  leverageLimit: Type.Record(Type.String(), Type.Number(), { description: 'maxLeverage → position notional limit' }),
  maintenanceMargin: Type.Record(Type.String(), Type.Object({ percent: Type.Number(), deviance: Type.Number() }), {
    description: 'notional threshold → { percent (rate × 100), deviance (maintenance amount) }',
  }),
  lotSize: Type.Number(),
  priceIncrement: Type.Number(),
  quantityIncrement: Type.Number(),
  multiplier: Type.Number(),
  minVolume: Type.Number(),
  minPrice: Type.Number(),
  maxPrice: Type.Number(),
  minQuantity: Type.Number(),
  maxQuantity: Type.Number(),
  slippageLimit: Type.Number(),
  lastPrice: Type.Number(),
  markPrice: Type.Number(),
  fatFingerPriceProtection: Type.Number(),
  markPriceLimit: Type.Number(),
  visibility: StringEnum(VISIBILITY_STATES),
  trading: StringEnum(TRADING_STATES),
  marketState: StringEnum(MARKET_STATES),
  updatedAt: IsoTime,
  startDate: IsoTime,
  isPopular: Type.Boolean(),
  newLabel: Type.Boolean(),
};
export const InstrumentRecord = Type.Object(instrumentFields, { description: 'Instrument' });
export type InstrumentRecord = Static<typeof InstrumentRecord>;

const metricsFields = {
  maxSlippage: Type.Number(),
  fundingRate: Type.Number(),
  fundingRateCreatedAt: Type.String({ description: 'ISO 8601 time of the last funding settlement (the instrument start date before the first)' }),
  openInterest: Type.Number(),
  low: Type.Number({ description: 'lowest trade price of the rolling 24 h (minute granularity); 0 without trades' }),
  high: Type.Number({ description: 'highest trade price of the rolling 24 h; 0 without trades' }),
  closePrice: Type.Number({ description: 'the price 24 h ago: last trade before the rolling window (else its first trade)' }),
  volume: Type.Number({ description: 'Σ quantity × price of the rolling 24 h, USDT' }),
  volumeBase: Type.Number({ description: 'Σ quantity of the rolling 24 h' }),
};
/** `fields=metrics` variant. */
export const InstrumentMetricsRecord = Type.Object({ ...instrumentFields, ...metricsFields }, { description: 'Instrument with metrics' });
export type InstrumentMetricsRecord = Static<typeof InstrumentMetricsRecord>;

function coinRef(symbol: string, coins: Map<string, CoinInfo>) {
  const c = coins.get(symbol) ?? { id: symbol.toLowerCase(), name: symbol, symbol, image: '', precision: 8, showPrecision: 8, createdAt: 0 };
  return { id: c.id, name: c.name, symbol: c.symbol, image: c.image, precision: c.precision, showPrecision: c.showPrecision, createdAt: iso(c.createdAt) };
}

export function toInstrument(c: InstrumentConfig, s: InstrumentStateView | undefined, coins: Map<string, CoinInfo>): InstrumentRecord {
  const leverageLimit: Record<string, number> = {};
  for (const t of c.leverageLimit) leverageLimit[String(t.maxLeverage)] = dec(t.notionalLimit);
  const maintenanceMargin: Record<string, { percent: number; deviance: number }> = {};
  for (const t of c.maintenanceMargin) {
    maintenanceMargin[t.notionalFrom] = { percent: num(parseUnits(t.rate) * 100), deviance: dec(t.deviance) };
  }
  const lastPrice = s?.lastPrice ?? null;
  return {
    id: c.id,
    name: c.name,
    displayName: c.displayName,
    from: { ...coinRef(c.from, coins), avgLastPrice: lastPrice === null ? 0 : num(lastPrice) },
    to: coinRef(c.to, coins),
    maxLeverage: c.maxLeverage,
    leverageLimit,
    maintenanceMargin,
    lotSize: dec(c.lotSize),
    priceIncrement: dec(c.priceIncrement),
    quantityIncrement: dec(c.quantityIncrement),
    multiplier: dec(c.multiplier),
    minVolume: dec(c.minVolume),
    minPrice: dec(c.minPrice),
    maxPrice: dec(c.maxPrice),
    minQuantity: dec(c.minQuantity),
    maxQuantity: dec(c.maxQuantity),
    slippageLimit: dec(c.slippageLimit),
    lastPrice: lastPrice === null ? 0 : num(lastPrice),
    markPrice: s?.markPrice == null ? 0 : num(s.markPrice),
    fatFingerPriceProtection: dec(c.fatFingerPriceProtection),
    markPriceLimit: dec(c.markPriceLimit),
    visibility: c.visibility,
    // The engine's live trading state wins over the static config (operator may restrict at runtime).
    trading: (s?.trading as InstrumentRecord['trading'] | undefined) ?? c.trading,
    marketState: c.marketState,
    updatedAt: iso(s?.updatedAt ?? (Date.parse(c.startDate) || 0)),
    startDate: c.startDate,
    isPopular: c.isPopular,
    newLabel: c.newLabel,
  };
}

export function toInstrumentMetrics(
  c: InstrumentConfig, s: InstrumentStateView | undefined, coins: Map<string, CoinInfo>, stats: InstrumentStats | undefined,
): InstrumentMetricsRecord {
  return {
    ...toInstrument(c, s, coins),
    maxSlippage: dec(c.slippageLimit),
    // The engine's last settled rate unless the read model supplies one.
    fundingRate: stats?.fundingRate !== undefined ? dec(stats.fundingRate) : num(s?.fundingRate ?? 0n),
    // Never null: clients read it as a time (the public one calls getTime() on it). Before the first settlement the
    // rate is 0 as of the instrument's start, earlier than any funding-rate publication.
    fundingRateCreatedAt: iso((stats?.fundingRateCreatedAt !== undefined ? stats.fundingRateCreatedAt : s?.fundingRateAt) ?? (Date.parse(c.startDate) || 0)),
    openInterest: s ? num(s.openInterest) : 0,
    low: stats ? num(stats.low) : 0,
    high: stats ? num(stats.high) : 0,
    closePrice: stats ? num(stats.closePrice) : 0,
    volume: stats ? num(stats.volume) : 0,
    volumeBase: stats ? num(stats.volumeBase) : 0,
  };
}

/** instruments channel payload: the instrument's live fields. */
export const InstrumentLiveRecord = Type.Object({
  id: Type.String(), name: Type.String(), displayName: Type.String(),
  lastPrice: Type.Number(), high: Type.Number(), low: Type.Number(), volume: Type.Number(), volumeBase: Type.Number(),
  closePrice: Type.Number(), markPrice: Type.Number(), openInterest: Type.Number(),
  minPrice: Type.Number(), maxPrice: Type.Number(), fatFingerPriceProtection: Type.Number(), markPriceLimit: Type.Number(),
  slippageLimit: Type.Number(),
  visibility: StringEnum(VISIBILITY_STATES), trading: StringEnum(TRADING_STATES), marketState: StringEnum(MARKET_STATES),
  updatedAt: IsoTime,
});
export type InstrumentLiveRecord = Static<typeof InstrumentLiveRecord>;

export function toInstrumentLive(c: InstrumentConfig, s: InstrumentStateView | undefined, stats: InstrumentStats | undefined): InstrumentLiveRecord {
  const m = toInstrumentMetrics(c, s, new Map(), stats);
  return {
    id: m.id, name: m.name, displayName: m.displayName, lastPrice: m.lastPrice, high: m.high, low: m.low, volume: m.volume,
    volumeBase: m.volumeBase, closePrice: m.closePrice, markPrice: m.markPrice, openInterest: m.openInterest,
    minPrice: m.minPrice, maxPrice: m.maxPrice, fatFingerPriceProtection: m.fatFingerPriceProtection,
    markPriceLimit: m.markPriceLimit, slippageLimit: m.slippageLimit, visibility: m.visibility, trading: m.trading,
    marketState: m.marketState, updatedAt: m.updatedAt,
  };
}

export const DepthLevelRecord = Type.Object({ price: Type.Number(), quantity: Type.Number() });
/** Depth: both sides ascending by price (best ask first, best bid last); t = book change time (ms). */
export const DepthRecord = Type.Object({
  t: Type.Number({ description: 'ms timestamp of the last book change' }),
  asks: Type.Array(DepthLevelRecord),
  bids: Type.Array(DepthLevelRecord),
}, { description: 'Depth' });
export type DepthRecord = Static<typeof DepthRecord>;

export function toDepth(d: DepthView, bestOnly = false): DepthRecord {
  const asks = bestOnly ? d.asks.slice(0, 1) : d.asks;
  const bids = bestOnly ? d.bids.slice(-1) : d.bids;
  return {
    t: d.t,
    asks: asks.map((l) => ({ price: num(l.price), quantity: num(l.quantity) })),
    bids: bids.map((l) => ({ price: num(l.price), quantity: num(l.quantity) })),
  };
}

/** orderBook-{instrument}-{round} / -best channel payload. */
export function toDepthEvent(d: DepthView, bestOnly = false): { instrument: string; orderBook: DepthRecord } {
  return { instrument: d.instrument, orderBook: toDepth(d, bestOnly) };
}

/** funding-rate channel payload: the rate of a settlement as a decimal fraction string, createdAt in ms. */
export const FundingRateEventRecord = Type.Object({ instrument: Type.String(), fundingRate: Type.String(), createdAt: Type.Number() });
export type FundingRateEventRecord = Static<typeof FundingRateEventRecord>;

export function toFundingRateEvent(instrument: string, rate: Money, createdAt: number): FundingRateEventRecord {
  return { instrument, fundingRate: formatUnits(rate), createdAt };
}
