/**
 * Authentication: routes declare `config: { auth: true }`; their onRequest hook (runs before the body is read,
 * so unauthenticated callers cost nothing) resolves `Authorization: Bearer <access>` or `x-api-key` through
 * AuthService.authenticate and stores the context on the request, or answers 401.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuthContext, AuthService, UserRecord } from '../auth/types.js';
import { unauthorized } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
  }
  interface FastifyContextConfig {
    /** true: the route needs a valid access token or API key. */
    auth?: boolean;
  }
}

export function installAuthentication(app: FastifyInstance, auth: AuthService): void {
  app.decorateRequest('auth', null);
  const authenticate = async (request: FastifyRequest): Promise<void> => {
    const { authorization } = request.headers;
    const apiKey = request.headers['x-api-key'];
    if (!authorization && !apiKey) throw unauthorized('Missing credentials: send Authorization: Bearer <token> or x-api-key');
    const ctx = await auth.authenticate({ authorization, 'x-api-key': apiKey });
    if (!ctx) throw unauthorized('Invalid or expired credentials');
    request.auth = ctx;
  };
  // Attached per protected route rather than as a global hook, so public routes (depth, market data)
  // do not pay for an async hook per request.
  app.addHook('onRoute', (route) => {
    if (!route.config?.auth) return;
    const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [authenticate, ...own] as typeof route.onRequest;
  });
}

/** The authenticated user of a protected route (the hook guarantees it is set). */
export function userOf(request: FastifyRequest): UserRecord {
  if (!request.auth) throw unauthorized();
  return request.auth.user;
}

/** OpenAPI security requirement for protected routes. */
export const SECURITY: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { apiKey: [] }];
