/**
 * Order-create bodies: schemas, and their translation into a checked engine PlaceOrderInput plus the
 * EIP-712 payload the client must have signed. Shared by the single and the batch (mass-limit) routes.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ORDER_ID_V1_RE, isOrderIdDateAllowed, isSystemOrderIdSpace, orderIdPrefix } from '../domain/order-id.js';
import type { EngineQueries } from '../engine/api.js';
import type { PlaceOrderInput, TpSlInput } from '../engine/commands.js';
import { StringEnum } from '../records/common.js';
import * as A from './amounts.js';
import { badRequest } from './errors.js';
import { Body, ChainId, Decimal, Instrument, Leverage, OrderIdAny, OrderIdV2, PostOnly, SideSchema, Signature, Smp, TpSlInputSchema } from './schemas.js';
import {
  limitOrderMessageOfUnits, marketOrderMessage, positionCloseMessage, requireChainId, stopLimitOrderMessage, type SignedPayload,
} from './signatures.js';

const TpSlList = Type.Union([Type.Array(TpSlInputSchema, { maxItems: 10 }), Type.Null()]);

const limitFields = {
  instrument: Instrument,
  side: SideSchema,
  leverage: Type.Optional({ ...Leverage, default: 1 }),
  timeInForce: Type.Optional(StringEnum(['GTC', 'DAY', 'FOK', 'IOC'] as const, { default: 'GTC' })),
  quantity: Decimal,
  limitPrice: Decimal,
  postOnly: Type.Optional(PostOnly),
  signature: Signature,
  chainId: ChainId,
  smp: Type.Optional(Smp),
  id: OrderIdV2,
};
export const LimitOrderBody = Body({ ...limitFields, tpsl: Type.Optional(TpSlList) }, 'Limit order');
/** Mass-limit items: the limit body without tpsl. */
export const LimitOrderItemBody = Body(limitFields, 'Limit order (batch item)');
export const StopLimitOrderBody = Body({
  instrument: Instrument,
  side: SideSchema,
  leverage: Type.Optional({ ...Leverage, default: 1 }),
  quantity: Decimal,
  limitPrice: Decimal,
  stopPrice: Decimal,
  tpsl: Type.Optional(TpSlList),
  signature: Signature,
  chainId: ChainId,
  smp: Type.Optional(Smp),
  id: OrderIdV2,
}, 'Stop-limit order');
export const MarketOrderBody = Body({
  instrument: Instrument,
  side: SideSchema,
  leverage: Type.Optional({ ...Leverage, default: 1 }),
  cashQuantity: Decimal,
  timeInForce: Type.Optional(StringEnum(['IOC', 'FOK'] as const, { default: 'IOC' })),
  tpsl: Type.Optional(TpSlList),
  signature: Signature,
  chainId: ChainId,
  smp: Type.Optional(Smp),
  id: OrderIdV2,
}, 'Market order');
export const PositionCloseBody = Body({
  // The public signing client posts the whole signed struct, which includes the instrument.
  instrument: Type.Optional({ ...Instrument, description: 'optional; when sent, must equal the path instrument (it is signed)' }),
  quantity: Decimal,
  leverage: Leverage,
  signature: Signature,
  chainId: ChainId,
  smp: Type.Optional(Smp),
  id: OrderIdV2,
}, 'Position close (quantity 0 = the whole position)');

/**
 * The version-1 create routes (/api/order/…, /api/position/{instrument}/close) take the same signed bodies with
 * a version 1 (UUID) or version 2 id; see engineOrderId for how a UUID is kept.
 */
const V1_ID = { id: { ...OrderIdAny, description: 'version 1 (UUID) or version 2 order id; a UUID is kept as DDDDD:<its first 26 hex digits>' } };
export const LimitOrderBodyV1 = Body({ ...LimitOrderBody.properties, ...V1_ID }, 'Limit order (version 1 route)');
export const LimitOrderItemBodyV1 = Body({ ...LimitOrderItemBody.properties, ...V1_ID }, 'Limit order (version 1 batch item)');
export const StopLimitOrderBodyV1 = Body({ ...StopLimitOrderBody.properties, ...V1_ID }, 'Stop-limit order (version 1 route)');
export const MarketOrderBodyV1 = Body({ ...MarketOrderBody.properties, ...V1_ID }, 'Market order (version 1 route)');
export const PositionCloseBodyV1 = Body({ ...PositionCloseBody.properties, ...V1_ID }, 'Position close (version 1 route; quantity 0 = the whole position)');

export type LimitOrderBody = Static<typeof LimitOrderBody>;
export type StopLimitOrderBody = Static<typeof StopLimitOrderBody>;
export type MarketOrderBody = Static<typeof MarketOrderBody>;
export type PositionCloseBody = Static<typeof PositionCloseBody>;

export interface Prepared<T> {
  input: T;
  signed: SignedPayload;
}

export interface PrepareContext {
  engine: EngineQueries;
  chainId: string;
  now: number;
}

/**
 * The id the engine keeps for a client's id: a version 2 id as sent; a version 1 UUID as today's DDDDD: plus its
 * first 26 hex digits, the digits every route taking an order id reads from a UUID (domain/order-id.ts), so the
 * client later reaches the order by the UUID it sent. The signature stays over the id as sent.
 */
export function engineOrderId(id: string, now: number): string {
  if (!ORDER_ID_V1_RE.test(id)) return id;
  return `${orderIdPrefix(now)}:${id.replace(/-/g, '').slice(0, 26).toLowerCase()}`;
}

/** The checked engine id for a create body's `id`. */
function checkedId(clientId: string, now: number): string {
  const id = engineOrderId(clientId, now);
  if (!isOrderIdDateAllowed(id, now)) throw badRequest('INVALID_ORDER_ID', 'Invalid order ID date');
  if (isSystemOrderIdSpace(id)) {
    throw badRequest('INVALID_ORDER_ID', 'Invalid order id: ids whose hex part starts with ffffffffff are reserved for orders the exchange creates');
  }
  return id;
}

function tpslInputs(r: A.Rules, list: Static<typeof TpSlList> | undefined): TpSlInput[] | undefined {
  if (!list || list.length === 0) return undefined;
  return list.map((t) => ({
    type: t.type,
    side: t.side,
    quantity: A.quantity(r, t.quantity, 'quantity', { allowZero: true, skipMin: true }),
    price: A.price(r, t.price, 'price'),
  }));
}

/** The fields every new-order body carries. */
type NewOrderBody = Pick<MarketOrderBody, 'chainId' | 'id' | 'instrument' | 'side' | 'leverage' | 'smp'> & { tpsl?: Static<typeof TpSlList> };
/** What an order type adds to the common fields, checked against the instrument's rules. */
type OwnFields = Pick<PlaceOrderInput, 'quantity' | 'limitPrice' | 'stopPrice' | 'cashQuantity' | 'postOnly'>;

/**
 * A new order's engine input, checked in the order its errors are reported: chain, id, instrument, leverage,
 * the type's own fields (`own`), attached TpSl.
 */
function newOrderInput(ctx: PrepareContext, b: NewOrderBody, type: PlaceOrderInput['type'], timeInForce: PlaceOrderInput['timeInForce'], own: (r: A.Rules) => OwnFields): PlaceOrderInput {
  requireChainId(b.chainId, ctx.chainId);
  const id = checkedId(b.id, ctx.now);
  const r = A.bodyInstrument(ctx.engine, b.instrument);
  const leverage = A.leverage(r, b.leverage ?? 1);
  const input: PlaceOrderInput = { id, instrument: b.instrument, side: b.side, type, timeInForce, leverage, ...own(r), group: 'manually' };
  if (b.smp) input.smp = { smp: b.smp.smp, smpId: b.smp.smpId };
  const tpsl = tpslInputs(r, b.tpsl);
  if (tpsl) input.tpsl = tpsl;
  return input;
}

export function prepareLimit(ctx: PrepareContext, b: Static<typeof LimitOrderItemBody> & { tpsl?: Static<typeof TpSlList> }): Prepared<PlaceOrderInput> {
  const input = newOrderInput(ctx, b, 'LIMIT', b.timeInForce ?? 'GTC', (r) => ({
    quantity: A.quantity(r, b.quantity),
    limitPrice: A.price(r, b.limitPrice, 'limitPrice'),
    postOnly: b.postOnly === 'yes',
  }));
  const message = limitOrderMessageOfUnits(b, input.leverage, input.quantity as number, input.limitPrice as number, ctx.chainId);
  return { input, signed: { type: 'New limit order', chainId: ctx.chainId, message, signature: b.signature } };
}

export function prepareStopLimit(ctx: PrepareContext, b: StopLimitOrderBody): Prepared<PlaceOrderInput> {
  const input = newOrderInput(ctx, b, 'STOP_LIMIT', 'GTC', (r) => ({
    quantity: A.quantity(r, b.quantity),
    limitPrice: A.price(r, b.limitPrice, 'limitPrice'),
    stopPrice: A.price(r, b.stopPrice, 'stopPrice'),
  }));
  const message = stopLimitOrderMessage({ ...b, leverage: input.leverage }, ctx.chainId);
  return { input, signed: { type: 'New stop-limit order', chainId: ctx.chainId, message, signature: b.signature } };
}

export function prepareMarket(ctx: PrepareContext, b: MarketOrderBody): Prepared<PlaceOrderInput> {
  const timeInForce = b.timeInForce ?? 'IOC';
  const input = newOrderInput(ctx, b, 'MARKET', timeInForce, () => ({ cashQuantity: A.amount('cashQuantity', b.cashQuantity) }));
  const message = marketOrderMessage({ ...b, leverage: input.leverage, timeInForce }, ctx.chainId);
  return { input, signed: { type: 'New market order', chainId: ctx.chainId, message, signature: b.signature } };
}

export interface CloseInput {
  instrument: string;
  id: string;
  quantity: number;
  leverage: number;
}

export function prepareClose(ctx: PrepareContext, instrument: string, b: PositionCloseBody): Prepared<CloseInput> {
  requireChainId(b.chainId, ctx.chainId);
  const id = checkedId(b.id, ctx.now);
  A.sameInstrument(instrument, b.instrument);
  const r = A.pathInstrument(ctx.engine, instrument);
  const leverage = A.leverage(r, b.leverage);
  // Closing may leave dust below minQuantity, so only the increment and the maximum apply; 0 = all.
  const quantity = A.quantity(r, b.quantity, 'quantity', { allowZero: true, skipMin: true });
  return {
    input: { instrument, id, quantity, leverage },
    signed: { type: 'Position close order', chainId: ctx.chainId, message: positionCloseMessage({ id: b.id, instrument, leverage, quantity: b.quantity }, ctx.chainId), signature: b.signature },
  };
}
