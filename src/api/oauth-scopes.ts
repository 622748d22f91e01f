/** Requests authenticated with an OAuth grant reach only the routes their scopes cover (403 otherwise). */
import type { FastifyInstance } from 'fastify';
import { scopeFor } from '../accounts/oauth-grants.js';
import { ApiError } from './errors.js';

/**
 * Authentication is a route-level onRequest hook (src/api/authenticate.ts), and app-level onRequest hooks run
 * before route-level ones; so the scope check runs at preParsing: after authentication, before the body is read.
 */
export function installOauthScopes(app: FastifyInstance): void {
  app.addHook('preParsing', async (request, _reply, payload) => {
    if (request.auth?.via !== 'oauth-grant') return payload;
    const need = scopeFor(request.method, request.routeOptions.url ?? '');
    if (need === null) throw new ApiError(403, 'INSUFFICIENT_SCOPE', 'OAuth grants cannot call this route; sign in with the wallet');
    if (!request.auth.scopes?.includes(need)) throw new ApiError(403, 'INSUFFICIENT_SCOPE', `This OAuth grant lacks the "${need}" scope`);
    return payload;
  });
}
