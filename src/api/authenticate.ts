/**
 * Authentication: routes declare `config: { auth: true }`; an onRequest hook (runs before the body is read,
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
  app.addHook('onRequest', async (request) => {
    if (!request.routeOptions.config?.auth) return;
    const { authorization } = request.headers;
    const apiKey = request.headers['x-api-key'];
    if (!authorization && !apiKey) throw unauthorized('Missing credentials: send Authorization: Bearer <token> or x-api-key');
    const ctx = await auth.authenticate({ authorization, 'x-api-key': apiKey });
    if (!ctx) throw unauthorized('Invalid or expired credentials');
    request.auth = ctx;
  });
}

/** The authenticated user of a protected route (the hook guarantees it is set). */
export function userOf(request: FastifyRequest): UserRecord {
  if (!request.auth) throw unauthorized();
  return request.auth.user;
}

/** OpenAPI security requirement for protected routes. */
export const SECURITY: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { apiKey: [] }];
