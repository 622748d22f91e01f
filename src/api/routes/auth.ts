/** Sign-in routes ({auth_url}): nonce, SIWE sign-up/sign-in, refresh, the auth user, balance. May run on their own port. */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { EmptyResponse, ErrorBody } from '../../records/common.js';
import { AuthUserRecord, NonceRecord, SessionRecord, UserServiceRecord, toAuthUser, toSession, toUserServices } from '../records/user.js';
import type { SignInBody as SignIn } from '../../auth/types.js';
import { userOf } from '../authenticate.js';
import { ipKey } from '../client-ip.js';
import type { RouteContext } from '../context.js';
import { unauthorized } from '../errors.js';
import { Body } from '../schemas.js';
import { balanceHandler, balanceSchema } from './funds.js';

const errors = { '4xx': ErrorBody };
const SignInBody = Body({
  wallet: Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' }),
  message: Type.String({ minLength: 1, maxLength: 4096 }),
  nonce: Type.String({ minLength: 8, maxLength: 128 }),
  signature: Type.String({ minLength: 1, maxLength: 200 }),
}, 'EIP-4361 sign-in; the first sign-in creates the account');

export function authRoutes(ctx: RouteContext) {
  return async function plugin(app: FastifyInstance) {
    const tags = ['auth'];
    // Outstanding nonces are capped per caller IP, so one client's flood cannot push out everyone else's.
    app.get('/auth/nonce', { schema: { tags, summary: 'Single-use sign-in nonce', response: { 200: NonceRecord } } }, async (req) => ctx.auth.issueNonce(ipKey(req.ip)));

    app.post('/auth/user/sign-up', {
      schema: { tags, summary: 'Sign in with the wallet (SIWE)', body: SignInBody, response: { 200: SessionRecord, ...errors } },
    }, async (req) => toSession(await ctx.auth.signIn(req.body as SignIn)));

    app.post('/auth/refresh', {
      schema: { tags, summary: 'Rotate tokens: Authorization: Bearer <refreshToken>', security: [{ bearerAuth: [] }], response: { 200: SessionRecord, ...errors } },
    }, async (req) => {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
      if (!m) throw unauthorized('Missing refresh token: send Authorization: Bearer <refreshToken>');
      return toSession(await ctx.auth.refresh(m[1]));
    });

    app.post('/auth/logout', {
      schema: {
        tags, security: [{ bearerAuth: [] }], response: { 200: EmptyResponse, ...errors },
        summary: 'End the session: Authorization: Bearer <accessToken or refreshToken>',
        description: 'Revokes every refresh token of the session and refuses its access tokens at once (REST and '
          + 'real-time: its private subscriptions end). Other sessions of the user are unaffected. Logging out '
          + 'of a session already ended answers 200 too, as long as the token is one the session was issued.',
      },
    }, async (req) => {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
      if (!m) throw unauthorized('Missing token: send Authorization: Bearer <accessToken or refreshToken>');
      await ctx.auth.logout(m[1]);
      return {};
    });

    app.get('/auth/user/me', {
      config: { auth: true, scope: 'read' },
      schema: { tags, summary: 'The signed-in auth user (the `user` of the sign-up response)', response: { 200: AuthUserRecord, ...errors } },
    }, async (req) => toAuthUser(userOf(req)));

    app.get('/auth/user/me/service', {
      config: { auth: true, scope: 'read' },
      schema: { tags, summary: 'Services of the auth user (`exchange`)', response: { 200: Type.Array(UserServiceRecord), ...errors } },
    }, async (req) => toUserServices(userOf(req)));

    app.get('/auth/user/balance', { config: { auth: true, scope: 'read' }, schema: { tags, summary: 'Balances', ...balanceSchema } }, balanceHandler(ctx));
  };
}
