/** Order and fill reads: GET /api/order/{id}, /api/order/{id}/fill, /api/order/opened, /api/order, /api/fill. */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { FILL_ROLES, ORDER_GROUPS, ORDER_STATUSES, ORDER_TYPES } from '../../domain/enums.js';
import type { OrderView, TpSlView } from '../../engine/records.js';
import { ErrorBody, Paged, StringEnum } from '../../records/common.js';
import { FillRecord, OrderFillRecord, toFill, toOrderFill } from '../../records/fill.js';
import { OpenOrderRecord, OrderRecord, OrderWithTpSlRecord, toOpenOrder, toOrder, toOrderWithTpSl } from '../../records/order.js';
import { userOf } from '../authenticate.js';
import type { RouteContext } from '../context.js';
import type { Page } from '../../store/types.js';
import type { OrderQuery } from '../ports.js';
import { badRequest, notFound } from '../errors.js';
import { Instrument, Limit, Offset, OneOrMany, OrderIdParams, SideSchema, TimeParam, YesFlag, many } from '../schemas.js';

const errors = { '4xx': ErrorBody };

/** Query time bound: epoch ms digits or an ISO 8601 string. */
export function parseTime(label: string, v: string | undefined): number | undefined {
  if (v === undefined || v === '') return undefined;
  const ms = /^[0-9]{1,15}$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(ms)) throw badRequest('INVALID_TIME', `Invalid ${label}: expected an ISO 8601 time or epoch milliseconds`);
  return ms;
}

const OrderListQuery = Type.Object({
  id: Type.Optional(OneOrMany(Type.String({ maxLength: 64 }))),
  instrument: Type.Optional(OneOrMany(Instrument)),
  status: Type.Optional(OneOrMany(StringEnum(ORDER_STATUSES))),
  side: Type.Optional(SideSchema),
  groupStatus: Type.Optional(StringEnum(['OPENED', 'CLOSED', 'CANCELLED', 'INACTIVE'] as const)),
  group: Type.Optional(OneOrMany(StringEnum(ORDER_GROUPS))),
  type: Type.Optional(OneOrMany(StringEnum(ORDER_TYPES))),
  version: Type.Optional(Type.String({ maxLength: 8 })),
  triggered: Type.Optional(Type.String({ maxLength: 8 })),
  after: Type.Optional(TimeParam),
  before: Type.Optional(TimeParam),
  sort: Type.Optional(StringEnum(['created-at-asc', 'created-at-desc', 'updated-at-asc', 'updated-at-desc'] as const, { default: 'created-at-desc' })),
  offset: Type.Optional(Offset),
  limit: Type.Optional(Limit),
  next: Type.Optional(Type.String({ maxLength: 256 })),
  withTpSL: Type.Optional(YesFlag),
});

const FillListQuery = Type.Object({
  instrument: Type.Optional(OneOrMany(Instrument)),
  fillRole: Type.Optional(OneOrMany(StringEnum(FILL_ROLES))),
  after: TimeParam,
  before: TimeParam,
  offset: Type.Optional(Offset),
  limit: Type.Optional(Limit),
  next: Type.Optional(Type.String({ maxLength: 256 })),
});

const OrderFillQuery = Type.Object({ version: Type.Optional(Type.String({ maxLength: 8 })) });
const OrderFillList = Type.Object({ list: Type.Array(OrderFillRecord), count: Type.Integer() }, { description: 'OrderFillListResponse' });

function truthy(v: string | undefined): boolean | undefined {
  if (v === undefined || v === '') return undefined;
  return ['yes', 'true', '1'].includes(v.toLowerCase());
}

/** Without a read model, GET /api/order answers from the engine's open orders (filters applied in memory). */
function openOrdersPage(orders: OrderView[], q: OrderQuery): Page<OrderView> {
  const ids = q.ids && new Set(q.ids.map((s) => s.toLowerCase()));
  const filtered = orders.filter((o) =>
    (!ids || ids.has(o.id.toLowerCase())) && (!q.instruments || q.instruments.includes(o.instrument)) &&
    (!q.statuses || q.statuses.includes(o.status)) && (!q.side || o.side === q.side) && (!q.groups || q.groups.includes(o.group)) &&
    (!q.types || q.types.includes(o.type)) && (q.after === undefined || o.createdAt >= q.after) && (q.before === undefined || o.createdAt <= q.before) &&
    (q.groupStatus === undefined || q.groupStatus === 'OPENED'));
  const key = q.sort.startsWith('created') ? 'createdAt' : 'updatedAt';
  const dir = q.sort.endsWith('asc') ? 1 : -1;
  filtered.sort((a, b) => dir * (a[key] - b[key]));
  return { list: filtered.slice(q.offset, q.offset + q.limit), count: filtered.length };
}

export function orderQueryRoutes(ctx: RouteContext) {
  return async function plugin(app: FastifyInstance) {
    const tags = ['orders'];

    async function findOrder(userId: number, orderId: string): Promise<OrderView | undefined> {
      return ctx.engine.getOrder(userId, orderId) ?? (await ctx.readStore?.getOrder(userId, orderId));
    }

    function tpslByOrder(userId: number): Map<string, TpSlView[]> {
      const m = new Map<string, TpSlView[]>();
      for (const t of ctx.engine.tpsls(userId)) {
        if (!t.orderId) continue;
        const k = t.orderId.toLowerCase();
        m.set(k, [...(m.get(k) ?? []), t]);
      }
      return m;
    }

    app.get('/api/order/opened', {
      config: { auth: true, scope: 'read' },
      schema: { tags, summary: 'Open orders', response: { 200: Type.Array(OpenOrderRecord), ...errors } },
    }, async (req) => ctx.engine.openOrders(userOf(req).exchangeId).map(toOpenOrder));

    app.get('/api/order/:orderId', {
      config: { auth: true, scope: 'read' },
      schema: { tags, summary: 'One of your orders (v1 or v2 id)', params: OrderIdParams, response: { 200: OrderRecord, ...errors } },
    }, async (req) => {
      const { orderId } = req.params as Static<typeof OrderIdParams>;
      const order = await findOrder(userOf(req).exchangeId, orderId);
      if (!order) throw notFound('ORDER_NOT_FOUND', `Order ${orderId} not found`);
      return toOrder(order);
    });

    app.get('/api/order/:orderId/fill', {
      config: { auth: true, scope: 'read' },
      schema: { tags, summary: 'Fills of one of your orders', params: OrderIdParams, querystring: OrderFillQuery, response: { 200: OrderFillList, ...errors } },
    }, async (req) => {
      const userId = userOf(req).exchangeId;
      const { orderId } = req.params as Static<typeof OrderIdParams>;
      const order = await findOrder(userId, orderId);
      if (!order) throw notFound('ORDER_NOT_FOUND', `Order ${orderId} not found`);
      const fills = ctx.readStore ? await ctx.readStore.orderFills(userId, order.id) : [];
      return { list: fills.map(toOrderFill), count: fills.length };
    });

    app.get('/api/order', {
      config: { auth: true, scope: 'read' },
      schema: {
        tags, summary: 'Your orders (paged)', querystring: OrderListQuery,
        response: { 200: Paged(OrderWithTpSlRecord), ...errors },
      },
    }, async (req) => {
      const userId = userOf(req).exchangeId;
      const qs = req.query as Static<typeof OrderListQuery>;
      const q: OrderQuery = {
        userId,
        ids: many(qs.id),
        instruments: many(qs.instrument),
        statuses: many(qs.status),
        side: qs.side,
        groupStatus: qs.groupStatus,
        groups: many(qs.group),
        types: many(qs.type),
        triggered: truthy(qs.triggered),
        after: parseTime('after', qs.after),
        before: parseTime('before', qs.before),
        sort: qs.sort ?? 'created-at-desc',
        offset: qs.offset ?? 0,
        limit: qs.limit ?? 50,
        next: qs.next,
      };
      const page = ctx.readStore ? await ctx.readStore.listOrders(q) : openOrdersPage(ctx.engine.openOrders(userId), q);
      // The read model knows the TpSl of past orders too; without it only the engine's live ones are known.
      let withTpSl: Map<string, TpSlView[]> | undefined;
      if (qs.withTpSL === 'yes') {
        withTpSl = ctx.readStore?.tpslForOrders
          ? await ctx.readStore.tpslForOrders(userId, page.list.map((o) => o.id))
          : tpslByOrder(userId);
      }
      const tpslOf = (o: OrderView) => withTpSl?.get(o.id) ?? withTpSl?.get(o.id.toLowerCase()) ?? [];
      const out: { list: ReturnType<typeof toOrderWithTpSl>[]; count: number; next?: string } = {
        list: page.list.map((o) => toOrderWithTpSl(o, tpslOf(o))),
        count: page.count,
      };
      if (page.next !== undefined) out.next = page.next;
      return out;
    });

    app.get('/api/fill', {
      config: { auth: true, scope: 'read' },
      schema: { tags, summary: 'Your fills (paged)', querystring: FillListQuery, response: { 200: Paged(FillRecord), ...errors } },
    }, async (req) => {
      const userId = userOf(req).exchangeId;
      const qs = req.query as Static<typeof FillListQuery>;
      const after = parseTime('after', qs.after);
      const before = parseTime('before', qs.before);
      if (after === undefined || before === undefined) throw badRequest('INVALID_TIME', 'after and before are required');
      if (!ctx.readStore) return { list: [], count: 0 };
      const page = await ctx.readStore.listFills({
        userId, instruments: many(qs.instrument), roles: many(qs.fillRole), after, before, offset: qs.offset ?? 0, limit: qs.limit ?? 50, next: qs.next,
      });
      const out: { list: ReturnType<typeof toFill>[]; count: number; next?: string } = { list: page.list.map(toFill), count: page.count };
      if (page.next !== undefined) out.next = page.next;
      return out;
    });
  };
}
