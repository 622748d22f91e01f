/**
 * Operator-only guard of the account routes (mobile-app rules): an admin's wallet session passes, everyone
 * else gets 403, and so does an admin's API key or OAuth grant. Kept in one function so the composition can
 * swap in the shared operator guard (operator token or admin JWT). Used as a preValidation hook, so refusals
 * come before any body check.
 */
import type { FastifyRequest } from 'fastify';
import { userOf } from './authenticate.js';
import { ApiError } from './errors.js';
import { adminNeedsWalletSession } from './operator.js';

export type OperatorGuard = (req: FastifyRequest) => void | Promise<void>;

export const requireAdmin: OperatorGuard = (req) => {
  if (req.auth && req.auth.via !== 'access-token') throw adminNeedsWalletSession();
  if (userOf(req).role !== 'admin') throw new ApiError(403, 'FORBIDDEN', 'Only operators (admin role) may call this route');
};
