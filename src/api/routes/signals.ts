/** Trade signals: publish your own, list your own, read anyone's by id (public). */
import { randomUUID } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AccountServices } from '../../accounts/index.js';
import { TradeSignalListRecord, TradeSignalRecord, TradeSignalWithUserRecord, toTradeSignal } from '../records/accounts.js';
import { ErrorBody } from '../../records/common.js';
import { bodyInstrument, leverage, price } from '../amounts.js';
import { userOf } from '../authenticate.js';
import type { RouteContext } from '../context.js';
import { badRequest, notFound } from '../errors.js';
import { Body, Decimal, Instrument, Leverage, Offset, SideSchema } from '../schemas.js';

const errors = { '4xx': ErrorBody };
const tags = ['trade-signal'];
const TradeSignalCreateBody = Body({
  instrument: Instrument,
  side: SideSchema,
  entryPrice: Decimal,
  takeProfit: Type.Optional(Decimal),
  stopLoss: Type.Optional(Decimal),
  leverage: Type.Optional(Leverage),
  comment: Type.Optional(Type.String({ maxLength: 1000 })),
}, 'TradeSignalCreateBody: take-profit must lie on the profitable side of the entry, stop-loss on the losing side');
const ListQuery = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })), offset: Type.Optional(Offset) });
const SignalParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export function signalRoutes(ctx: RouteContext, accounts: AccountServices) {
  const { signals } = accounts;
  return async function plugin(app: FastifyInstance) {
    app.get('/api/trade/signal', {
      config: { auth: true, scope: 'read' },
      schema: { tags, summary: 'Your trade signals, newest first', querystring: ListQuery, response: { 200: TradeSignalListRecord, ...errors } },
    }, async (req) => {
      const q = req.query as Static<typeof ListQuery>;
      const r = await signals.listByUser(userOf(req).id, q.limit ?? 20, q.offset ?? 0);
      return { list: r.list.map(toTradeSignal), count: r.count };
    });

    app.post('/api/trade/signal', {
      config: { auth: true, scope: 'account' },
      schema: { tags, summary: 'Publish a trade signal', body: TradeSignalCreateBody, response: { 200: TradeSignalRecord, ...errors } },
    }, async (req) => {
      const user = userOf(req);
      const b = req.body as Static<typeof TradeSignalCreateBody>;
      const rules = bodyInstrument(ctx.engine, b.instrument);
      const entryPrice = price(rules, b.entryPrice, 'entryPrice');
      const takeProfit = b.takeProfit === undefined ? null : price(rules, b.takeProfit, 'takeProfit');
      const stopLoss = b.stopLoss === undefined ? null : price(rules, b.stopLoss, 'stopLoss');
      const long = b.side === 'BUY';
      if (takeProfit !== null && (long ? takeProfit <= entryPrice : takeProfit >= entryPrice)) {
        throw badRequest('INVALID_TAKE_PROFIT', `Invalid takeProfit: must be ${long ? 'above' : 'below'} entryPrice for a ${b.side} signal`);
      }
      if (stopLoss !== null && (long ? stopLoss >= entryPrice : stopLoss <= entryPrice)) {
        throw badRequest('INVALID_STOP_LOSS', `Invalid stopLoss: must be ${long ? 'below' : 'above'} entryPrice for a ${b.side} signal`);
      }
      const signal = await signals.create({
        id: randomUUID(), userId: user.id, instrument: b.instrument, side: b.side, entryPrice, takeProfit, stopLoss,
        leverage: leverage(rules, b.leverage ?? 1), comment: b.comment ?? '', createdAt: ctx.clock(),
      });
      return toTradeSignal(signal);
    });

    app.get('/api/trade/signal/:id', {
      schema: { tags, summary: 'One trade signal with its author (public)', params: SignalParams, response: { 200: TradeSignalWithUserRecord, ...errors } },
    }, async (req) => {
      const signal = await signals.get((req.params as Static<typeof SignalParams>).id);
      if (!signal) throw notFound('SIGNAL_NOT_FOUND', 'Trade signal not found');
      const author = await ctx.auth.getUserById(signal.userId);
      return { ...toTradeSignal(signal), author: { authId: author?.authId ?? '', name: author?.name ?? null, avatar: author?.avatar ?? null } };
    });
  };
}

