import type { Units } from './fixed.js';
import type { MarketState, TradingState, Visibility } from './enums.js';

/** A position-notional band: up to `notionalUpTo` (money units, null = no cap) the rule applies. */
export interface LeverageTier {
  /** Highest leverage allowed while the position's notional is within `notionalLimit`. */
  maxLeverage: number;
  /** Position notional cap for that leverage, in whole collateral units (string decimal). */
  notionalLimit: string;
}

export interface MaintenanceTier {
  /** Notional threshold (decimal string of collateral); the tier applies to notional >= this. */
  notionalFrom: string;
  /** Maintenance margin rate, decimal fraction (e.g. "0.005"). */
  rate: string;
  /** Amount subtracted so tiers are continuous ("maintenance amount"), decimal string. */
  deviance: string;
}

/**
 * Static and slowly-changing instrument configuration. Decimal fields are strings (as configured and as
 * served); the engine works on the parsed `Units` copies in `InstrumentRules`.
 */
export interface InstrumentConfig {
  id: string;
  name: string;
  displayName: string;
  /** Base coin symbol (BTC) and quote/collateral coin symbol (USDT). */
  from: string;
  to: string;
  priceIncrement: string;
  quantityIncrement: string;
  /** Index-price lot: the quantity the index sources quote for (docs/engine-rules.md, "Prices and funding"). */
  lotSize: string;
  multiplier: string;
  minQuantity: string;
  maxQuantity: string;
  /** Minimum order notional, collateral units. */
  minVolume: string;
  minPrice: string;
  maxPrice: string;
  maxLeverage: number;
  leverageLimit: LeverageTier[];
  maintenanceMargin: MaintenanceTier[];
  makerFee: string;
  takerFee: string;
  liquidationFee: string;
  /** Max deviation of a market order's fill price from mark, fraction. */
  slippageLimit: string;
  /** Limit orders further than this fraction from mark are refused ("Invalid price"). */
  fatFingerPriceProtection: string;
  /** Max premium of mark over index, fraction. */
  markPriceLimit: string;
  trading: TradingState;
  visibility: Visibility;
  marketState: MarketState;
  startDate: string;
  isPopular: boolean;
  newLabel: boolean;
}

const btcTiers: MaintenanceTier[] = [
  { notionalFrom: '0', rate: '0.004', deviance: '0' },
  { notionalFrom: '50000', rate: '0.005', deviance: '50' },
  { notionalFrom: '250000', rate: '0.01', deviance: '1300' },
  { notionalFrom: '1000000', rate: '0.025', deviance: '16300' },
];

export const DEMO_INSTRUMENTS: InstrumentConfig[] = [
  {
    id: 'BTCUSDT', name: 'BTCUSDT', displayName: 'BTC/USDT Perpetual', from: 'BTC', to: 'USDT',
    priceIncrement: '0.1', quantityIncrement: '0.0001', lotSize: '0.001', multiplier: '1',
    minQuantity: '0.0001', maxQuantity: '1000', minVolume: '1', minPrice: '1', maxPrice: '10000000',
    maxLeverage: 300,
    leverageLimit: [
      { maxLeverage: 300, notionalLimit: '50000' },
      { maxLeverage: 100, notionalLimit: '250000' },
      { maxLeverage: 50, notionalLimit: '1000000' },
      { maxLeverage: 20, notionalLimit: '10000000' },
    ],
    maintenanceMargin: btcTiers,
    makerFee: '0.0002', takerFee: '0.0005', liquidationFee: '0.0075',
    slippageLimit: '0.05', fatFingerPriceProtection: '0.1', markPriceLimit: '0.005',
    trading: 'all', visibility: 'all', marketState: 'OPEN', startDate: '2025-07-24T00:00:00.000Z',
    isPopular: true, newLabel: false,
  },
  {
    id: 'ETHUSDT', name: 'ETHUSDT', displayName: 'ETH/USDT Perpetual', from: 'ETH', to: 'USDT',
    priceIncrement: '0.01', quantityIncrement: '0.001', lotSize: '0.01', multiplier: '1',
    minQuantity: '0.001', maxQuantity: '10000', minVolume: '1', minPrice: '0.01', maxPrice: '1000000',
    maxLeverage: 300,
    leverageLimit: [
      { maxLeverage: 300, notionalLimit: '25000' },
      { maxLeverage: 100, notionalLimit: '150000' },
      { maxLeverage: 50, notionalLimit: '800000' },
      { maxLeverage: 20, notionalLimit: '8000000' },
    ],
    maintenanceMargin: [
      { notionalFrom: '0', rate: '0.005', deviance: '0' },
      { notionalFrom: '25000', rate: '0.0065', deviance: '37.5' },
      { notionalFrom: '150000', rate: '0.01', deviance: '562.5' },
      { notionalFrom: '800000', rate: '0.025', deviance: '12562.5' },
    ],
    makerFee: '0.0002', takerFee: '0.0005', liquidationFee: '0.0075',
    slippageLimit: '0.05', fatFingerPriceProtection: '0.1', markPriceLimit: '0.005',
    trading: 'all', visibility: 'all', marketState: 'OPEN', startDate: '2025-07-24T00:00:00.000Z',
    isPopular: true, newLabel: false,
  },
];

/** Reference starting prices for the demo (also the simulated index's seed). */
export const DEMO_START_PRICES: Record<string, string> = { BTCUSDT: '100000', ETHUSDT: '3500' };
