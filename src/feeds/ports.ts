/**
 * Index price sources. A feed produces index prices (Units, per 1 base coin) and hands them to a sink that
 * submits `price.tick` commands through the sequencer, so every index change is journaled and replay
 * reproduces it (the engine derives the mark price and runs triggers, funding samples and risk checks).
 */
import type { Units } from '../domain/fixed.js';

/** Submits one index price (the app's sink sends a `price.tick` through the sequencer). */
export type PriceSink = (instrument: string, indexPrice: Units) => Promise<void>;

export interface IndexFeed {
  readonly name: string;
  start(): void;
  /** Stops producing; resolves once an in-flight submission finished. */
  stop(): Promise<void>;
}
