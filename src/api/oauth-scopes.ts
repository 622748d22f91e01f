/** Requests authenticated with an OAuth grant reach only the routes their scopes cover (403 otherwise). */
import type { FastifyInstance } from 'fastify';
import { scopeFor } from '../accounts/oauth-grants.js';
import { ApiError } from './errors.js';

/**
 * Authentication is a route-level onRequest hook (src/api/authenticate.ts), and app-level onRequest hooks run
 * before route-level ones; so the scope check runs at preParsing: after authentication, before the body is read.
 */
export function installOauthScopes(app: FastifyInstance): void {
  // A callback hook, not an async one: it runs on every request of every route, and an async hook costs a
  // promise and a microtask per request even when (almost always) there is no grant to check.
  app.addHook('preParsing', (request, _reply, payload, done) => {
    if (request.auth?.via !== 'oauth-grant') return done(null, payload);
    const need = scopeFor(request.method, request.routeOptions.url ?? '');
    if (need === null) return done(new ApiError(403, 'INSUFFICIENT_SCOPE', 'OAuth grants cannot call this route; sign in with the wallet'));
    if (!request.auth.scopes?.includes(need)) return done(new ApiError(403, 'INSUFFICIENT_SCOPE', `This OAuth grant lacks the "${need}" scope`));
    done(null, payload);
  });
}
