/**
 * Request budgets (@fastify/rate-limit, one in-memory counter store per budget). Every request spends the
 * per-IP budget first (onRequest, before authentication, so floods of bad credentials and unknown routes
 * count too). Then, by route:
 *  - sign-in: unauthenticated routes that issue or check credentials (nonce, SIWE sign-in, refresh, OAuth
 *    consent/code exchange), per IP, at onRequest;
 *  - orders, faucet, reads: authenticated routes, per credential (API key → the key, OAuth grant → the
 *    grant, access token → the user), after authentication and before the body is read (preParsing), so
 *    malformed bodies count as well. `orders` are the routes that declare the `trade` scope (but the
 *    faucet); `reads` is every other authenticated route.
 * An exhausted budget answers 429 RATE_LIMITED with Retry-After (seconds until its window restarts).
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { ipKey } from './client-ip.js';
import { ApiError } from './errors.js';

/** `max` requests per `windowMs` (fixed window, starting at a client's first request); max 0 = no limit. */
export interface Budget {
  max: number;
  windowMs: number;
}

export interface RateLimits {
  /** Every request, per client IP. */
  ip: Budget;
  signIn: Budget;
  orders: Budget;
  faucet: Budget;
  reads: Budget;
}

/**
 * Far above what a trading bot or the web client needs (it sends ~6 requests at once on a page load), far
 * below what a flood needs to hurt: a client's whole IP budget is ~1 % of what one core serves.
 */
export const DEFAULT_RATE_LIMITS: RateLimits = {
  ip: { max: 1200, windowMs: 10_000 },
  signIn: { max: 60, windowMs: 60_000 },
  orders: { max: 300, windowMs: 10_000 },
  faucet: { max: 10, windowMs: 60_000 },
  reads: { max: 600, windowMs: 10_000 },
};

type RouteBudget = Exclude<keyof RateLimits, 'ip'>;

/** Clients tracked per budget; beyond it the least recently seen client's counter is dropped. */
const TRACKED_CLIENTS = 100_000;

const WHAT: Record<keyof RateLimits, string> = {
  ip: 'requests per IP address',
  signIn: 'sign-in requests per IP address',
  orders: 'order requests per credential',
  faucet: 'faucet requests per credential',
  reads: 'requests per credential',
};

/** The budget a route spends besides the per-IP one (null: only the per-IP one), from its declared auth and scope. */
export function budgetOf(method: string, url: string, config: { auth?: boolean; scope?: string } | undefined): RouteBudget | null {
  if (config?.auth !== true) return url.startsWith('/auth/') || /^\/api\/oauth(\/|$)/.test(url) ? 'signIn' : null;
  if (method === 'POST' && url === '/api/user/faucet') return 'faucet';
  return config.scope === 'trade' ? 'orders' : 'reads';
}

/** Whose per-credential budget an authenticated request spends. */
function credentialKey(request: FastifyRequest): string {
  const a = request.auth;
  if (!a) return `ip:${ipKey(request.ip)}`;
  if (a.via === 'api-key') return `key:${a.credentialId ?? a.user.id}`;
  if (a.via === 'oauth-grant') return `grant:${a.credentialId ?? a.user.id}`;
  return `user:${a.user.id}`;
}

type Check = (request: FastifyRequest) => Promise<{ isAllowed: boolean; isExceeded?: boolean; ttl?: number }>;

function refusal(name: keyof RateLimits, budget: Budget, reply: FastifyReply, ttlMs: number): ApiError {
  const retryAfter = Math.max(1, Math.ceil(ttlMs / 1000));
  reply.header('retry-after', String(retryAfter));
  const window = budget.windowMs % 1000 === 0 ? `${budget.windowMs / 1000} s` : `${budget.windowMs} ms`;
  return new ApiError(429, 'RATE_LIMITED', `Rate limit exceeded: at most ${budget.max} ${WHAT[name]} per ${window}; retry in ${retryAfter} s`);
}

type OnRequest = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void;
type PreParsing = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void) => void;

/** Registers the plugin and the hooks; call before any route is added. */
export async function installRateLimits(app: FastifyInstance, limits: RateLimits): Promise<void> {
  await app.register(rateLimit, { global: false });
  const checkOf = (name: keyof RateLimits, key: (request: FastifyRequest) => string): Check | null => {
    const { max, windowMs } = limits[name];
    if (max === 0) return null;
    // `cache` (counters kept) is honoured at run time though the option type leaves it out.
    return app.createRateLimit({ max, timeWindow: windowMs, keyGenerator: key, cache: TRACKED_CLIENTS } as Parameters<FastifyInstance['createRateLimit']>[0]);
  };
  // Callback hooks: the check is a promise either way; an async hook would add another per request.
  const onRequest = (name: keyof RateLimits, check: Check): OnRequest => (request, reply, done) => {
    check(request).then((r) => done(r.isExceeded ? refusal(name, limits[name], reply, r.ttl ?? 0) : undefined), done);
  };
  const preParsing = (name: keyof RateLimits, check: Check): PreParsing => (request, reply, payload, done) => {
    check(request).then((r) => (r.isExceeded ? done(refusal(name, limits[name], reply, r.ttl ?? 0)) : done(null, payload)), (err: Error) => done(err));
  };
  const byIp = (request: FastifyRequest) => ipKey(request.ip);

  const ipCheck = checkOf('ip', byIp);
  if (ipCheck) app.addHook('onRequest', onRequest('ip', ipCheck));

  const signIn = checkOf('signIn', byIp);
  const perCredential = new Map<RouteBudget, PreParsing>();
  for (const name of ['orders', 'faucet', 'reads'] as const) {
    const check = checkOf(name, credentialKey);
    if (check) perCredential.set(name, preParsing(name, check));
  }
  const signInHook = signIn && onRequest('signIn', signIn);
  app.addHook('onRoute', (route) => {
    const method = Array.isArray(route.method) ? route.method[0] : route.method;
    const name = budgetOf(method ?? 'GET', route.url ?? route.path, route.config);
    if (name === 'signIn' && signInHook) route.onRequest = [...hooksOf(route.onRequest), signInHook] as RouteOptions['onRequest'];
    const hook = name && name !== 'signIn' ? perCredential.get(name) : undefined;
    if (hook) route.preParsing = [...hooksOf(route.preParsing), hook] as RouteOptions['preParsing'];
  });
}

function hooksOf<T>(h: T | T[] | undefined): T[] {
  return h === undefined ? [] : Array.isArray(h) ? h : [h];
}
