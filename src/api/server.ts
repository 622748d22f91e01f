/**
 * HTTP gateway composition: one Fastify instance with strict validation, uniform errors, authentication,
 * OpenAPI, and one plugin per resource. The /auth routes can instead be served by a second instance on
 * their own port (`buildAuthServer`), as the spec's separate {auth_url} suggests.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { installAuthentication } from './authenticate.js';
import type { ProxyTrust } from './client-ip.js';
import type { RouteContext } from './context.js';
import { DEFAULT_API_CONFIG, type ApiDeps } from './ports.js';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './errors.js';
import { installJsonParser } from './json-parser.js';
import { installAsyncApi } from './asyncapi.js';
import { installOpenApi } from './openapi.js';
import { requireOperator } from './operator.js';
import { installRateLimits } from './rate-limits.js';
import type { RouteScope } from './scopes.js';
import { adminMarketRoutes } from './routes/admin-market.js';
import { adminClusterRoutes } from './routes/admin-cluster.js';
import { adminSystemRoutes } from './routes/admin-system.js';
import { adminUserRoutes } from './routes/admin-users.js';
import { authRoutes } from './routes/auth.js';
import { candleRoutes } from './routes/candles.js';
import { clientConfigRoutes } from './routes/client-config.js';
import { fundsRoutes } from './routes/funds.js';
import { historyRoutes } from './routes/history.js';
import { marketRoutes } from './routes/market.js';
import { marketDataTokenRoutes } from './routes/market-data-token.js';
import { metricsRoutes } from './routes/metrics.js';
import { mobileAppRoutes } from './routes/mobile-app.js';
import { oauthAdminRoutes, oauthRoutes } from './routes/oauth.js';
import { orderManageRoutes } from './routes/order-manage.js';
import { orderQueryRoutes } from './routes/order-queries.js';
import { ordersRoutes } from './routes/orders.js';
import { positionRoutes } from './routes/positions.js';
import { profileRoutes } from './routes/profile.js';
import { signalRoutes } from './routes/signals.js';
import { statisticsRoutes } from './routes/statistics.js';
import { systemRoutes } from './routes/system.js';
import { tpslRoutes } from './routes/tpsl.js';
import { userRoutes } from './routes/user.js';
import { installValidation } from './validation.js';
import { webAppRoutes } from './web-app.js';

export interface ServerOptions {
  logger?: FastifyServerOptions['logger'];
  /** Serve /auth/* on this instance (default true). Set false when `buildAuthServer` runs on authPort. */
  includeAuthRoutes?: boolean;
  /** Serve /openapi.json and /docs (default true). */
  docs?: boolean;
  /** Proxies whose X-Forwarded-For names the client (src/api/client-ip.ts); default none: the TCP peer is the client. */
  trustProxy?: ProxyTrust | false;
  /** Directory of the built web terminal served at / (default web/dist; false = none). */
  webRoot?: string | false;
}

/** A registered route and how it authenticates (what the route-scope test walks). */
export interface RegisteredRoute {
  method: string;
  url: string;
  auth: boolean;
  scope: RouteScope | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered on this instance, in registration order. */
    registeredRoutes: RegisteredRoute[];
  }
}

function contextOf(deps: ApiDeps): RouteContext {
  return { ...deps, cfg: { ...DEFAULT_API_CONFIG, ...deps.config }, newId: deps.newId ?? randomUUID };
}

async function base(ctx: RouteContext, opts: ServerOptions, title: string): Promise<FastifyInstance> {
  const t = ctx.cfg.timeouts;
  const app = Fastify({
    logger: opts.logger ?? false,
    bodyLimit: ctx.cfg.bodyLimit,
    trustProxy: opts.trustProxy ?? false,
    requestTimeout: t.requestMs,
    connectionTimeout: t.connectionMs,
    keepAliveTimeout: t.keepAliveMs,
    // Node checks the header and request deadlines on a timer (default every 30 s, which would let a slow
    // client outlive a short deadline by that much): check a few times per deadline, at most once a second.
    http: { headersTimeout: t.headersMs, requestTimeout: t.requestMs, connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.floor(t.headersMs / 4))) },
    // Route params/queries are untrusted input; cap their size before they reach the validator.
    routerOptions: { maxParamLength: 200 },
    // Router errors (bad percent-escape, over-long parameter) in the `{ error: { code, message } }` shape.
    frameworkErrors,
    clientErrorHandler,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // During a graceful stop, requests that arrive on an open keep-alive socket are served (with
    // `Connection: close`) while the sequencer still runs, instead of Fastify's bare 503 (app/exchange.ts).
    return503OnClosing: false,
  });
  const routes: RegisteredRoute[] = [];
  app.decorate('registeredRoutes', routes);
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) routes.push({ method, url: r.url, auth: r.config?.auth === true, scope: r.config?.scope });
  });
  installErrorHandling(app, ctx.cfg.bodyLimit);
  installValidation(app);
  installJsonParser(app, ctx.cfg.bodyLimit);
  installAuthentication(app, ctx.auth);
  await installRateLimits(app, ctx.cfg.rateLimits);
  if (opts.docs ?? true) await installOpenApi(app, title);
  return app;
}

export async function buildServer(deps: ApiDeps, opts: ServerOptions = {}): Promise<FastifyInstance> {
  const ctx = contextOf(deps);
  const app = await base(ctx, opts, 'Perpetual futures exchange API');
  if (opts.docs ?? true) installAsyncApi(app, ctx.channelEnv ?? 'futures-perp-dev');
  await app.register(systemRoutes(ctx));
  await app.register(marketRoutes(ctx));
  await app.register(candleRoutes(ctx));
  await app.register(clientConfigRoutes(ctx));
  await app.register(ordersRoutes(ctx));
  await app.register(orderManageRoutes(ctx));
  await app.register(orderQueryRoutes(ctx));
  await app.register(positionRoutes(ctx));
  await app.register(tpslRoutes(ctx));
  await app.register(fundsRoutes(ctx));
  await app.register(historyRoutes(ctx));
  await app.register(userRoutes(ctx));
  if (ctx.marketDataTokens) await app.register(marketDataTokenRoutes(ctx.marketDataTokens));
  if (ctx.accounts) await app.register(accountRoutes(ctx, ctx.accounts));
  if (opts.includeAuthRoutes ?? true) await app.register(authRoutes(ctx));
  if (ctx.admin) await app.register(adminRoutes(ctx, ctx.admin.operatorToken));
  await app.register(metricsRoutes(ctx));
  if (opts.webRoot !== false) await app.register(webAppRoutes(opts.webRoot));
  return app;
}

/** /api/admin/*: one encapsulated context whose every route passes `requireOperator` first. */
function adminRoutes(ctx: RouteContext, operatorToken: string) {
  return async function plugin(app: FastifyInstance) {
    app.decorateRequest('operator', null);
    app.addHook('onRequest', requireOperator(operatorToken, ctx.auth));
    await app.register(adminSystemRoutes(ctx));
    await app.register(adminClusterRoutes(ctx));
    await app.register(adminMarketRoutes(ctx));
    await app.register(adminUserRoutes(ctx));
    if (ctx.accounts) await app.register(oauthAdminRoutes(ctx, ctx.accounts.oauth));
  };
}

/** Users/profile, statistics and yield, trade signals, mobile app. */
function accountRoutes(ctx: RouteContext, accounts: NonNullable<RouteContext['accounts']>) {
  return async function plugin(app: FastifyInstance) {
    await app.register(profileRoutes(ctx, accounts));
    await app.register(statisticsRoutes(ctx, accounts));
    await app.register(signalRoutes(ctx, accounts));
    await app.register(mobileAppRoutes(ctx, accounts));
    await app.register(oauthRoutes(ctx, accounts.oauth));
  };
}

/** Only the /auth routes (plus ping), for a separate {auth_url} port. */
export async function buildAuthServer(deps: ApiDeps, opts: ServerOptions = {}): Promise<FastifyInstance> {
  const ctx = contextOf(deps);
  const app = await base(ctx, opts, 'Perpetual futures exchange auth API');
  await app.register(systemRoutes(ctx));
  await app.register(authRoutes(ctx));
  return app;
}
