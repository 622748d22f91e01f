/** GET /api/market/{instrument}/candles: OHLCV candles from the exchange's own trades (read model). */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ErrorBody, StringEnum } from '../../records/common.js';
import { CANDLE_INTERVALS, MAX_CANDLES, type CandleInterval } from '../../store/candles.js';
import * as A from '../amounts.js';
import type { RouteContext } from '../context.js';
import { ApiError, badRequest } from '../errors.js';
import { InstrumentParams } from '../schemas.js';

const INTERVALS = Object.keys(CANDLE_INTERVALS) as CandleInterval[];
/** Year 2300 in ms: far beyond any trade, small enough that bucket arithmetic stays exact. */
const MAX_TIME = 10_413_792_000_000;
const Time = (description: string) => Type.Integer({ minimum: 0, maximum: MAX_TIME, description });

const CandlesQuery = Type.Object({
  interval: StringEnum(INTERVALS, { description: 'Candle width (UTC-aligned)', default: '1m' }),
  from: Type.Optional(Time('Earliest candle open time, epoch ms, inclusive (default: `limit` intervals before `to`)')),
  to: Type.Optional(Time('Candle open times before this, epoch ms, exclusive (default: now, so the current candle is included)')),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_CANDLES, default: MAX_CANDLES, description: 'At most this many: the newest in the window' })),
});

export const CandleRecord = Type.Object({
  t: Type.Integer({ description: 'Open time, epoch ms' }),
  o: Type.String({ description: 'Open price (exact decimal)' }),
  h: Type.String({ description: 'High price' }),
  l: Type.String({ description: 'Low price' }),
  c: Type.String({ description: 'Close price' }),
  v: Type.String({ description: 'Volume, base quantity traded' }),
});

export function candleRoutes(ctx: RouteContext) {
  return async function plugin(app: FastifyInstance) {
    app.get('/api/market/:instrument/candles', {
      schema: {
        tags: ['market'],
        summary: 'OHLCV candles of the exchange\'s own trades, oldest first (intervals without trades are left out)',
        params: InstrumentParams,
        querystring: CandlesQuery,
        response: { 200: Type.Array(CandleRecord), '4xx': ErrorBody, 503: ErrorBody },
      },
    }, async (req) => {
      const { instrument } = req.params as Static<typeof InstrumentParams>;
      const q = req.query as Static<typeof CandlesQuery>;
      A.pathInstrument(ctx.engine, instrument);
      const interval = q.interval ?? '1m';
      const step = CANDLE_INTERVALS[interval];
      const limit = q.limit ?? MAX_CANDLES;
      // The default `to` is the end of the current bucket, so the candle in progress is part of the answer.
      const to = q.to ?? Math.floor(ctx.clock() / step) * step + step;
      const from = q.from ?? Math.max(0, to - limit * step);
      if (to <= from) throw badRequest('INVALID_QUERY', '`to` must be later than `from`');
      if (!ctx.readStore?.candles) throw new ApiError(503, 'READ_MODEL_UNAVAILABLE', 'Candles need the read model, which this server does not run');
      return ctx.readStore.candles({ instrument, interval, from, to, limit });
    });
  };
}
