/** OpenAPI 3 document (generated from the route schemas) at GET /openapi.json, Swagger UI at /docs. */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { Scope } from '../auth/types.js';
import { channelComponentSchemas, realtimeExtension } from './channel-docs.js';

/** What each scope allows (docs/security.md, "Scopes"). */
const SCOPE_DOCS: Record<Scope, string> = {
  read: 'Read your account: balances, orders, fills, positions, TpSl, transfers, statistics, profile',
  trade: 'Place, replace and cancel orders; close positions; TpSl; leverage; the demo faucet',
  withdraw: 'Withdraw collateral',
  account: 'Edit your profile and favourites, publish trade signals, manage API keys and OAuth approvals',
};

/** `x-` extensions are copied into the document as they are; the option types do not list them. */
function realtimeExtensionField(): object {
  return { 'x-realtime': realtimeExtension() };
}

export async function installOpenApi(app: FastifyInstance, title: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title,
        version: '1.0.0',
        description: 'Errors always have the body { "error": { "code": string, "message": string } } and a 4xx status. '
          + 'Requests spend budgets (per client IP; sign-in per IP; order entry, faucet and other authenticated requests per API key, '
          + 'OAuth grant or user): one past a budget is answered 429 RATE_LIMITED with a Retry-After header (seconds). '
          + 'Amounts and prices accept a string or a number and are rounded half-up to 8 decimal places. '
          + 'Real-time channels (websocket) and their payloads: the `x-realtime` extension and the Channel* schemas.',
      },
      ...realtimeExtensionField(),
      components: {
        schemas: channelComponentSchemas(),
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Wallet session (SIWE sign-in): every scope' },
          apiKey: {
            type: 'apiKey', in: 'header', name: 'x-api-key',
            description: "Needs the operation's scope (x-scope; the oauthGrant scopes list them); a key created without scopes has read and trade",
          },
          oauthGrant: {
            type: 'oauth2', description: 'Grant token (Bearer pxo_…) of an OAuth integration the user approved; needs the scope listed here',
            flows: { authorizationCode: { authorizationUrl: '/api/oauth', tokenUrl: '/api/oauth/token', scopes: SCOPE_DOCS } },
          },
          operatorToken: { type: 'apiKey', in: 'header', name: 'x-operator-token' },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
