/**
 * Operator market control under /api/admin: instruments (list, add/update), matcher state, an instrument's
 * trading state, and operator index-price pushes. Every change is a sequencer command like any other, so
 * it is journaled and replayed.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { MARKET_STATES, MATCHER_STATES, TRADING_STATES, VISIBILITY_STATES } from '../../domain/enums.js';
import type { InstrumentConfig } from '../../domain/instrument.js';
import { formatUnits, type Money, type Units } from '../../domain/fixed.js';
import type { InstrumentStateView } from '../../engine/records.js';
import { ErrorBody, Nullable, num, StringEnum } from '../../records/common.js';
import * as A from '../amounts.js';
import type { RouteContext } from '../context.js';
import { badRequest, notFound } from '../errors.js';
import { execute } from '../execute.js';
import { OPERATOR_SECURITY } from '../operator.js';
import { Body, Decimal, Instrument, InstrumentParams } from '../schemas.js';

const errors = { '4xx': ErrorBody };
const Dec = Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?$', maxLength: 40 });

/** The full instrument configuration (closed: an unknown field is a 400). */
export const InstrumentConfigBody = Body({
  id: Type.String({ pattern: '^[A-Z0-9_-]{2,32}$' }),
  name: Type.String({ minLength: 1, maxLength: 64 }),
  displayName: Type.String({ minLength: 1, maxLength: 128 }),
  from: Type.String({ minLength: 1, maxLength: 16 }),
  to: Type.String({ minLength: 1, maxLength: 16 }),
  priceIncrement: Dec,
  quantityIncrement: Dec,
  lotSize: Dec,
  multiplier: Dec,
  minQuantity: Dec,
  maxQuantity: Dec,
  minVolume: Dec,
  minPrice: Dec,
  maxPrice: Dec,
  maxLeverage: Type.Integer({ minimum: 1, maximum: 300 }),
  leverageLimit: Type.Array(Body({ maxLeverage: Type.Integer({ minimum: 1, maximum: 300 }), notionalLimit: Dec }), { minItems: 1, maxItems: 32 }),
  maintenanceMargin: Type.Array(Body({ notionalFrom: Dec, rate: Dec, deviance: Dec }), { minItems: 1, maxItems: 32 }),
  makerFee: Dec,
  takerFee: Dec,
  liquidationFee: Dec,
  slippageLimit: Dec,
  fatFingerPriceProtection: Dec,
  markPriceLimit: Dec,
  trading: StringEnum(TRADING_STATES),
  visibility: StringEnum(VISIBILITY_STATES),
  marketState: StringEnum(MARKET_STATES),
  startDate: Type.String({ maxLength: 40 }),
  isPopular: Type.Boolean(),
  newLabel: Type.Boolean(),
}, 'Instrument configuration');

const UpsertBody = Body({
  config: InstrumentConfigBody,
  /** Optional first index price, pushed right after the instrument is created. */
  indexPrice: Type.Optional(Decimal),
});
const MatcherBody = Body({ state: StringEnum(MATCHER_STATES) });
const TradingBody = Body({ trading: StringEnum(TRADING_STATES) });
const IndexPriceBody = Body({ instrument: Instrument, price: Decimal });
const Ok = Type.Object({ ok: Type.Boolean(), seq: Type.Optional(Type.Integer()) });
const IndexPriceReply = Type.Object({
  ok: Type.Boolean(), seq: Type.Integer(), instrument: Type.String(), indexPrice: Type.Number(), markPrice: Type.Number(),
});

const DecOut = Nullable(Type.String({ description: 'decimal' }));
const OperatorInstrument = Type.Object({
  config: InstrumentConfigBody,
  state: Nullable(Type.Object({
    id: Type.String(), trading: StringEnum(TRADING_STATES), lastPrice: DecOut, markPrice: DecOut, indexPrice: DecOut, openInterest: DecOut,
    fundingRate: DecOut, fundingRateAt: Nullable(Type.Number({ description: 'ms' })), updatedAt: Type.Number({ description: 'ms' }),
  })),
}, { description: 'An instrument configuration with its live state (null before the engine knows it)' });

/** Live instrument state with prices as decimal strings (engine values are 1e-8 integers and bigints). */
function stateForOperator(s: InstrumentStateView | undefined) {
  if (!s) return null;
  const dec = (v: Units | Money | null | undefined) => (v === null || v === undefined ? null : formatUnits(v));
  return {
    id: s.id, trading: s.trading, lastPrice: dec(s.lastPrice), markPrice: dec(s.markPrice), indexPrice: dec(s.indexPrice),
    openInterest: dec(s.openInterest), fundingRate: dec(s.fundingRate), fundingRateAt: s.fundingRateAt ?? null, updatedAt: s.updatedAt,
  };
}

export function adminMarketRoutes(ctx: RouteContext) {
  return async function plugin(app: FastifyInstance) {
    const tags = ['admin'];
    const security = OPERATOR_SECURITY;

    app.get('/api/admin/instruments', {
      schema: { tags, security, summary: 'Instrument configurations with live state', response: { 200: Type.Array(OperatorInstrument), ...errors } },
    }, async () => ctx.engine.instrumentConfigs().map((config) => ({ config, state: stateForOperator(ctx.engine.instrumentState(config.id)) })));

    app.post('/api/admin/instruments', {
      schema: { tags, security, summary: 'Add or update an instrument', body: UpsertBody, response: { 200: Ok, ...errors } },
    }, async (req) => {
      const b = req.body as Static<typeof UpsertBody>;
      const indexPrice = b.indexPrice === undefined ? undefined : A.amount('indexPrice', b.indexPrice);
      await execute(ctx.submit, { kind: 'instrument.upsert', config: b.config as InstrumentConfig });
      if (indexPrice !== undefined) await execute(ctx.submit, { kind: 'price.tick', instrument: b.config.id, indexPrice });
      return { ok: true, seq: ctx.engine.seq };
    });

    app.post('/api/admin/matcher', {
      schema: { tags, security, summary: 'Set the matcher state (anything but active halts trading)', body: MatcherBody, response: { 200: Ok, ...errors } },
    }, async (req) => {
      await execute(ctx.submit, { kind: 'matcher.state', state: (req.body as Static<typeof MatcherBody>).state });
      return { ok: true, seq: ctx.engine.seq };
    });

    app.post('/api/admin/instruments/:instrument/trading', {
      schema: { tags, security, summary: "Set an instrument's trading state", params: InstrumentParams, body: TradingBody, response: { 200: Ok, ...errors } },
    }, async (req) => {
      const { instrument } = req.params as Static<typeof InstrumentParams>;
      if (!ctx.engine.instrumentConfig(instrument)) throw notFound('INSTRUMENT_NOT_FOUND', `Unknown instrument ${instrument}`);
      await execute(ctx.submit, { kind: 'instrument.trading', instrument, trading: (req.body as Static<typeof TradingBody>).trading });
      return { ok: true, seq: ctx.engine.seq };
    });

    app.post('/api/admin/index-price', {
      schema: {
        tags, security, summary: 'Push an index price (a price.tick command; the random walk continues from it)',
        body: IndexPriceBody, response: { 200: IndexPriceReply, ...errors },
      },
    }, async (req) => {
      const b = req.body as Static<typeof IndexPriceBody>;
      if (!ctx.engine.instrumentConfig(b.instrument)) throw notFound('INSTRUMENT_NOT_FOUND', `Unknown instrument ${b.instrument}`);
      const price = A.amount('price', b.price);
      if (ctx.indexPush) {
        try {
          await ctx.indexPush(b.instrument, price);
        } catch (err) {
          if (err instanceof RangeError) throw badRequest('INVALID_PRICE', err.message);
          throw err;
        }
      } else {
        await execute(ctx.submit, { kind: 'price.tick', instrument: b.instrument, indexPrice: price });
      }
      const s = ctx.engine.instrumentState(b.instrument)!;
      return { ok: true, seq: ctx.engine.seq, instrument: s.id, indexPrice: num(s.indexPrice ?? 0), markPrice: num(s.markPrice ?? 0) };
    });
  };
}
