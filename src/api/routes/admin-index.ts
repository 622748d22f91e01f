/** POST /api/admin/index-price: an operator sets an instrument's index price (journaled as a price tick). */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { hasExcessPrecision, parseUnits, type Units } from '../../domain/fixed.js';
import { ErrorBody, num } from '../../records/common.js';
import { requireAdmin, type OperatorGuard } from '../admin-guard.js';
import { SECURITY } from '../authenticate.js';
import type { RouteContext } from '../context.js';
import { ApiError, badRequest } from '../errors.js';

const IndexPriceBody = Type.Object({
  instrument: Type.String({ minLength: 1, maxLength: 32 }),
  price: Type.Union([Type.String({ maxLength: 40 }), Type.Number()], { description: 'index price per 1 base coin' }),
}, { additionalProperties: false });
type IndexPriceBody = Static<typeof IndexPriceBody>;

const IndexPriceReply = Type.Object({
  instrument: Type.String(),
  indexPrice: Type.Number(),
  markPrice: Type.Number(),
});

export function adminIndexRoutes(ctx: RouteContext, guard: OperatorGuard = requireAdmin) {
  return async function plugin(app: FastifyInstance) {
    app.post<{ Body: IndexPriceBody }>('/api/admin/index-price', {
      config: { auth: true },
      schema: {
        tags: ['admin'], security: SECURITY, summary: 'Push an index price (admin role; the random walk continues from it)',
        body: IndexPriceBody, response: { 200: IndexPriceReply, '4xx': ErrorBody },
      },
    }, async (req) => {
      guard(req);
      if (!ctx.indexPush) throw new ApiError(409, 'NO_INDEX_PUSH', 'Operator index push is not available');
      let price: Units;
      try {
        if (hasExcessPrecision(req.body.price)) throw new Error();
        price = parseUnits(req.body.price);
      } catch {
        throw badRequest('INVALID_PRICE', 'Invalid price: a positive decimal with at most 8 decimal places');
      }
      if (!ctx.engine.instrumentConfig(req.body.instrument)) throw new ApiError(404, 'INSTRUMENT_NOT_FOUND', `Unknown instrument ${req.body.instrument}`);
      try {
        await ctx.indexPush(req.body.instrument, price);
      } catch (err) {
        if (err instanceof RangeError) throw badRequest('INVALID_PRICE', err.message);
        throw err;
      }
      const s = ctx.engine.instrumentState(req.body.instrument)!;
      return { instrument: s.id, indexPrice: num(s.indexPrice ?? 0), markPrice: num(s.markPrice ?? 0) };
    });
  };
}
