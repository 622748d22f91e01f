/** InstrumentConfig (decimal strings, as configured and served) parsed once into engine units. */
import { parseMoney, parseUnits, rateFloorUnits, type Money, type Units } from '../domain/fixed.js';
import type { InstrumentConfig } from '../domain/instrument.js';

export interface MaintenanceTierRule {
  from: Money;
  /** rate as a fraction in 1e-8 units */
  rate: bigint;
  deviance: Money;
}

export interface InstrumentRules {
  config: InstrumentConfig;
  id: string;
  priceIncrement: Units;
  quantityIncrement: Units;
  minQuantity: Units;
  maxQuantity: Units;
  minVolume: Money;
  minPrice: Units;
  maxPrice: Units;
  maxLeverage: number;
  /** Sorted by maxLeverage ascending: at leverage L the notional cap is the largest limit of the tiers with maxLeverage ≥ L. */
  leverageTiers: Array<{ maxLeverage: number; notionalLimit: Money }>;
  /** Sorted by `from` ascending. */
  maintenanceTiers: MaintenanceTierRule[];
  /** The same tiers as doubles for the margin sweep's fast path; null when a value is too large for it. */
  maintenanceTiersUnits: Array<{ from: number; rate: number; deviance: number }> | null;
  makerFee: Units;
  takerFee: Units;
  liquidationFee: Units;
  slippageLimit: Units;
  fatFinger: Units;
  markPriceLimit: Units;
  /** Index/impact lot (see funding.ts): quantity the premium index prices. */
  lotSize: Units;
}

export function compileInstrument(config: InstrumentConfig): InstrumentRules {
  const rules: Omit<InstrumentRules, 'maintenanceTiersUnits'> = {
    config,
    id: config.id,
    priceIncrement: parseUnits(config.priceIncrement),
    quantityIncrement: parseUnits(config.quantityIncrement),
    minQuantity: parseUnits(config.minQuantity),
    maxQuantity: parseUnits(config.maxQuantity),
    minVolume: parseMoney(config.minVolume),
    minPrice: parseUnits(config.minPrice),
    maxPrice: parseUnits(config.maxPrice),
    maxLeverage: config.maxLeverage,
    leverageTiers: config.leverageLimit
      .map((t) => ({ maxLeverage: t.maxLeverage, notionalLimit: parseMoney(t.notionalLimit) }))
      .sort((a, b) => a.maxLeverage - b.maxLeverage),
    maintenanceTiers: config.maintenanceMargin
      .map((t) => ({ from: parseMoney(t.notionalFrom), rate: parseMoney(t.rate), deviance: parseMoney(t.deviance) }))
      .sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0)),
    makerFee: parseUnits(config.makerFee),
    takerFee: parseUnits(config.takerFee),
    liquidationFee: parseUnits(config.liquidationFee),
    slippageLimit: parseUnits(config.slippageLimit),
    fatFinger: parseUnits(config.fatFingerPriceProtection),
    markPriceLimit: parseUnits(config.markPriceLimit),
    lotSize: parseUnits(config.lotSize),
  };
  const small = (v: bigint) => v >= 0n && v <= 2n ** 50n;
  const fits = rules.maintenanceTiers.every((t) => small(t.from) && small(t.deviance) && t.rate >= 0n && t.rate < 67_108_864n);
  return {
    ...rules,
    maintenanceTiersUnits: fits ? rules.maintenanceTiers.map((t) => ({ from: Number(t.from), rate: Number(t.rate), deviance: Number(t.deviance) })) : null,
  };
}

/** Largest position notional allowed at `leverage` (null = no cap configured). */
export function notionalCap(rules: InstrumentRules, leverage: number): Money | null {
  // A tier allows up to `maxLeverage` while the notional stays within `notionalLimit`, so at `leverage` the cap
  // is the largest limit among the tiers that still allow that leverage (300x → 50k, 100x → 250k, 20x → 10M).
  let cap: Money | null = null;
  for (const t of rules.leverageTiers) {
    if (t.maxLeverage >= leverage && (cap === null || t.notionalLimit > cap)) cap = t.notionalLimit;
  }
  if (cap !== null) return cap;
  return rules.leverageTiers.length ? 0n : null;
}

/** Maintenance margin of a position of `notional` (money units): notional × rate − deviance of its tier. */
export function maintenanceMargin(rules: InstrumentRules, notional: Money): Money {
  let tier = rules.maintenanceTiers[0];
  if (tier === undefined) return 0n;
  for (const t of rules.maintenanceTiers) if (notional >= t.from) tier = t;
  const mm = (notional * tier.rate) / 100_000_000n - tier.deviance;
  return mm > 0n ? mm : 0n;
}

/** maintenanceMargin in doubles for a notional of at most 2^50; −1 when it cannot be computed exactly that way. */
export function maintenanceMarginUnits(rules: InstrumentRules, notional: number): number {
  const tiers = rules.maintenanceTiersUnits;
  if (tiers === null) return -1;
  let tier = tiers[0];
  if (tier === undefined) return 0;
  for (let i = 1; i < tiers.length; i++) if (notional >= tiers[i].from) tier = tiers[i];
  const scaled = rateFloorUnits(notional, tier.rate);
  if (scaled < 0) return -1;
  const mm = scaled - tier.deviance;
  return mm > 0 ? mm : 0;
}

/** Price/quantity are multiples of their increments and inside the instrument's bounds. */
export function isMultiple(value: Units, increment: Units): boolean {
  return increment <= 0 || value % increment === 0;
}
