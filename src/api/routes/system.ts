/** GET /api/ping: liveness, no auth. */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { RouteContext } from '../context.js';

const PingResponse = Type.Object({ ok: Type.Boolean(), t: Type.Number({ description: 'server time, ms' }) }, { description: 'PingResponse' });

export function systemRoutes(ctx: RouteContext) {
  return async function plugin(app: FastifyInstance) {
    app.get('/api/ping', { schema: { tags: ['system'], summary: 'Heartbeat', response: { 200: PingResponse } } }, async () => ({ ok: true, t: ctx.clock() }));
  };
}
