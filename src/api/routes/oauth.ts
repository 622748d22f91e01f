/**
 * OAuth routes (flow in src/accounts/oauth.ts): consent screen data, signed approval, denial, the code →
 * grant exchange, the user's own requests, and operator registration of integrations.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { OauthError, type OauthService } from '../../accounts/oauth.js';
import { EmptyResponse, ErrorBody, iso } from '../../records/common.js';
import {
  OauthApproveRecord, OauthDenyRecord, OauthGetClientRecord, OauthIntegrationCreatedRecord, OauthIntegrationRecord, OauthRequestListRecord,
  OauthTokenRecord, toOauthClient, toOauthIntegration, toOauthRequest,
} from '../records/oauth.js';
import { OPERATOR_SECURITY } from '../operator.js';
import { userOf } from '../authenticate.js';
import type { RouteContext } from '../context.js';
import { ApiError, badRequest } from '../errors.js';
import { Body, Offset, Signature, YesFlag } from '../schemas.js';
import { requireSignature } from '../signatures.js';

const errors = { '4xx': ErrorBody };
const tags = ['oauth'];
const Uuid = Type.String({ pattern: '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$', description: 'uuid' });
const ScopeText = Type.String({ maxLength: 200 });
const ClientQuery = Type.Object({
  integrationId: Uuid,
  scopes: Type.Optional(Type.Union([ScopeText, Type.Array(ScopeText, { maxItems: 20 })], { description: 'repeated, or space/comma separated; empty = all the integration may ask for' })),
  state: Type.Optional(Type.String({ maxLength: 500, default: '' })),
});
// The public signing client returns { oauthRequestId, apiKeyEnabled, signature } (the signed field's own name), so
// that object is accepted as it is, as well as { requestId, signature }.
const ApproveBody = Body({
  requestId: Type.Optional(Uuid),
  oauthRequestId: Type.Optional({ ...Uuid, description: 'same as requestId (the name of the signed field); send one of the two' }),
  apiKeyEnabled: Type.Optional(Type.Boolean({ description: 'accepted and ignored: a grant never creates an API key' })),
  signature: Signature,
}, 'OauthApproveBody: signature = EIP-712 "Oauth consent" { oauthRequestId } with the server chain id');
const DenyBody = Body({ requestId: Uuid }, 'OauthDenyBody');
const TokenBody = Body({ integrationId: Uuid, clientSecret: Type.String({ minLength: 1, maxLength: 200 }), code: Type.String({ minLength: 1, maxLength: 200 }) }, 'code → grant exchange');
const ListQuery = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })), offset: Type.Optional(Offset), withRejected: Type.Optional(YesFlag) });
const IntegrationBody = Body({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  redirectUri: Type.String({ minLength: 1, maxLength: 2048 }),
  scopes: Type.Array(Type.String({ maxLength: 50 }), { minItems: 1, maxItems: 10 }),
  description: Type.Optional(Type.String({ maxLength: 1000 })),
}, 'Registers an OAuth integration');

function scopesOf(v: string | string[] | undefined): string[] {
  const parts = v === undefined ? [] : Array.isArray(v) ? v : [v];
  return parts.flatMap((p) => p.split(/[\s,]+/)).filter((s) => s.length > 0);
}

function mapError(e: unknown): never {
  if (e instanceof OauthError) throw new ApiError(e.status, e.code, e.message);
  throw e;
}
const guarded = async <T>(fn: () => Promise<T>): Promise<T> => {
  try {
    return await fn();
  } catch (e) {
    mapError(e);
  }
};


export function oauthRoutes(ctx: RouteContext, oauth: OauthService) {
  return async function plugin(app: FastifyInstance) {
    app.get('/api/oauth', {
      schema: { tags, summary: 'Client info for the consent screen; opens a consent request', querystring: ClientQuery, response: { 200: OauthGetClientRecord, ...errors } },
    }, async (req) => {
      const q = req.query as Static<typeof ClientQuery>;
      const { request, integration } = await guarded(() => oauth.openRequest(q.integrationId.toLowerCase(), scopesOf(q.scopes), q.state ?? '', ctx.clock()));
      return { requestId: request.id, client: toOauthClient(integration), scopes: request.scopes, state: request.state, expiresAt: iso(request.expiresAt) };
    });

    app.post('/api/oauth/approve', {
      config: { auth: true, scope: 'account' },
      schema: { tags, summary: 'Approve a consent request (wallet-signed)', body: ApproveBody, response: { 200: OauthApproveRecord, ...errors } },
    }, async (req) => {
      const user = userOf(req);
      const b = req.body as Static<typeof ApproveBody>;
      const requestId = b.requestId ?? b.oauthRequestId;
      if (requestId === undefined) throw badRequest('VALIDATION_ERROR', 'body.requestId: missing required field (or send oauthRequestId)');
      if (b.oauthRequestId !== undefined && b.oauthRequestId.toLowerCase() !== requestId.toLowerCase()) {
        throw badRequest('VALIDATION_ERROR', 'body.oauthRequestId: differs from requestId');
      }
      const { signature } = b;
      const id = requestId.toLowerCase();
      await guarded(() => oauth.pendingRequest(id, ctx.clock()));
      await requireSignature(ctx.verifier, user, { type: 'Oauth consent', chainId: ctx.chainId, message: { oauthRequestId: requestId }, signature });
      const r = await guarded(() => oauth.approve(id, user.id, ctx.clock()));
      return { requestId: r.request.id, redirectUrl: r.redirectUrl, code: r.code, state: r.request.state, scopes: r.request.scopes, expiresAt: iso(r.request.expiresAt) };
    });

    app.post('/api/oauth/deny', {
      schema: { tags, summary: 'Deny a consent request (a signed-in caller is recorded as the one who denied)', body: DenyBody, response: { 200: OauthDenyRecord, ...errors } },
    }, async (req) => {
      const { requestId } = req.body as Static<typeof DenyBody>;
      const who = req.headers.authorization || req.headers['x-api-key'] ? await ctx.auth.authenticate({ authorization: req.headers.authorization, 'x-api-key': req.headers['x-api-key'] }) : null;
      const r = await guarded(() => oauth.deny(requestId.toLowerCase(), who?.via === 'oauth-grant' ? null : who?.user.id ?? null, ctx.clock()));
      return { requestId: r.request.id, redirectUrl: r.redirectUrl, state: r.request.state };
    });

    app.post('/api/oauth/token', {
      schema: { tags, summary: 'Integration: exchange the code and client secret for a scoped grant token', body: TokenBody, response: { 200: OauthTokenRecord, ...errors } },
    }, async (req) => {
      const b = req.body as Static<typeof TokenBody>;
      const r = await guarded(() => oauth.exchangeCode(b.integrationId.toLowerCase(), b.clientSecret, b.code, ctx.clock()));
      return { accessToken: r.accessToken, tokenType: 'Bearer' as const, scopes: r.request.scopes, expiresAt: iso(r.request.expiresAt) };
    });

    app.get('/api/oauth/request/list', {
      config: { auth: true, scope: 'account' },
      schema: { tags, summary: 'Your OAuth approvals (and denials with withRejected=yes)', querystring: ListQuery, response: { 200: OauthRequestListRecord, ...errors } },
    }, async (req) => {
      const q = req.query as Static<typeof ListQuery>;
      const withRejected = q.withRejected !== undefined && ['yes', 'true', '1'].includes(q.withRejected.toLowerCase());
      const r = await oauth.listForUser(userOf(req).id, { withRejected, limit: q.limit ?? 20, offset: q.offset ?? 0 });
      const ids = [...new Set(r.list.map((x) => x.integrationId))];
      const integrations = new Map(await Promise.all(ids.map(async (id) => [id, await oauth.integration(id)] as const)));
      return { list: r.list.map((x) => toOauthRequest(x, integrations.get(x.integrationId))), count: r.count };
    });

    app.delete('/api/oauth/request/:id', {
      config: { auth: true, scope: 'account' },
      schema: { tags, summary: 'Revoke an approval (its grant stops working)', params: Type.Object({ id: Uuid }), response: { 200: EmptyResponse, ...errors } },
    }, async (req) => {
      await guarded(() => oauth.revoke(userOf(req).id, (req.params as { id: string }).id.toLowerCase()));
      return {};
    });

  };
}

/**
 * Integration registry for operators, mounted under /api/admin (the operator guard runs first: operator token
 * or an admin's JWT). The CLI's `oauth-register` calls it.
 */
export function oauthAdminRoutes(ctx: RouteContext, oauth: OauthService) {
  return async function plugin(app: FastifyInstance) {
    app.post('/api/admin/oauth/integrations', {
      schema: { tags, security: OPERATOR_SECURITY, summary: 'Register an integration; the client secret is shown once', body: IntegrationBody, response: { 200: OauthIntegrationCreatedRecord, ...errors } },
    }, async (req) => {
      const r = await guarded(() => oauth.registerIntegration(req.body as Static<typeof IntegrationBody>, ctx.clock()));
      return { integration: toOauthIntegration(r.integration), clientSecret: r.clientSecret };
    });

    app.get('/api/admin/oauth/integrations', {
      schema: { tags, security: OPERATOR_SECURITY, summary: 'Registered integrations', response: { 200: Type.Object({ list: Type.Array(OauthIntegrationRecord) }), ...errors } },
    }, async () => ({ list: (await oauth.integrations()).map(toOauthIntegration) }));
  };
}
