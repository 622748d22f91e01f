/** What a feed knows of an instrument, and how it fits a price to the instrument's rules. */
import { parseUnits, type Units } from '../domain/fixed.js';
import type { InstrumentConfig } from '../domain/instrument.js';

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
