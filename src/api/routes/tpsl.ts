/** TpSl routes: list (read model), create / modify (signed) and cancel, through the engine's tpsl.* commands. */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { TPSL_STATUSES, TPSL_TYPES } from '../../domain/enums.js';
import type { TpSlView } from '../../engine/records.js';
import { ErrorBody, Nullable, Paged, SignatureUsedConflict, StringEnum } from '../../records/common.js';
import { TpSlRecord, toTpSl } from '../../records/tpsl.js';
import * as A from '../amounts.js';
import { userOf } from '../authenticate.js';
import type { RouteContext } from '../context.js';
import type { CommandInput } from '../../engine/commands.js';
import { badRequest, notFound } from '../errors.js';
import { execute } from '../execute.js';
import { Body, Decimal, Instrument, InstrumentParams, Limit, Offset, OneOrMany, OrderIdAny, SideSchema, Signature, many } from '../schemas.js';
import { requireSignedDigest, tpslMessage } from '../signatures.js';

const errors = { '4xx': ErrorBody };
const signedErrors = { 409: SignatureUsedConflict('Other conflicts: NO_POSITION (create without an order and no open position).'), ...errors };
const TPSL_ONCE = 'A signed TpSl message (instrument, type, side, quantity, price: it names no TpSl) is used at most once, by a create '
  + 'or a modify: the identical message again is refused with 409 SIGNATURE_ALREADY_USED, so a create\'s signature cannot also modify '
  + 'another TpSl. To set the same values again, change the price by one increment (or the quantity).';
const TpSlCreateBody = Body({
  type: StringEnum(TPSL_TYPES), side: SideSchema, quantity: Decimal, price: Decimal, order: Nullable(OrderIdAny), signature: Signature,
  // The public signing client posts the whole signed struct, which includes the instrument.
  instrument: Type.Optional({ ...Instrument, description: 'optional; when sent, must equal the path instrument (it is signed)' }),
}, 'TpSl create (quantity 0 = whole position; `order` is not signed)');
const TpSlModifyBody = Body({
  type: StringEnum(TPSL_TYPES), side: SideSchema, price: Decimal, signature: Signature,
  quantity: Type.Optional({ ...Decimal, description: 'required unless sent as `query`' }),
  // The public client's updateTpSl sends the quantity under this key.
  query: Type.Optional({ ...Decimal, description: 'the quantity, under the key the public client (updateTpSl) uses; `quantity` wins when both are sent' }),
  // Public clients send these too on modify; accepted and ignored (not signed).
  instrument: Type.Optional(Type.String({ maxLength: 64 })), order: Type.Optional(Nullable(OrderIdAny)),
}, 'TpSl modify');
const TpSlParams = Type.Object({ instrument: Instrument, id: Type.String({ minLength: 1, maxLength: 64 }) });
const TpSlListQuery = Type.Object({
  instrument: Type.Optional(OneOrMany(Instrument)),
  status: Type.Optional(OneOrMany(StringEnum(TPSL_STATUSES))),
  type: Type.Optional(StringEnum(TPSL_TYPES)),
  triggeredOrder: Type.Optional(OneOrMany(Type.String({ maxLength: 64 }))),
  offset: Type.Optional(Offset),
  limit: Type.Optional(Limit),
});

export function tpslRoutes(ctx: RouteContext) {
  return async function plugin(app: FastifyInstance) {
    const tags = ['tpsl'];
    const run = (cmd: CommandInput) => execute(ctx.submit, cmd);
    const tpslOf = (reply: { tpsl?: TpSlView }): TpSlView => {
      if (!reply.tpsl) throw new Error('engine accepted a tpsl command without a tpsl view');
      return reply.tpsl;
    };

    app.get('/api/tpsl', {
      config: { auth: true, scope: 'read' },
      schema: { tags, summary: 'Your TpSl (paged)', querystring: TpSlListQuery, response: { 200: Paged(TpSlRecord), ...errors } },
    }, async (req) => {
      const userId = userOf(req).exchangeId;
      const q = req.query as Static<typeof TpSlListQuery>;
      const query = {
        userId, instruments: many(q.instrument), statuses: many(q.status), type: q.type, triggeredOrders: many(q.triggeredOrder),
        offset: q.offset ?? 0, limit: q.limit ?? 50,
      };
      if (ctx.readStore) {
        const page = await ctx.readStore.listTpsl(query);
        const out: { list: ReturnType<typeof toTpSl>[]; count: number; next?: string } = { list: page.list.map(toTpSl), count: page.count };
        if (page.next !== undefined) out.next = page.next;
        return out;
      }
      const all = ctx.engine.tpsls(userId).filter((t) =>
        (!query.instruments || query.instruments.includes(t.instrument)) && (!query.statuses || query.statuses.includes(t.status)) &&
        (!query.type || t.type === query.type) && (!query.triggeredOrders || (t.triggerOrder !== null && query.triggeredOrders.includes(t.triggerOrder))));
      return { list: all.slice(query.offset, query.offset + query.limit).map(toTpSl), count: all.length };
    });

    app.post('/api/tpsl/:instrument', {
      config: { auth: true, scope: 'trade' },
      schema: {
        tags, summary: 'Create a TpSl', description: TPSL_ONCE, params: InstrumentParams, body: TpSlCreateBody,
        response: { 200: TpSlRecord, ...signedErrors },
      },
    }, async (req) => {
      const user = userOf(req);
      const { instrument } = req.params as Static<typeof InstrumentParams>;
      const b = req.body as Static<typeof TpSlCreateBody>;
      A.sameInstrument(instrument, b.instrument);
      const rules = A.pathInstrument(ctx.engine, instrument);
      const quantity = A.quantity(rules, b.quantity, 'quantity', { allowZero: true, skipMin: true });
      const price = A.price(rules, b.price);
      const digest = await requireSignedDigest(ctx.verifier, user, { type: 'New take-profit/stop-loss', chainId: ctx.chainId, message: tpslMessage({ ...b, instrument }), signature: b.signature });
      const reply = await run({ kind: 'tpsl.create', userId: user.exchangeId, instrument, type: b.type, side: b.side, quantity, price, orderId: b.order, digest });
      return toTpSl(tpslOf(reply));
    });

    app.put('/api/tpsl/:instrument/:id', {
      config: { auth: true, scope: 'trade' },
      schema: {
        tags, summary: 'Modify a TpSl', description: TPSL_ONCE, params: TpSlParams, body: TpSlModifyBody,
        response: { 200: TpSlRecord, ...signedErrors },
      },
    }, async (req) => {
      const user = userOf(req);
      const { instrument, id } = req.params as Static<typeof TpSlParams>;
      const b = req.body as Static<typeof TpSlModifyBody>;
      const rules = A.pathInstrument(ctx.engine, instrument);
      if (!ctx.engine.tpsls(user.exchangeId).some((t) => t.id === id && t.instrument === instrument)) throw notFound('TPSL_NOT_FOUND', `TpSl ${id} not found`);
      const sentQuantity = b.quantity ?? b.query;
      if (sentQuantity === undefined) throw badRequest('INVALID_QUANTITY', 'quantity is required');
      const quantity = A.quantity(rules, sentQuantity, 'quantity', { allowZero: true, skipMin: true });
      const price = A.price(rules, b.price);
      const message = tpslMessage({ type: b.type, side: b.side, price: b.price, quantity: sentQuantity, instrument });
      const digest = await requireSignedDigest(ctx.verifier, user, { type: 'New take-profit/stop-loss', chainId: ctx.chainId, message, signature: b.signature });
      const reply = await run({ kind: 'tpsl.modify', userId: user.exchangeId, instrument, id, type: b.type, side: b.side, quantity, price, digest });
      return toTpSl(tpslOf(reply));
    });

    app.delete('/api/tpsl/:instrument/:id', {
      config: { auth: true, scope: 'trade' },
      schema: { tags, summary: 'Cancel a TpSl', params: TpSlParams, response: { 200: TpSlRecord, ...errors } },
    }, async (req) => {
      const user = userOf(req);
      const { instrument, id } = req.params as Static<typeof TpSlParams>;
      A.pathInstrument(ctx.engine, instrument);
      if (!ctx.engine.tpsls(user.exchangeId).some((t) => t.id === id && t.instrument === instrument)) throw notFound('TPSL_NOT_FOUND', `TpSl ${id} not found`);
      const reply = await run({ kind: 'tpsl.cancel', userId: user.exchangeId, instrument, id });
      return toTpSl(tpslOf(reply));
    });
  };
}
