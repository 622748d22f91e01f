/**
 * Gateway-side checks that need only static instrument configuration: positive amounts after 8-dp
 * rounding, increments, min/max bounds, leverage. Everything needing live state is the engine's job.
 */
import { FixedPointError, parseMoney, parseUnits, type Units } from '../domain/fixed.js';
import type { InstrumentConfig } from '../domain/instrument.js';
import type { EngineQueries } from '../engine/api.js';
import { ApiError, badRequest, notFound } from './errors.js';

export interface Rules {
  config: InstrumentConfig;
  priceIncrement: Units;
  quantityIncrement: Units;
  minQuantity: Units;
  maxQuantity: Units;
  minPrice: Units;
  maxPrice: Units;
  maxLeverage: number;
}

const cache = new WeakMap<InstrumentConfig, Rules>();

export function rulesOf(config: InstrumentConfig): Rules {
  let r = cache.get(config);
  if (!r) {
    r = {
      config,
      priceIncrement: parseUnits(config.priceIncrement),
      quantityIncrement: parseUnits(config.quantityIncrement),
      minQuantity: parseUnits(config.minQuantity),
      maxQuantity: parseUnits(config.maxQuantity),
      minPrice: parseUnits(config.minPrice),
      maxPrice: parseUnits(config.maxPrice),
      maxLeverage: Math.min(300, config.maxLeverage),
    };
    cache.set(config, r);
  }
  return r;
}

/** Instrument named in the path: unknown → 404. */
export function pathInstrument(engine: EngineQueries, id: string): Rules {
  const c = engine.instrumentConfig(id);
  if (!c) throw notFound('INSTRUMENT_NOT_FOUND', `Unknown instrument ${id}`);
  return rulesOf(c);
}

/** Instrument named in a body: unknown → 400. */
export function bodyInstrument(engine: EngineQueries, id: string): Rules {
  const c = engine.instrumentConfig(id);
  if (!c) throw badRequest('INVALID_INSTRUMENT', `Unknown instrument ${id}`);
  return rulesOf(c);
}

/** A body that repeats the path's instrument (public clients post the signed struct whole) must agree with it. */
export function sameInstrument(path: string, body: string | undefined): void {
  if (body !== undefined && body !== path) throw badRequest('INVALID_INSTRUMENT', `Body instrument ${body} does not match the path instrument ${path}`);
}

function codeFor(label: string): string {
  return `INVALID_${label.replace(/[A-Z]/g, (m) => '_' + m).toUpperCase()}`;
}

/** Parses an amount (half-up to 8 dp) and refuses values that round to ≤ 0 (or < 0 when zero is allowed). */
export function amount(label: string, v: string | number, opts: { allowZero?: boolean; mode?: 'halfUp' | 'down' } = {}): Units {
  let u: Units;
  try {
    u = parseUnits(v, opts.mode ?? 'halfUp');
  } catch (e) {
    if (e instanceof FixedPointError) throw badRequest(codeFor(label), `Invalid ${label}: ${e.message}`);
    throw e;
  }
  if (u < 0 || (u === 0 && !opts.allowZero)) {
    throw badRequest(codeFor(label), `Invalid ${label}: must be greater than ${opts.allowZero ? 'or equal to ' : ''}0`);
  }
  return u;
}

/** Money-sized amount (withdrawals) as a bigint count of 1e-8. */
export function money(label: string, v: string | number, mode: 'halfUp' | 'down'): bigint {
  let m: bigint;
  try {
    m = parseMoney(v, mode);
  } catch (e) {
    if (e instanceof FixedPointError) throw badRequest(codeFor(label), `Invalid ${label}: ${e.message}`);
    throw e;
  }
  if (m <= 0n) throw badRequest(codeFor(label), `Invalid ${label}: must be greater than 0`);
  return m;
}

export function quantity(r: Rules, v: string | number, label = 'quantity', opts: { allowZero?: boolean; skipMin?: boolean } = {}): Units {
  const u = amount(label, v, { allowZero: opts.allowZero });
  if (u === 0) return u;
  const c = r.config;
  if (u % r.quantityIncrement !== 0) throw badRequest(codeFor(label), `Invalid ${label}: must be a multiple of ${c.quantityIncrement}`);
  if (!opts.skipMin && u < r.minQuantity) throw badRequest(codeFor(label), `Invalid ${label}: minimum is ${c.minQuantity}`);
  if (u > r.maxQuantity) throw badRequest(codeFor(label), `Invalid ${label}: maximum is ${c.maxQuantity}`);
  return u;
}

export function price(r: Rules, v: string | number, label = 'price'): Units {
  const u = amount(label, v);
  const c = r.config;
  if (u % r.priceIncrement !== 0) throw badRequest(codeFor(label), `Invalid ${label}: must be a multiple of ${c.priceIncrement}`);
  if (u < r.minPrice) throw badRequest(codeFor(label), `Invalid ${label}: minimum is ${c.minPrice}`);
  if (u > r.maxPrice) throw badRequest(codeFor(label), `Invalid ${label}: maximum is ${c.maxPrice}`);
  return u;
}

export function leverage(r: Rules, v: number): number {
  if (!Number.isInteger(v) || v < 1 || v > r.maxLeverage) {
    throw badRequest('INVALID_LEVERAGE', `Invalid leverage: must be an integer from 1 to ${r.maxLeverage}`);
  }
  return v;
}

/** Message of an ApiError, for per-item batch failures. */
export function reasonOf(e: unknown): string {
  if (e instanceof ApiError) return e.message;
  throw e;
}
