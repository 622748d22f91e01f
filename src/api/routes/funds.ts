/** Balances, user funding, faucet and withdrawal. */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { parseMoney } from '../../domain/fixed.js';
import { TRANSFER_STATUSES, TRANSFER_TYPES } from '../../domain/enums.js';
import { EmptyResponse, ErrorBody, Nullable, SignatureUsedConflict, StringEnum } from '../../records/common.js';
import { BalanceItemRecord, TransferRecord, UserFundingRecord, toBalanceItems, toTransfer, toUserFunding } from '../../records/funds.js';
import * as A from '../amounts.js';
import { userOf } from '../authenticate.js';
import type { RouteContext } from '../context.js';
import { ApiError, badRequest, notFound } from '../errors.js';
import { execute } from '../execute.js';
import { Body, Decimal, Limit, Offset, OneOrMany, Signature, TimeParam, many } from '../schemas.js';
import { parseTime } from './order-queries.js';
import { requireSignedDigest, withdrawMessage } from '../signatures.js';

const errors = { '4xx': ErrorBody };
const WithdrawBody = Body({
  recipient: Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' }),
  currency: Type.Optional(StringEnum(['usdt'] as const, { default: 'usdt' })),
  amount: Decimal,
  signature: Signature,
  twofa: Type.Optional(Body({ code: Type.String({ maxLength: 16 }) })),
}, 'Withdrawal (amount rounded down to 8 decimals)');

const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'wallet or smart-account address' });
const TransferListQuery = Type.Object({
  status: Type.Optional(OneOrMany(StringEnum(TRANSFER_STATUSES))),
  type: Type.Optional(OneOrMany(StringEnum(TRANSFER_TYPES))),
  after: Type.Optional(Nullable(TimeParam)),
  before: Type.Optional(Nullable(TimeParam)),
  limit: Type.Optional(Limit),
  offset: Type.Optional(Offset),
});
const TransferListRecord = Type.Object({ list: Type.Array(TransferRecord), count: Type.Integer() }, { description: 'TransferListObject' });
const TransferDetailRecord = Type.Object({
  smartAccountAddress: Type.String(),
  email: Nullable(Type.String({ description: "only when the target is the caller's own account; null for anyone else's" })),
}, { description: 'Transfer detail: public fields of the target account' });

/** GET /auth/user/balance and the deprecated GET /api/user/balance share this handler. */
export function balanceHandler(ctx: RouteContext) {
  return async (req: Parameters<typeof userOf>[0]) => toBalanceItems(ctx.engine.account(userOf(req).exchangeId));
}
export const balanceSchema = { response: { 200: Type.Array(BalanceItemRecord), ...errors } };

export function fundsRoutes(ctx: RouteContext) {
  return async function plugin(app: FastifyInstance) {
    const tags = ['funds'];
    /** Last faucet use per user (ms): in memory, a faucet is a dev/demo convenience. */
    const faucetUsed = new Map<number, number>();
    const faucetTtl = (userId: number) => Math.max(0, (faucetUsed.get(userId) ?? -Infinity) + ctx.cfg.faucetCooldownMs - ctx.clock());

    app.get('/api/user/balance', {
      config: { auth: true, scope: 'read' },
      schema: { tags, deprecated: true, summary: 'Balances (deprecated: use GET /auth/user/balance)', ...balanceSchema },
    }, balanceHandler(ctx));

    app.get('/api/user/funding', {
      config: { auth: true, scope: 'read' },
      schema: { tags, summary: 'Your collateral per coin', response: { 200: Type.Array(UserFundingRecord), ...errors } },
    }, async (req) => {
      const a = ctx.engine.account(userOf(req).exchangeId);
      return [toUserFunding(a.balance, a.updatedAt)];
    });

    app.get('/api/user/faucet/check', {
      config: { auth: true, scope: 'read' },
      schema: {
        tags, summary: 'Whether the faucet can be used now; ttl = ms until it can',
        response: { 200: Type.Object({ ok: Type.Boolean(), ttl: Type.Number() }), ...errors },
      },
    }, async (req) => {
      const ttl = ctx.cfg.faucetAmount === '0' ? 0 : faucetTtl(userOf(req).exchangeId);
      return { ok: ctx.cfg.faucetAmount !== '0' && ttl === 0, ttl };
    });

    app.post('/api/user/faucet', {
      config: { auth: true, scope: 'trade' },
      schema: { tags, summary: 'Credit test collateral (demo)', response: { 200: EmptyResponse, ...errors } },
    }, async (req) => {
      const userId = userOf(req).exchangeId;
      if (ctx.cfg.faucetAmount === '0') throw new ApiError(403, 'FAUCET_DISABLED', 'The faucet is disabled on this server');
      const ttl = faucetTtl(userId);
      if (ttl > 0) throw new ApiError(429, 'FAUCET_COOLDOWN', `Faucet already used; try again in ${Math.ceil(ttl / 1000)} s`);
      faucetUsed.set(userId, ctx.clock());
      try {
        await execute(ctx.submit, { kind: 'funds.deposit', userId, amount: parseMoney(ctx.cfg.faucetAmount).toString(), transferId: ctx.newId() });
      } catch (e) {
        faucetUsed.delete(userId);
        throw e;
      }
      return {};
    });

    app.post('/api/transfer/pf/withdraw', {
      config: { auth: true, scope: 'withdraw' },
      schema: {
        tags, summary: 'Withdraw collateral (signed)', body: WithdrawBody,
        description: 'A signed withdrawal is carried out at most once: the identical body (same recipient, same amount, hence the same '
          + 'signature) is refused with 409 SIGNATURE_ALREADY_USED. To withdraw the same amount again, change it by 0.00000001.',
        response: { 200: TransferRecord, 409: SignatureUsedConflict(''), ...errors },
      },
    }, async (req) => {
      const user = userOf(req);
      const b = req.body as Static<typeof WithdrawBody>;
      const amount = A.money('amount', b.amount, 'down');
      const digest = await requireSignedDigest(ctx.verifier, user, { type: 'Withdraw', chainId: ctx.chainId, message: withdrawMessage(b.recipient, b.amount), signature: b.signature });
      const reply = await execute(ctx.submit, {
        kind: 'funds.withdraw', userId: user.exchangeId, amount: amount.toString(), transferId: ctx.newId(), recipient: b.recipient, digest,
      });
      if (!reply.transfer) throw new Error('engine accepted funds.withdraw without a transfer view');
      return toTransfer(reply.transfer);
    });

    app.get('/api/transfer', {
      config: { auth: true, scope: 'read' },
      schema: {
        tags, querystring: TransferListQuery, response: { 200: TransferListRecord, ...errors },
        summary: 'Your transfers not yet final on chain (pending or blocked), newest first; settled ones are in /api/user/funding-transfer',
      },
    }, async (req) => {
      const q = req.query as Static<typeof TransferListQuery>;
      const statuses = many(q.status);
      const types = many(q.type);
      const after = parseTime('after', q.after ?? undefined);
      const before = parseTime('before', q.before ?? undefined);
      const list = (ctx.engine.pendingTransfers?.(userOf(req).exchangeId) ?? [])
        .filter((t) => (!statuses || statuses.includes(t.status)) && (!types || types.includes(t.type)) &&
          (after === undefined || t.createdAt >= after) && (before === undefined || t.createdAt <= before))
        .reverse();
      const offset = q.offset ?? 0;
      return { list: list.slice(offset, offset + (q.limit ?? ctx.cfg.pageDefault)).map(toTransfer), count: list.length };
    });

    app.get('/api/transfer/detail', {
      config: { auth: true, scope: 'read' },
      schema: {
        tags, summary: 'Account behind a wallet or smart-account address (transfer target)',
        querystring: Type.Object({ target: Address }), response: { 200: TransferDetailRecord, ...errors },
      },
    }, async (req) => {
      const { target } = req.query as { target: string };
      if (!ctx.auth.findUserByAddress) throw badRequest('UNSUPPORTED', 'Address lookup is not available on this server');
      const user = await ctx.auth.findUserByAddress(target);
      if (!user) throw notFound('ACCOUNT_NOT_FOUND', `No account for address ${target}`);
      // Anyone signed in may look up any address: another user's email stays private.
      return { smartAccountAddress: user.smartAccountAddress, email: user.id === userOf(req).id ? user.email : null };
    });
  };
}
