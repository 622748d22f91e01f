/** Balances, user funding, faucet and withdrawal. */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { parseMoney } from '../../domain/fixed.js';
import { EmptyResponse, ErrorBody, StringEnum } from '../../records/common.js';
import { BalanceItemRecord, TransferRecord, UserFundingRecord, toBalanceItems, toTransfer, toUserFunding } from '../../records/funds.js';
import * as A from '../amounts.js';
import { SECURITY, userOf } from '../authenticate.js';
import type { RouteContext } from '../context.js';
import { ApiError } from '../errors.js';
import { execute } from '../execute.js';
import { Body, Decimal, Signature } from '../schemas.js';
import { requireSignature, withdrawMessage } from '../signatures.js';

const errors = { '4xx': ErrorBody };
const WithdrawBody = Body({
  recipient: Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' }),
  currency: Type.Optional(StringEnum(['usdt'] as const, { default: 'usdt' })),
  amount: Decimal,
  signature: Signature,
  twofa: Type.Optional(Body({ code: Type.String({ maxLength: 16 }) })),
}, 'Withdrawal (amount rounded down to 8 decimals)');

/** GET /auth/user/balance and the deprecated GET /api/user/balance share this handler. */
export function balanceHandler(ctx: RouteContext) {
  return async (req: Parameters<typeof userOf>[0]) => toBalanceItems(ctx.engine.account(userOf(req).exchangeId));
}
export const balanceSchema = { security: SECURITY, response: { 200: Type.Array(BalanceItemRecord), ...errors } };

export function fundsRoutes(ctx: RouteContext) {
  return async function plugin(app: FastifyInstance) {
    const tags = ['funds'];
    /** Last faucet use per user (ms): in memory, a faucet is a dev/demo convenience. */
    const faucetUsed = new Map<number, number>();
    const faucetTtl = (userId: number) => Math.max(0, (faucetUsed.get(userId) ?? -Infinity) + ctx.cfg.faucetCooldownMs - ctx.clock());

    app.get('/api/user/balance', {
      config: { auth: true },
      schema: { tags, deprecated: true, summary: 'Balances (deprecated: use GET /auth/user/balance)', ...balanceSchema },
    }, balanceHandler(ctx));

    app.get('/api/user/funding', {
      config: { auth: true },
      schema: { tags, security: SECURITY, summary: 'Your collateral per coin', response: { 200: Type.Array(UserFundingRecord), ...errors } },
    }, async (req) => {
      const a = ctx.engine.account(userOf(req).exchangeId);
      return [toUserFunding(a.balance, a.updatedAt)];
    });

    app.get('/api/user/faucet/check', {
      config: { auth: true },
      schema: {
        tags, security: SECURITY, summary: 'Whether the faucet can be used now; ttl = ms until it can',
        response: { 200: Type.Object({ ok: Type.Boolean(), ttl: Type.Number() }), ...errors },
      },
    }, async (req) => {
      const ttl = ctx.cfg.faucetAmount === '0' ? 0 : faucetTtl(userOf(req).exchangeId);
      return { ok: ctx.cfg.faucetAmount !== '0' && ttl === 0, ttl };
    });

    app.post('/api/user/faucet', {
      config: { auth: true },
      schema: { tags, security: SECURITY, summary: 'Credit test collateral (demo)', response: { 200: EmptyResponse, ...errors } },
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
      config: { auth: true },
      schema: { tags, security: SECURITY, summary: 'Withdraw collateral (signed)', body: WithdrawBody, response: { 200: TransferRecord, ...errors } },
    }, async (req) => {
      const user = userOf(req);
      const b = req.body as Static<typeof WithdrawBody>;
      const amount = A.money('amount', b.amount, 'down');
      await requireSignature(ctx.verifier, user, { type: 'Withdraw', chainId: ctx.chainId, message: withdrawMessage(b.recipient, b.amount), signature: b.signature });
      const reply = await execute(ctx.submit, { kind: 'funds.withdraw', userId: user.exchangeId, amount: amount.toString(), transferId: ctx.newId() });
      if (!reply.transfer) throw new Error('engine accepted funds.withdraw without a transfer view');
      return toTransfer(reply.transfer);
    });
  };
}
