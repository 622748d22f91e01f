/**
 * `requireOperator`: the guard of /api/admin/*. Accepts the operator token (`x-operator-token`, the CLI's
 * credential from the data directory) or the access JWT (wallet session) of a user with role `admin`.
 * Missing or invalid credentials → 401; an API key or OAuth grant → 403 INSUFFICIENT_SCOPE whatever its
 * user's role (scopes never reach admin routes); a wallet session of a user who is not an admin → 403.
 */
import type { FastifyRequest } from 'fastify';
import { OPERATOR_TOKEN_HEADER, operatorTokenMatches } from '../auth/operator-token.js';
import type { AuthService } from '../auth/types.js';
import { ApiError, unauthorized } from './errors.js';

/** Admin routes take no API key or OAuth grant, whatever its scopes or its user's role. */
export const adminNeedsWalletSession = () =>
  new ApiError(403, 'INSUFFICIENT_SCOPE', "Operator routes accept only the operator token or an admin's wallet session, never an API key or OAuth grant");

export interface OperatorIdentity {
  /** 'operator-token', or the exchangeId of the admin user. */
  via: 'operator-token' | 'admin-user';
  exchangeId?: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    operator: OperatorIdentity | null;
  }
}

export function requireOperator(operatorToken: string, auth: AuthService) {
  return async function operatorGuard(request: FastifyRequest): Promise<void> {
    const presented = request.headers[OPERATOR_TOKEN_HEADER];
    if (typeof presented === 'string' && presented.length > 0) {
      if (!operatorTokenMatches(presented, operatorToken)) throw unauthorized('Invalid operator token');
      request.operator = { via: 'operator-token' };
      return;
    }
    const { authorization } = request.headers;
    const apiKey = request.headers['x-api-key'];
    if (!authorization && !apiKey) {
      throw unauthorized(`Missing credentials: send ${OPERATOR_TOKEN_HEADER} or an admin's Authorization: Bearer <token>`);
    }
    const ctx = await auth.authenticate({ authorization, 'x-api-key': apiKey });
    if (!ctx) throw unauthorized('Invalid or expired credentials');
    if (ctx.via !== 'access-token') throw adminNeedsWalletSession();
    if (ctx.user.role !== 'admin') throw new ApiError(403, 'FORBIDDEN', 'Operator access needs the admin role');
    request.auth = ctx;
    request.operator = { via: 'admin-user', exchangeId: ctx.user.exchangeId };
  };
}

/** OpenAPI security requirement of the admin routes. */
export const OPERATOR_SECURITY: Array<Record<string, string[]>> = [{ operatorToken: [] }, { bearerAuth: [] }];
