/** GET /api/ping: liveness, no auth. */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { RouteContext } from '../context.js';

const PingResponse = Type.Object({
  time: Type.Number({ description: 'server time, ms since the epoch (what public clients read)' }),
  ok: Type.Boolean(),
  t: Type.Number({ description: 'the same time, ms (earlier field name)' }),
}, { description: 'PingResponse' });

export function systemRoutes(ctx: RouteContext) {
  return async function plugin(app: FastifyInstance) {
    app.get('/api/ping', { schema: { tags: ['system'], summary: 'Heartbeat', response: { 200: PingResponse } } }, async () => {
      const now = ctx.clock();
      return { time: now, ok: true, t: now };
    });
  };
}
