/** GET /metrics: Prometheus text exposition (no auth, like most scrape targets; bind HOST accordingly). */
import type { FastifyInstance } from 'fastify';
import type { RouteContext } from '../context.js';

export function metricsRoutes(ctx: RouteContext) {
  return async function plugin(app: FastifyInstance) {
    const metrics = ctx.metrics;
    if (!metrics) return;
    app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
      const body = await metrics.render();
      return reply.type(metrics.contentType).send(body);
    });
  };
}
