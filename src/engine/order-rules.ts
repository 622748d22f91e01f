/**
 * Static checks of an order or TpSl against its instrument's rules: a refusal (nothing changes, the id stays
 * unused), or null when it may be placed. Trading-state and margin rules come later (order-entry.ts) and
 * reject the order instead.
 */
import { notionalExact, notionalFrom, type Money, type Units } from '../domain/fixed.js';
import { SIDES, TPSL_TYPES, type Side } from '../domain/enums.js';
import { dayNumber, isOrderIdV2, orderIdDay } from '../domain/order-id.js';
import type { PlaceOrderInput } from './commands.js';
import { isMultiple, type InstrumentRules } from './instrument-rules.js';
import type { Market } from './market.js';
import { fail, isPositiveUnits, validUser, type Draft } from './refusal.js';
import type { EngineState } from './state.js';

const LIMIT_TIFS: ReadonlySet<unknown> = new Set(['GTC', 'DAY', 'IOC', 'FOK']);
const STOP_TIFS: ReadonlySet<unknown> = new Set(['GTC', 'DAY']);

function checkQuantity(r: InstrumentRules, q: unknown, reduceOnly: boolean): Draft | null {
  if (!isPositiveUnits(q)) return fail(400, 'INVALID_QUANTITY', 'Quantity must be positive');
  if (!isMultiple(q, r.quantityIncrement)) return fail(400, 'INVALID_QUANTITY', `Quantity must be a multiple of ${r.config.quantityIncrement}`);
  if (q > r.maxQuantity) return fail(400, 'INVALID_QUANTITY', `Quantity must be at most ${r.config.maxQuantity}`);
  if (!reduceOnly && q < r.minQuantity) return fail(400, 'INVALID_QUANTITY', `Quantity must be at least ${r.config.minQuantity}`);
  return null;
}

function checkPrice(r: InstrumentRules, p: unknown, name: string): Draft | null {
  if (!isPositiveUnits(p) || !isMultiple(p, r.priceIncrement) || p < r.minPrice || p > r.maxPrice) {
    return fail(400, 'INVALID_PRICE', `Invalid price: ${name} must be a multiple of ${r.config.priceIncrement} from ${r.config.minPrice} to ${r.config.maxPrice}`);
  }
  return null;
}

/** A price on the instrument's grid and within its bounds. */
export function validPrice(r: InstrumentRules, p: unknown): p is number {
  return isPositiveUnits(p) && isMultiple(p, r.priceIncrement) && p >= r.minPrice && p <= r.maxPrice;
}

/** Rejection reason of an order over its leverage tier's notional cap. */
export function capRefusal(leverage: number): string {
  return `Position size exceeds the maximum for ${leverage}x leverage`;
}

/** quantity × price < min, without a bigint when the notional is a safe integer (number < bigint compares exactly). */
function notionalBelow(quantity: Units, price: Units, min: Money): boolean {
  const v = notionalExact(quantity, price);
  return v >= 0 ? v < min : notionalFrom(v, quantity, price) < min;
}

/** price ∉ [mark − band, mark + band], exactly (bigint: the sum may pass 2^53). */
export function outsideBand(price: Units, mark: Units, band: Money): boolean {
  return BigInt(price) > BigInt(mark) + band || BigInt(price) < BigInt(mark) - band;
}

export function validateTpSlInput(r: InstrumentRules, type: unknown, side: unknown, quantity: unknown, price: unknown): Draft | null {
  if (!TPSL_TYPES.includes(type as never)) return fail(400, 'INVALID_TPSL', 'TpSl type must be take-profit or stop-loss');
  if (!SIDES.includes(side as Side)) return fail(400, 'INVALID_TPSL', 'TpSl side must be BUY or SELL');
  if (!(quantity === 0 || isPositiveUnits(quantity)) || !isMultiple(quantity as number, r.quantityIncrement) || (quantity as number) > r.maxQuantity) {
    return fail(400, 'INVALID_TPSL', 'Invalid TpSl quantity');
  }
  if (!validPrice(r, price)) return fail(400, 'INVALID_TPSL', 'Invalid TpSl price');
  return null;
}

/** Static checks of an order input against its instrument at time `ts`: a refusal, or null when it may be placed. */
export function validateOrder(s: EngineState, ts: number, userId: number, input: PlaceOrderInput, m: Market | undefined): Draft | null {
  if (!validUser(userId)) return fail(400, 'INVALID_USER', 'Invalid user');
  if (!input || typeof input !== 'object') return fail(400, 'INVALID_ORDER', 'Invalid order');
  if (!m) return fail(404, 'INSTRUMENT_NOT_FOUND', `Unknown instrument ${String(input.instrument)}`);
  const r = m.rules;
  if (typeof input.id !== 'string' || !isOrderIdV2(input.id)) return fail(400, 'INVALID_ORDER_ID', 'Order id must match [0-9]{5}:[0-9A-Fa-f]{26}');
  const day = orderIdDay(input.id);
  const today = dayNumber(ts);
  if (day < today - 1 || day > today + 1) return fail(400, 'INVALID_ORDER_ID', 'Invalid order ID date');
  if (input.side !== 'BUY' && input.side !== 'SELL') return fail(400, 'INVALID_SIDE', 'Side must be BUY or SELL');
  if (!Number.isInteger(input.leverage) || input.leverage < 1 || input.leverage > r.maxLeverage) {
    return fail(400, 'INVALID_LEVERAGE', `Leverage must be an integer from 1 to ${r.maxLeverage}`);
  }
  const tif = input.timeInForce;
  const reduceOnly = input.reduceOnly === true;
  if (input.type === 'LIMIT' || input.type === 'STOP_LIMIT') {
    if (input.type === 'LIMIT' ? !LIMIT_TIFS.has(tif) : !STOP_TIFS.has(tif)) {
      return fail(400, 'INVALID_TIME_IN_FORCE', `Invalid timeInForce ${String(tif)} for ${input.type}`);
    }
    const bad = checkQuantity(r, input.quantity, reduceOnly) ?? checkPrice(r, input.limitPrice, 'limitPrice')
      ?? (input.type === 'STOP_LIMIT' ? checkPrice(r, input.stopPrice, 'stopPrice') : null);
    if (bad) return bad;
    if (!reduceOnly && notionalBelow(input.quantity!, input.limitPrice!, r.minVolume)) {
      return fail(400, 'INVALID_VOLUME', `Order volume must be at least ${r.config.minVolume}`);
    }
  } else if (input.type === 'MARKET') {
    if (tif !== 'IOC' && tif !== 'FOK') return fail(400, 'INVALID_TIME_IN_FORCE', 'Market orders are IOC or FOK');
    if (reduceOnly && input.cashQuantity === undefined) {
      const bad = checkQuantity(r, input.quantity, reduceOnly);
      if (bad) return bad;
    } else {
      if (!isPositiveUnits(input.cashQuantity)) return fail(400, 'INVALID_CASH_QUANTITY', 'cashQuantity must be positive');
      if (BigInt(input.cashQuantity) < r.minVolume) return fail(400, 'INVALID_VOLUME', `Order volume must be at least ${r.config.minVolume}`);
    }
  } else {
    return fail(400, 'INVALID_ORDER_TYPE', `Unsupported order type ${String(input.type)}`);
  }
  if (input.postOnly && input.type !== 'LIMIT') return fail(400, 'INVALID_POST_ONLY', 'postOnly applies to limit orders only');
  if (input.smp !== undefined && (typeof input.smp !== 'object' || typeof input.smp.smp !== 'boolean' || typeof input.smp.smpId !== 'string')) {
    return fail(400, 'INVALID_SMP', 'smp must be {smp: boolean, smpId: string}');
  }
  if (input.tpsl !== undefined) {
    if (!Array.isArray(input.tpsl) || input.tpsl.length > 10) return fail(400, 'INVALID_TPSL', 'tpsl must be an array of at most 10 items');
    for (const t of input.tpsl) {
      const bad = validateTpSlInput(r, t.type, t.side, t.quantity, t.price);
      if (bad) return bad;
      if (t.side === input.side) return fail(400, 'INVALID_TPSL', 'A TpSl must be on the side opposite to its order');
    }
  }
  if (s.orderIds.has(userId, input.id)) return fail(409, 'DUPLICATE_ORDER_ID', 'Order id already used');
  return null;
}
