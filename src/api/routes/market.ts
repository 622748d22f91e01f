/** Public market data plus the two per-user market reads (available balance, buying power). */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ORDER_BOOK_GROUPINGS } from '../../domain/enums.js';
import { parseUnits } from '../../domain/fixed.js';
import { ErrorBody, StringEnum } from '../../records/common.js';
import { RecentTradeRecord, toRecentTrade } from '../../records/fill.js';
import { AvailableBalanceRecord, PowerRecord, toAvailableBalance, toPower } from '../../records/funds.js';
import {
  CoinListRecord, DepthRecord, InstrumentMetricsRecord, InstrumentRecord, MarketInfoRecord, coinsFromInstruments, toCoin, toDepth,
  toInstrument, toInstrumentMetrics, toMarketInfo, type InstrumentStats,
} from '../../records/market.js';
import * as A from '../amounts.js';
import { userOf } from '../authenticate.js';
import type { RouteContext } from '../context.js';
import { RenderedDepthCache } from '../depth-cache.js';
import { notFound } from '../errors.js';
import { Instrument, InstrumentParams } from '../schemas.js';

const errors = { '4xx': ErrorBody };
const InstrumentListQuery = Type.Object({ fields: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Array(Type.String({ maxLength: 32 }), { maxItems: 10 })])) });
const DepthQuery = Type.Object({
  maxLevel: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 20 })),
  roundPrice: Type.Optional(StringEnum(ORDER_BOOK_GROUPINGS, { default: '0.1' })),
  marketLevel: Type.Optional(Type.Integer({ minimum: 0, maximum: 1, description: '1 = best bid and ask only' })),
});
const TradesQuery = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })) });
const PowerQuery = Type.Object({ instrument: Instrument });

export function marketRoutes(ctx: RouteContext) {
  return async function plugin(app: FastifyInstance) {
    const tags = ['market'];
    const depthBodies = new RenderedDepthCache();
    const stats = async (id: string): Promise<InstrumentStats | undefined> => ctx.readStore?.instrumentStats?.(id);

    app.get('/api/market', {
      schema: { tags, summary: 'Matcher state and fee schedule', response: { 200: MarketInfoRecord } },
    }, async () => {
      // A snapshot of the state as of now (the info channel's snapshots carry their time the same way): a client
      // that drops states not newer than the moment it subscribed would otherwise discard the answer.
      const m = ctx.engine.matcher();
      return toMarketInfo({ state: m.state, updatedAt: Math.max(m.updatedAt, ctx.clock()) }, ctx.cfg.fees);
    });

    app.get('/api/coin', {
      schema: { tags, summary: 'Coins', response: { 200: CoinListRecord } },
    }, async () => {
      const configs = ctx.engine.instrumentConfigs();
      const priceOf = new Map<string, number | null>();
      for (const c of configs) {
        const s = ctx.engine.instrumentState(c.id);
        if (!priceOf.has(c.from)) priceOf.set(c.from, s?.indexPrice ?? s?.markPrice ?? null);
      }
      // The collateral coin is USD-pegged: its price is 1 by definition.
      return { list: coinsFromInstruments(configs).map((coin) => toCoin(coin, priceOf.get(coin.symbol) ?? (priceOf.has(coin.symbol) ? null : parseUnits('1')))) };
    });

    app.get('/api/market/instrument', {
      schema: {
        tags, summary: 'All instruments (fields=metrics adds funding rate, OI and 24h stats; heavy)', querystring: InstrumentListQuery,
        response: { 200: Type.Array(Type.Union([InstrumentMetricsRecord, InstrumentRecord])) },
      },
    }, async (req) => {
      const q = req.query as Static<typeof InstrumentListQuery>;
      const withMetrics = [q.fields ?? []].flat().includes('metrics');
      const configs = ctx.engine.instrumentConfigs();
      const coins = new Map(coinsFromInstruments(configs).map((c) => [c.symbol, c]));
      return Promise.all(configs.map(async (c) => {
        const s = ctx.engine.instrumentState(c.id);
        return withMetrics ? toInstrumentMetrics(c, s, coins, await stats(c.id)) : toInstrument(c, s, coins);
      }));
    });

    app.get('/api/market/:instrument/deep', {
      schema: { tags, summary: 'Order book grouped by price level', params: InstrumentParams, querystring: DepthQuery, response: { 200: DepthRecord, ...errors } },
    }, (req, reply) => {
      // Synchronous (Fastify catches a throw): the most polled route saves the promise an async handler costs.
      const { instrument } = req.params as Static<typeof InstrumentParams>;
      const q = req.query as Static<typeof DepthQuery>;
      A.pathInstrument(ctx.engine, instrument);
      const best = q.marketLevel === 1;
      const maxLevel = best ? 1 : q.maxLevel ?? 20;
      const roundPrice = q.roundPrice ?? '0.1';
      const seq = ctx.engine.seq;
      const key = `${instrument}|${maxLevel}|${roundPrice}|${best}`;
      let body = Number.isSafeInteger(seq) ? depthBodies.get(seq, key) : undefined;
      if (body === undefined) {
        const depth = ctx.engine.depth(instrument, maxLevel, parseUnits(roundPrice));
        if (!depth) throw notFound('INSTRUMENT_NOT_FOUND', `Unknown instrument ${instrument}`);
        // The route's own serializer: the same bytes as returning the record, rendered once.
        body = Buffer.from(String(reply.serialize(toDepth(depth, best))), 'utf8');
        if (Number.isSafeInteger(seq)) depthBodies.set(seq, key, body);
      }
      // Not returned: a synchronous handler's return value would be sent a second time.
      reply.type('application/json; charset=utf-8').send(body);
    });

    // `trades` is the version-1 path the public client's getTrades calls. Its Trade type also names the order and
    // user of a fill; public trades name no party, so both paths answer the same anonymized records.
    for (const path of ['/api/market/:instrument/recent-trades', '/api/market/:instrument/trades']) {
      app.get(path, {
        schema: {
          tags, summary: 'Anonymized recent trades, newest first', params: InstrumentParams, querystring: TradesQuery,
          response: { 200: Type.Array(RecentTradeRecord), ...errors },
        },
      }, async (req) => {
        const { instrument } = req.params as Static<typeof InstrumentParams>;
        const q = req.query as Static<typeof TradesQuery>;
        A.pathInstrument(ctx.engine, instrument);
        if (!ctx.readStore) return [];
        const limit = Math.min(q.limit ?? 50, ctx.cfg.recentTradesMax);
        return (await ctx.readStore.recentTrades(instrument, limit)).map(toRecentTrade);
      });
    }

    app.get('/api/market/available-balance', {
      config: { auth: true, scope: 'read' },
      schema: { tags, summary: 'Amount available for new orders and withdrawal', response: { 200: AvailableBalanceRecord, ...errors } },
    }, async (req) => toAvailableBalance(ctx.engine.account(userOf(req).exchangeId)));

    app.get('/api/market/power', {
      config: { auth: true, scope: 'read' },
      schema: { tags, summary: 'Buying power per side', querystring: PowerQuery, response: { 200: PowerRecord, ...errors } },
    }, async (req) => {
      const { instrument } = req.query as Static<typeof PowerQuery>;
      A.pathInstrument(ctx.engine, instrument);
      const p = ctx.engine.power(userOf(req).exchangeId, instrument);
      if (!p) throw notFound('INSTRUMENT_NOT_FOUND', `Unknown instrument ${instrument}`);
      return toPower(p);
    });
  };
}
