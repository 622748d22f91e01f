/** GET /api/config: what a browser client needs before it can sign anything or subscribe (no auth). */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { RouteContext } from '../context.js';

const ClientConfig = Type.Object({
  chainId: Type.String({ description: 'Chain id to sign SIWE and EIP-712 messages with (decimal)' }),
  channelEnv: Type.String({ description: 'Prefix of the real-time channel names: {channelEnv}:{name}' }),
  websocketPath: Type.String({ description: 'Path of the Centrifugo-protocol websocket on this host' }),
  fundingIntervalMs: Type.Integer({ description: 'Funding settles at every multiple of this many ms since the epoch (0 = no funding)' }),
}, { description: 'ClientConfig' });

export function clientConfigRoutes(ctx: RouteContext) {
  return async function plugin(app: FastifyInstance) {
    app.get('/api/config', {
      schema: { tags: ['system'], summary: 'Chain id and channel prefix for clients (the web terminal reads it first)', response: { 200: ClientConfig } },
    }, async () => ({ chainId: ctx.chainId, channelEnv: ctx.channelEnv ?? 'futures-perp-dev', websocketPath: '/connection/websocket', fundingIntervalMs: ctx.fundingIntervalMs ?? 0 }));
  };
}
