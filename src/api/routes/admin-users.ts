/**
 * Operator user actions under /api/admin/users/{exchangeId}: look a user up, credit a deposit, grant or
 * withdraw a role, and page through the user's order and fill history (the CLI's CSV export).
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { UserRecord } from '../../auth/types.js';
import { ErrorBody, StringEnum } from '../../records/common.js';
import { FillRecord, toFill } from '../../records/fill.js';
import { BalanceItemRecord, toBalanceItems } from '../../records/funds.js';
import { OrderRecord, toOrder } from '../../records/order.js';
import { UserWireRecord, toUser } from '../records/user.js';
import * as A from '../amounts.js';
import type { RouteContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { execute } from '../execute.js';
import { OPERATOR_SECURITY } from '../operator.js';
import { Body, Decimal, Limit, Offset } from '../schemas.js';

const errors = { '4xx': ErrorBody };
const UserParams = Type.Object({ exchangeId: Type.Integer({ minimum: 1, maximum: 2 ** 31 }) });
const HistoryParams = Type.Object({ ...UserParams.properties, kind: StringEnum(['orders', 'fills'] as const) });
const HistoryQuery = Type.Object({ offset: Type.Optional(Offset), limit: Type.Optional(Limit) });
const OperatorUser = Type.Object({
  user: UserWireRecord,
  balance: Type.Array(BalanceItemRecord),
  positions: Type.Integer({ description: 'open positions' }),
  openOrders: Type.Integer({ description: 'live orders' }),
});
const RoleReply = Type.Object({ exchangeId: Type.Integer(), wallet: Type.String(), role: Type.String() });
const OperatorHistory = Type.Object({
  list: Type.Array(Type.Union([OrderRecord, FillRecord]), { description: 'Order items for kind=orders, Fill items for kind=fills' }),
  count: Type.Integer(),
});
const DepositBody = Body({ amount: Decimal });
const RoleBody = Body({ role: StringEnum(['user', 'admin'] as const) });

export function adminUserRoutes(ctx: RouteContext) {
  return async function plugin(app: FastifyInstance) {
    const tags = ['admin'];
    const security = OPERATOR_SECURITY;
    const admin = ctx.admin;
    if (!admin) return;
    const userOr404 = async (exchangeId: number): Promise<UserRecord> => {
      const user = await ctx.auth.getUserByExchangeId(exchangeId);
      if (!user) throw notFound('USER_NOT_FOUND', `No user with exchangeId ${exchangeId}`);
      return user;
    };

    app.get('/api/admin/users/:exchangeId', {
      schema: { tags, security, summary: 'A user with balances and positions', params: UserParams, response: { 200: OperatorUser, ...errors } },
    }, async (req) => {
      const { exchangeId } = req.params as Static<typeof UserParams>;
      const user = await userOr404(exchangeId);
      const account = ctx.engine.account(exchangeId);
      return {
        user: toUser(user, account.marginCall),
        balance: toBalanceItems(account),
        positions: ctx.engine.positions(exchangeId).length,
        openOrders: ctx.engine.openOrders(exchangeId).length,
      };
    });

    app.post('/api/admin/users/:exchangeId/deposit', {
      schema: {
        tags, security, summary: "Credit collateral to a user's account (funds.deposit)", params: UserParams, body: DepositBody,
        response: { 200: Type.Object({ ok: Type.Boolean(), transferId: Type.String() }), ...errors },
      },
    }, async (req) => {
      const { exchangeId } = req.params as Static<typeof UserParams>;
      await userOr404(exchangeId);
      const amount = A.money('amount', (req.body as Static<typeof DepositBody>).amount, 'down');
      const transferId = ctx.newId();
      await execute(ctx.submit, { kind: 'funds.deposit', userId: exchangeId, amount: amount.toString(), transferId });
      return { ok: true, transferId };
    });

    app.post('/api/admin/users/:exchangeId/role', {
      schema: { tags, security, summary: 'Grant or withdraw the admin role', params: UserParams, body: RoleBody, response: { 200: RoleReply, ...errors } },
    }, async (req) => {
      const { exchangeId } = req.params as Static<typeof UserParams>;
      await userOr404(exchangeId);
      if (req.operator?.via === 'admin-user' && req.operator.exchangeId === exchangeId) {
        throw new ApiError(409, 'OWN_ROLE', 'An admin cannot change their own role; use the operator token');
      }
      const user = await admin.setRole(exchangeId, (req.body as Static<typeof RoleBody>).role);
      return { exchangeId: user.exchangeId, wallet: user.wallet, role: user.role };
    });

    app.get('/api/admin/users/:exchangeId/history/:kind', {
      schema: { tags, security, summary: "A page of a user's orders or fills, oldest first", params: HistoryParams, querystring: HistoryQuery, response: { 200: OperatorHistory, ...errors } },
    }, async (req) => {
      const { exchangeId, kind } = req.params as Static<typeof HistoryParams>;
      const q = req.query as Static<typeof HistoryQuery>;
      await userOr404(exchangeId);
      const store = ctx.readStore;
      if (!store) throw new ApiError(503, 'NO_READ_MODEL', 'History is not available on this server');
      const offset = q.offset ?? 0;
      const limit = q.limit ?? 500;
      if (kind === 'orders') {
        const page = await store.listOrders({ userId: exchangeId, sort: 'created-at-asc', offset, limit });
        return { list: page.list.map((o) => toOrder(o)), count: page.count };
      }
      const page = await store.listFills({ userId: exchangeId, after: 0, before: ctx.clock() + 86_400_000, offset, limit });
      return { list: page.list.map(toFill), count: page.count };
    });
  };
}
