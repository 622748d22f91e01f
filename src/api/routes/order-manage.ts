/** Replacing and cancelling orders (PUT/DELETE /api/order/…, mass cancels). */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ReplaceInput } from '../../engine/commands.js';
import { EmptyResponse, ErrorBody, SignatureUsedConflict } from '../../records/common.js';
import { BatchResultRecord, CancelResultRecord, type BatchResultRecord as BatchResult } from '../../records/order.js';
import * as A from '../amounts.js';
import { userOf } from '../authenticate.js';
import type { RouteContext } from '../context.js';
import { ApiError, badRequest, notFound } from '../errors.js';
import { execute } from '../execute.js';
import { Body, Decimal, InstrumentParams, OrderIdAny, OrderIdParams, PostOnly, Signature, Smp } from '../schemas.js';
import { replaceLimitMessage, replaceStopLimitMessage, requireSignedDigest, signedDigest } from '../signatures.js';

const errors = { '4xx': ErrorBody };
const replaceErrors = {
  409: SignatureUsedConflict('Other conflicts: ORDER_NOT_OPEN (the order is filled, cancelled or expired), TRADING_HALTED, '
    + 'TRADING_NOT_ALLOWED, ONLY_CLOSE, POST_ONLY.'),
  ...errors,
};
const REPLACE_ONCE = 'A signed replace applies at most once while its order is open: repeating an earlier replace of the order '
  + '(same quantity and prices, hence the same signature) is refused with 409 SIGNATURE_ALREADY_USED, so a replayed old replace '
  + 'cannot undo a newer one. To return to earlier values, change the quantity by one increment.';

const ReplaceLimitBody = Body({
  quantity: Decimal, limitPrice: Decimal, postOnly: Type.Optional(PostOnly), signature: Signature, smp: Type.Optional(Smp),
}, 'Replace limit order');
const ReplaceStopLimitBody = Body({
  quantity: Decimal, limitPrice: Decimal, stopPrice: Decimal, signature: Signature, smp: Type.Optional(Smp),
}, 'Replace stop-limit order');
const BatchReplaceItem = Body({
  quantity: Decimal, limitPrice: Decimal, postOnly: Type.Optional(PostOnly), signature: Signature, smp: Type.Optional(Smp), orderId: OrderIdAny,
});
const BatchReplaceBody = Type.Array(BatchReplaceItem, { minItems: 1, maxItems: 50 });
const MassCancelBody = Body({
  instrument: Type.Optional({ ...Type.String({ minLength: 1, maxLength: 64 }), description: 'absent: every instrument (public clients may omit it)' }),
  dbSync: Type.Optional(Type.Boolean({ default: false })),
});
const MassCancelByIdBody = Body({ orderIds: Type.Array(OrderIdAny, { minItems: 1, maxItems: 500 }) });

export function orderManageRoutes(ctx: RouteContext) {
  return async function plugin(app: FastifyInstance) {
    const tags = ['orders'];

    /**
     * The caller's open order and its instrument rules; 409 for one of theirs that is no longer open (its
     * history is still readable, so "not found" would contradict GET), 404 otherwise.
     */
    async function ownOpenOrder(userId: number, orderId: string) {
      const order = ctx.engine.getOrder(userId, orderId);
      if (!order) {
        const past = await ctx.readStore?.getOrder(userId, orderId);
        if (past) throw new ApiError(409, 'ORDER_NOT_OPEN', `Order ${orderId} is no longer open (filled, cancelled or expired) and cannot be replaced`);
        throw notFound('ORDER_NOT_FOUND', `Order ${orderId} not found`);
      }
      const config = ctx.engine.instrumentConfig(order.instrument);
      if (!config) throw notFound('INSTRUMENT_NOT_FOUND', `Unknown instrument ${order.instrument}`);
      return { order, rules: A.rulesOf(config) };
    }

    app.put('/api/order/:orderId/limit', {
      config: { auth: true, scope: 'trade' },
      schema: {
        tags, summary: 'Replace a limit order', description: REPLACE_ONCE, params: OrderIdParams, body: ReplaceLimitBody,
        response: { 200: EmptyResponse, ...replaceErrors },
      },
    }, async (req) => {
      const user = userOf(req);
      const { orderId } = req.params as Static<typeof OrderIdParams>;
      const b = req.body as Static<typeof ReplaceLimitBody>;
      const { rules } = await ownOpenOrder(user.exchangeId, orderId);
      const replace: ReplaceInput = { orderId, quantity: A.quantity(rules, b.quantity), limitPrice: A.price(rules, b.limitPrice, 'limitPrice') };
      if (b.postOnly !== undefined) replace.postOnly = b.postOnly === 'yes';
      if (b.smp) replace.smp = { smp: b.smp.smp, smpId: b.smp.smpId };
      replace.digest = await requireSignedDigest(ctx.verifier, user, { type: 'Replace limit order', chainId: ctx.chainId, message: replaceLimitMessage(orderId, b), signature: b.signature });
      await execute(ctx.submit, { kind: 'order.replace', userId: user.exchangeId, replace });
      return {};
    });

    app.put('/api/order/:orderId/stop-limit', {
      config: { auth: true, scope: 'trade' },
      schema: {
        tags, summary: 'Replace a stop-limit order', description: REPLACE_ONCE, params: OrderIdParams, body: ReplaceStopLimitBody,
        response: { 200: EmptyResponse, ...replaceErrors },
      },
    }, async (req) => {
      const user = userOf(req);
      const { orderId } = req.params as Static<typeof OrderIdParams>;
      const b = req.body as Static<typeof ReplaceStopLimitBody>;
      const { rules } = await ownOpenOrder(user.exchangeId, orderId);
      const replace: ReplaceInput = {
        orderId, quantity: A.quantity(rules, b.quantity), limitPrice: A.price(rules, b.limitPrice, 'limitPrice'), stopPrice: A.price(rules, b.stopPrice, 'stopPrice'),
      };
      if (b.smp) replace.smp = { smp: b.smp.smp, smpId: b.smp.smpId };
      replace.digest = await requireSignedDigest(ctx.verifier, user, { type: 'Replace stop-limit order', chainId: ctx.chainId, message: replaceStopLimitMessage(orderId, b), signature: b.signature });
      await execute(ctx.submit, { kind: 'order.replace', userId: user.exchangeId, replace });
      return {};
    });

    /**
     * Replaces each item's order (per-item results). `instrument`: every order must be on it (one engine batch);
     * null: the orders may span instruments (one engine batch per instrument, in the order they first appear).
     */
    async function replaceBatch(user: ReturnType<typeof userOf>, items: Static<typeof BatchReplaceBody>, instrument: string | null): Promise<BatchResult[]> {
      const results: Array<BatchResult | undefined> = new Array(items.length);
      const accepted = new Map<string, Array<{ index: number; input: ReplaceInput }>>();
      await Promise.all(items.map(async (item, index) => {
        try {
          const order = ctx.engine.getOrder(user.exchangeId, item.orderId);
          if (!order) throw notFound('ORDER_NOT_FOUND', 'Order not found');
          if (instrument !== null && order.instrument !== instrument) throw badRequest('INVALID_INSTRUMENT', `Order is not on ${instrument}`);
          const config = ctx.engine.instrumentConfig(order.instrument);
          if (!config) throw notFound('INSTRUMENT_NOT_FOUND', `Unknown instrument ${order.instrument}`);
          const rules = A.rulesOf(config);
          const input: ReplaceInput = { orderId: item.orderId, quantity: A.quantity(rules, item.quantity), limitPrice: A.price(rules, item.limitPrice, 'limitPrice') };
          if (item.postOnly !== undefined) input.postOnly = item.postOnly === 'yes';
          if (item.smp) input.smp = { smp: item.smp.smp, smpId: item.smp.smpId };
          const digest = await signedDigest(ctx.verifier, user, { type: 'Replace limit order', chainId: ctx.chainId, message: replaceLimitMessage(item.orderId, item), signature: item.signature });
          if (digest === null) throw badRequest('INVALID_SIGNATURE', 'Invalid signature');
          input.digest = digest;
          const group = accepted.get(order.instrument) ?? [];
          group.push({ index, input });
          accepted.set(order.instrument, group);
        } catch (e) {
          results[index] = { orderId: item.orderId, success: false, failReason: A.reasonOf(e) };
        }
      }));
      for (const [on, group] of accepted) {
        group.sort((a, b) => a.index - b.index);
        const { reply } = await ctx.submit({ kind: 'order.replaceBatch', userId: user.exchangeId, instrument: on, items: group.map((a) => a.input) });
        group.forEach((a, i) => {
          const orderId = a.input.orderId;
          if (!reply.ok) { results[a.index] = { orderId, success: false, failReason: reply.error.message }; return; }
          const r = reply.batch?.[i];
          results[a.index] = !r || r.success ? { orderId, success: true } : { orderId, success: false, failReason: r.failReason ?? 'Rejected' };
        });
      }
      return results.map((r, i) => r ?? { orderId: items[i].orderId, success: false, failReason: 'Not processed' });
    }

    app.put('/api/order/limit/:instrument', {
      config: { auth: true, scope: 'trade' },
      schema: {
        tags, summary: 'Replace 1 to 50 limit orders (per-item results)', params: InstrumentParams, body: BatchReplaceBody,
        description: `${REPLACE_ONCE} Here such an item fails with that error's message.`,
        response: { 200: Type.Array(BatchResultRecord), ...errors },
      },
    }, async (req) => {
      const { instrument } = req.params as Static<typeof InstrumentParams>;
      A.pathInstrument(ctx.engine, instrument);
      return replaceBatch(userOf(req), req.body as Static<typeof BatchReplaceBody>, instrument);
    });

    app.put('/api/order/limit', {
      config: { auth: true, scope: 'trade' },
      schema: {
        tags, summary: 'Replace 1 to 50 limit orders of any instruments (deprecated; per-item results)', body: BatchReplaceBody,
        description: `Deprecated form of PUT /api/order/limit/{instrument} (public clients still call it): the orders may be on `
          + `different instruments; each instrument's items are replaced as one batch. ${REPLACE_ONCE} Here such an item fails with that error's message.`,
        response: { 200: Type.Array(BatchResultRecord), ...errors },
      },
    }, async (req) => replaceBatch(userOf(req), req.body as Static<typeof BatchReplaceBody>, null));

    app.delete('/api/order/:orderId', {
      config: { auth: true, scope: 'trade' },
      schema: { tags, summary: 'Cancel an order (no signature)', params: OrderIdParams, response: { 200: EmptyResponse, ...errors } },
    }, async (req) => {
      const user = userOf(req);
      const { orderId } = req.params as Static<typeof OrderIdParams>;
      await execute(ctx.submit, { kind: 'order.cancel', userId: user.exchangeId, orderId });
      return {};
    });

    app.post('/api/order/mass-cancel', {
      config: { auth: true, scope: 'trade' },
      schema: {
        tags, summary: 'Cancel all orders of an instrument, or of every instrument when none is named', body: MassCancelBody,
        response: { 200: EmptyResponse, ...errors },
      },
    }, async (req) => {
      const user = userOf(req);
      const b = (req.body ?? {}) as Static<typeof MassCancelBody>;
      if (b.instrument !== undefined) A.bodyInstrument(ctx.engine, b.instrument);
      // Without an instrument: each instrument the user has open orders on, as when named one by one.
      const instruments = b.instrument !== undefined ? [b.instrument] : [...new Set(ctx.engine.openOrders(user.exchangeId).map((o) => o.instrument))];
      // dbSync is accepted for compatibility: the engine's reply already reflects the committed state.
      for (const instrument of instruments) await execute(ctx.submit, { kind: 'order.cancelAll', userId: user.exchangeId, instrument });
      return {};
    });

    app.post('/api/order/mass-cancel-by-id', {
      config: { auth: true, scope: 'trade' },
      schema: {
        tags, summary: 'Cancel orders by id (per-item results: LimitOrderCancelObject)', body: MassCancelByIdBody,
        response: { 200: Type.Array(CancelResultRecord), ...errors },
      },
    }, async (req) => {
      const user = userOf(req);
      const { orderIds } = req.body as Static<typeof MassCancelByIdBody>;
      const reply = await execute(ctx.submit, { kind: 'order.cancelMany', userId: user.exchangeId, orderIds });
      return orderIds.map((orderId, i) => {
        const r = reply.batch?.[i];
        return !r || r.success ? { orderId, success: true } : { orderId, success: false, failReason: r.failReason ?? 'Not cancelled' };
      });
    });
  };
}
