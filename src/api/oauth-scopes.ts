/** Requests authenticated with an OAuth grant reach only the routes their scopes cover (403 otherwise). */
import type { FastifyInstance } from 'fastify';
import { scopeFor } from '../accounts/oauth-grants.js';
import { ApiError } from './errors.js';

/** Install after installAuthentication (hooks run in order), before the routes. */
export function installOauthScopes(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (request.auth?.via !== 'oauth-grant') return;
    const need = scopeFor(request.method, request.routeOptions.url ?? '');
    if (need === null) throw new ApiError(403, 'INSUFFICIENT_SCOPE', 'OAuth grants cannot call this route; sign in with the wallet');
    if (!request.auth.scopes?.includes(need)) throw new ApiError(403, 'INSUFFICIENT_SCOPE', `This OAuth grant lacks the "${need}" scope`);
  });
}
