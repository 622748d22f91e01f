/**
 * Order creation: POST /api/v2/order/{limit,stop-limit,market} and the mass-limit batch, and the same four under
 * /api/order/… (version 1: the bodies may carry a UUID id, see engineOrderId in order-input.ts).
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { PlaceOrderInput } from '../../engine/commands.js';
import { ErrorBody } from '../../records/common.js';
import { BatchResultRecord, OrderRecord, toOrder, type BatchResultRecord as BatchResult } from '../../records/order.js';
import * as A from '../amounts.js';
import { userOf } from '../authenticate.js';
import type { RouteContext } from '../context.js';
import { badRequest } from '../errors.js';
import { execute } from '../execute.js';
import {
  LimitOrderBody, LimitOrderBodyV1, LimitOrderItemBody, LimitOrderItemBodyV1, MarketOrderBody, MarketOrderBodyV1, StopLimitOrderBody,
  StopLimitOrderBodyV1, prepareLimit, prepareMarket, prepareStopLimit, type Prepared,
} from '../order-input.js';
import { InstrumentParams } from '../schemas.js';
import { requireSignature, signedBy } from '../signatures.js';

const errors = { '4xx': ErrorBody };

export function ordersRoutes(ctx: RouteContext) {
  return async function plugin(app: FastifyInstance) {
    const prep = () => ({ engine: ctx.engine, chainId: ctx.chainId, now: ctx.clock() });

    async function place(user: ReturnType<typeof userOf>, p: Prepared<PlaceOrderInput>) {
      await requireSignature(ctx.verifier, user, p.signed);
      const reply = await execute(ctx.submit, { kind: 'order.place', userId: user.exchangeId, order: p.input });
      if (!reply.order) throw new Error('engine accepted order.place without an order view');
      return toOrder(reply.order);
    }

    const common = { tags: ['orders'], response: { 200: OrderRecord, ...errors } };
    const versions = [
      { prefix: '/api/v2/order', note: '', limit: LimitOrderBody, stopLimit: StopLimitOrderBody, market: MarketOrderBody, item: LimitOrderItemBody },
      {
        prefix: '/api/order', note: ' (version 1: id may be a UUID)',
        limit: LimitOrderBodyV1, stopLimit: StopLimitOrderBodyV1, market: MarketOrderBodyV1, item: LimitOrderItemBodyV1,
      },
    ] as const;

    for (const v of versions) {
      app.post(`${v.prefix}/limit`, { config: { auth: true, scope: 'trade' }, schema: { ...common, summary: `Create a limit order${v.note}`, body: v.limit } }, async (req) =>
        place(userOf(req), prepareLimit(prep(), req.body as Static<typeof LimitOrderBodyV1>)));

      app.post(`${v.prefix}/stop-limit`, { config: { auth: true, scope: 'trade' }, schema: { ...common, summary: `Create a stop-limit order${v.note}`, body: v.stopLimit } }, async (req) =>
        place(userOf(req), prepareStopLimit(prep(), req.body as Static<typeof StopLimitOrderBodyV1>)));

      app.post(`${v.prefix}/market`, { config: { auth: true, scope: 'trade' }, schema: { ...common, summary: `Create a market order${v.note}`, body: v.market } }, async (req) =>
        place(userOf(req), prepareMarket(prep(), req.body as Static<typeof MarketOrderBodyV1>)));

      const MassBody = Type.Array(v.item, { minItems: 1, maxItems: 20 });
      app.post(`${v.prefix}/mass-limit/:instrument`, {
        config: { auth: true, scope: 'trade' },
        schema: {
          tags: ['orders'], summary: `Create up to 20 limit orders (per-item results)${v.note}`,
          params: InstrumentParams, body: MassBody, response: { 200: Type.Array(BatchResultRecord), ...errors },
        },
      }, async (req) => placeBatch(userOf(req), (req.params as Static<typeof InstrumentParams>).instrument, req.body as Array<Static<typeof LimitOrderItemBodyV1>>));
    }

    /** Gateway checks per item; a failing item is reported, the others still go to the engine. */
    async function placeBatch(user: ReturnType<typeof userOf>, instrument: string, items: Array<Static<typeof LimitOrderItemBodyV1>>): Promise<BatchResult[]> {
      A.pathInstrument(ctx.engine, instrument);
      const results: Array<BatchResult | undefined> = new Array(items.length);
      const accepted: Array<{ index: number; input: PlaceOrderInput }> = [];
      await Promise.all(items.map(async (item, index) => {
        const fail = (failReason: string) => { results[index] = { orderId: item.id, success: false, failReason }; };
        try {
          if (item.instrument !== instrument) throw badRequest('INVALID_INSTRUMENT', `Instrument must be ${instrument}`);
          const p = prepareLimit(prep(), item);
          if (!(await signedBy(ctx.verifier, user, p.signed))) throw badRequest('INVALID_SIGNATURE', 'Invalid signature');
          accepted.push({ index, input: p.input });
        } catch (e) {
          fail(A.reasonOf(e));
        }
      }));
      accepted.sort((a, b) => a.index - b.index);
      if (accepted.length > 0) {
        const { reply } = await ctx.submit({ kind: 'order.placeBatch', userId: user.exchangeId, instrument, orders: accepted.map((a) => a.input) });
        accepted.forEach((a, i) => {
          const orderId = a.input.id;
          if (!reply.ok) { results[a.index] = { orderId, success: false, failReason: reply.error.message }; return; }
          const r = reply.batch?.[i];
          results[a.index] = r && r.success
            ? { orderId: r.orderId, success: true }
            : { orderId: r?.orderId ?? orderId, success: false, failReason: r?.failReason ?? 'Rejected' };
        });
      }
      return results.map((r, i) => r ?? { orderId: items[i].id, success: false, failReason: 'Not processed' });
    }
  };
}

