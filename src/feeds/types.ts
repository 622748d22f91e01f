/**
 * Index price sources. A feed produces index prices (Units, per 1 base coin) and hands them to a sink that
 * submits `price.tick` commands through the sequencer, so every index change is journaled and replay
 * reproduces it (the engine derives the mark price and runs triggers, funding samples and risk checks).
 */
import { parseUnits, type Units } from '../domain/fixed.js';
import type { InstrumentConfig } from '../domain/instrument.js';

/** Submits one index price (the app's sink sends a `price.tick` through the sequencer). */
export type PriceSink = (instrument: string, indexPrice: Units) => Promise<void>;

export interface IndexFeed {
  readonly name: string;
  start(): void;
  /** Stops producing; resolves once an in-flight submission finished. */
  stop(): Promise<void>;
}

/** What a feed needs to know about an instrument to produce valid prices. */
export interface FeedInstrument {
  id: string;
  priceIncrement: Units;
  minPrice: Units;
  maxPrice: Units;
}

/** Rounds to the increment (half up) and clamps into the instrument's price bounds. */
export function fitPrice(price: bigint, inst: FeedInstrument): Units {
  const inc = BigInt(inst.priceIncrement);
  let p = inc > 0n ? ((price + inc / 2n) / inc) * inc : price;
  if (p < BigInt(inst.minPrice)) p = BigInt(inst.minPrice);
  if (p > BigInt(inst.maxPrice)) p = BigInt(inst.maxPrice);
  return Number(p);
}

/** The feed's view of an instrument configuration (prices parsed exactly). */
export function feedInstrumentOf(config: InstrumentConfig): FeedInstrument {
  return {
    id: config.id, priceIncrement: parseUnits(config.priceIncrement), minPrice: parseUnits(config.minPrice), maxPrice: parseUnits(config.maxPrice),
  };
}
