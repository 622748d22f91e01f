/**
 * Guard of operator routes: the caller must be a user with role `admin`. One small function so another
 * credential (e.g. an operator token) can replace it without touching the routes.
 */
import type { FastifyRequest } from 'fastify';
import type { UserRecord } from '../auth/types.js';
import { userOf } from './authenticate.js';
import { ApiError } from './errors.js';

export type OperatorGuard = (req: FastifyRequest) => UserRecord;

export const requireAdmin: OperatorGuard = (req) => {
  const user = userOf(req);
  if (user.role !== 'admin') throw new ApiError(403, 'FORBIDDEN', 'This operation needs the admin role');
  return user;
};
