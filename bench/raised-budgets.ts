/**
 * Benchmarks send far more than one client's budget from one address: budgets raised out of reach, but the
 * rate-limit hooks still run (and are part of what is measured). `max 0` would skip them.
 */
import type { RateLimits } from '../src/api/rate-limits.js';

const RAISED = 1_000_000_000;

/** For `loadConfig` (an exchange started from environment variables). */
export const RAISED_BUDGET_ENV: Record<string, string> = Object.fromEntries(
  ['IP', 'SIGN_IN', 'ORDERS', 'FAUCET', 'READS'].map((b) => [`RATE_LIMIT_${b}_MAX`, String(RAISED)]),
);

/** For `buildServer` (a gateway built from deps). */
export const RAISED_RATE_LIMITS: RateLimits = Object.fromEntries(
  (['ip', 'signIn', 'orders', 'faucet', 'reads'] as const).map((b) => [b, { max: RAISED, windowMs: 60_000 }]),
) as unknown as RateLimits;
