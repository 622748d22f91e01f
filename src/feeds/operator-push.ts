/**
 * Operator push: index prices set by hand (admin HTTP route, operator CLI). Always available, whatever the
 * automatic feed is; with the random walk running the walk continues from the pushed price.
 */
import type { Units } from '../domain/fixed.js';
import { fitPrice, type FeedInstrument } from './feed-instrument.js';
import type { PriceSink } from './ports.js';

export class OperatorPush {
  constructor(private readonly instruments: () => FeedInstrument[], private readonly sink: PriceSink) {}

  /** Validates and submits; throws RangeError for an unknown instrument or a price outside its bounds. */
  async push(instrument: string, price: Units): Promise<Units> {
    const inst = this.instruments().find((i) => i.id === instrument);
    if (!inst) throw new RangeError(`Unknown instrument ${instrument}`);
    if (!Number.isSafeInteger(price) || price < inst.minPrice || price > inst.maxPrice) {
      throw new RangeError(`Index price must be within the instrument's price bounds`);
    }
    const fitted = fitPrice(BigInt(price), inst);
    await this.sink(instrument, fitted);
    return fitted;
  }
}
