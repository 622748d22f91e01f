/**
 * Authentication: routes declare `config: { auth: true, scope }`; their onRequest hook (runs before the body is
 * read, so unauthenticated callers cost nothing) resolves `Authorization: Bearer <access>`, an OAuth grant or
 * `x-api-key` through AuthService.authenticate, refuses a key or grant without the route's scope (403, see
 * scopes.ts) and stores the context on the request, or answers 401.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthContext, AuthService, UserRecord } from '../auth/types.js';
import { unauthorized } from './errors.js';
import { scopeRefusal, securityFor, type RouteScope } from './scopes.js';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
  }
  interface FastifyContextConfig {
    /** true: the route needs a valid access token, API key or OAuth grant. */
    auth?: boolean;
    /**
     * With auth: the scope an API key or OAuth grant needs to call the route; 'wallet-session' (or none
     * declared): only a wallet session may. Also sets the route's OpenAPI security requirement.
     */
    scope?: RouteScope;
  }
}

export function installAuthentication(app: FastifyInstance, auth: AuthService): void {
  app.decorateRequest('auth', null);
  // A callback hook that answers synchronously when the credential is known (a token verified before, an
  // API key seen recently): no promise per request on the common path; authenticate() only otherwise.
  // No closure is created per request on the common path: tsx compiles with keepNames, so every named
  // function expression evaluated costs an Object.defineProperty of its name besides the allocation.
  // One hook per route (made at registration), so the route's scope is at hand without a lookup per request.
  const authenticateFor = (need: RouteScope | undefined) => (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void => {
    const { authorization } = request.headers;
    const apiKey = request.headers['x-api-key'];
    if (!authorization && !apiKey) return done(unauthorized('Missing credentials: send Authorization: Bearer <token> or x-api-key'));
    const headers = { authorization, 'x-api-key': apiKey };
    let known: AuthContext | null | undefined;
    try {
      known = auth.authenticateNow?.(headers);
    } catch (err) {
      return done(err instanceof Error ? err : new Error(String(err)));
    }
    if (known !== undefined) return settle(request, done, known, need);
    auth.authenticate(headers).then((ctx) => settle(request, done, ctx, need), (err: unknown) => done(err instanceof Error ? err : new Error(String(err))));
  };
  // Attached per protected route rather than as a global hook, so public routes (depth, market data)
  // do not pay for an async hook per request.
  app.addHook('onRoute', (route) => {
    if (!route.config?.auth) return;
    const need = route.config.scope;
    const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [authenticateFor(need), ...own] as typeof route.onRequest;
    // The documented security requirement follows the declared scope (a fresh object: schemas may be shared).
    if (route.schema) route.schema = { ...route.schema, security: securityFor(need), 'x-scope': need ?? 'wallet-session' } as typeof route.schema;
  });
}

function settle(request: FastifyRequest, done: (err?: Error) => void, ctx: AuthContext | null, need: RouteScope | undefined): void {
  if (!ctx) return done(unauthorized('Invalid or expired credentials'));
  const refusal = scopeRefusal(ctx, need);
  if (refusal) return done(refusal);
  request.auth = ctx;
  done();
}

/** The authenticated user of a protected route (the hook guarantees it is set). */
export function userOf(request: FastifyRequest): UserRecord {
  if (!request.auth) throw unauthorized();
  return request.auth.user;
}
