/** The caller's profile and deprecated API-key management. */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { EmptyResponse, ErrorBody, Nullable } from '../../records/common.js';
import { ApiKeyCreatedRecord, ApiKeyWireRecord, ScopeSchema, UserWireRecord, toApiKey, toApiKeyCreated, toUser } from '../records/user.js';
import { userOf } from '../authenticate.js';
import type { RouteContext } from '../context.js';
import { requestedKeyScopes, requireScopesToMint } from '../scopes.js';
import { Body, Limit, Offset, YesFlag } from '../schemas.js';

const errors = { '4xx': ErrorBody };
const apiKeyFields = {
  name: Type.Optional(Type.String({ maxLength: 100 })),
  expiresAt: Type.Optional(Nullable(Type.String({ maxLength: 40, description: 'ISO 8601' }))),
};
const ApiKeyCreateBody = Body({
  ...apiKeyFields,
  scopes: Type.Optional(Type.Array(ScopeSchema, {
    minItems: 1, maxItems: 4,
    description: 'what the key may do; default read and trade. No more than the credential creating it may do.',
  })),
}, 'ApiKeyCreateBody');
const ApiKeyBody = Body(apiKeyFields, 'ApiKeyUpdateBody (scopes are fixed at creation)');
const ApiKeyParams = Type.Object({
  apiKeyId: Type.String({ pattern: '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$', description: 'uuid' }),
});
const ApiKeyListQuery = Type.Object({
  withDeleted: Type.Optional(YesFlag), withExpired: Type.Optional(YesFlag), limit: Type.Optional(Limit), offset: Type.Optional(Offset),
});
const flag = (v: string | undefined) => v !== undefined && ['yes', 'true', '1'].includes(v.toLowerCase());

export function userRoutes(ctx: RouteContext) {
  return async function plugin(app: FastifyInstance) {
    app.get('/api/user/me', {
      config: { auth: true, scope: 'read' },
      schema: { tags: ['user'], summary: 'Your profile (exchangeId names your channels)', response: { 200: UserWireRecord, ...errors } },
    }, async (req) => {
      const user = userOf(req);
      return toUser(user, ctx.engine.account(user.exchangeId).marginCall);
    });

    const tags = ['api-key (deprecated)'];
    app.get('/api/user/api-key', {
      config: { auth: true, scope: 'account' },
      schema: {
        tags, summary: 'List API keys', querystring: ApiKeyListQuery,
        response: { 200: Type.Object({ list: Type.Array(ApiKeyWireRecord), count: Type.Integer() }), ...errors },
      },
    }, async (req) => {
      const q = req.query as Static<typeof ApiKeyListQuery>;
      const r = await ctx.auth.listApiKeys(userOf(req).id, { withDeleted: flag(q.withDeleted), withExpired: flag(q.withExpired), limit: q.limit ?? 50, offset: q.offset ?? 0 });
      return { list: r.list.map(toApiKey), count: r.count };
    });

    app.post('/api/user/api-key', {
      config: { auth: true, scope: 'account' },
      schema: { tags, summary: 'Create an API key (the key is returned once)', body: ApiKeyCreateBody, response: { 200: ApiKeyCreatedRecord, ...errors } },
      // Refusals come before any body check.
      preValidation: async (req) => requireScopesToMint(req, () => requestedKeyScopes(req.body)),
    }, async (req) => toApiKeyCreated(await ctx.auth.createApiKey(userOf(req).id, (req.body ?? {}) as Static<typeof ApiKeyCreateBody>)));

    app.put('/api/user/api-key/:apiKeyId', {
      config: { auth: true, scope: 'account' },
      // Scopes are fixed at creation (the body refuses them). An API key may not re-date or rename a key
      // wider than itself: the service checks the caller's scopes against the key's.
      schema: { tags, summary: 'Update an API key', params: ApiKeyParams, body: ApiKeyBody, response: { 200: EmptyResponse, ...errors } },
    }, async (req) => {
      await ctx.auth.updateApiKey(userOf(req).id, (req.params as Static<typeof ApiKeyParams>).apiKeyId, req.body as Static<typeof ApiKeyBody>, req.auth?.scopes);
      return {};
    });

    app.delete('/api/user/api-key/:apiKeyId', {
      config: { auth: true, scope: 'account' },
      schema: { tags, summary: 'Delete an API key', params: ApiKeyParams, response: { 200: EmptyResponse, ...errors } },
    }, async (req) => {
      await ctx.auth.deleteApiKey(userOf(req).id, (req.params as Static<typeof ApiKeyParams>).apiKeyId);
      return {};
    });

    app.put('/api/user/api-key/:apiKeyId/regenerate', {
      config: { auth: true, scope: 'account' },
      schema: { tags, summary: 'Regenerate an API key (the new key is returned once)', params: ApiKeyParams, response: { 200: ApiKeyCreatedRecord, ...errors } },
      // The new secret carries the key's scopes: an API key must hold them all (checked by the service, which
      // reads the key); a grant never gets one.
      preValidation: async (req) => requireScopesToMint(req, () => []),
    }, async (req) => toApiKeyCreated(await ctx.auth.regenerateApiKey(userOf(req).id, (req.params as Static<typeof ApiKeyParams>).apiKeyId, req.auth?.scopes)));
  };
}
