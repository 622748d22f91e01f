/**
 * AsyncAPI 3 document of the real-time channels at GET /asyncapi.json, built from the channel table of
 * channel-docs.ts (the payload schemas are the TypeBox records the OpenAPI document uses). One channel per channel
 * family (its address a pattern with `{parameters}`), one receive operation each; owner-only channels carry the
 * `accessToken` security scheme and `x-access: owner`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { channelComponentSchemas, channelTable, REALTIME_PATH, REALTIME_PROTOCOL, type ChannelSpec } from './channel-docs.js';

export interface AsyncApiOptions {
  /** Channel prefix ({env}): the default value of the `env` parameter. */
  env: string;
  /** host[:port] and websocket scheme the server entry points at. */
  host: string;
  protocol: 'ws' | 'wss';
}

/** The channel id of a family: its name without the parameters (`orderBook-{instrument}-best` → `orderBook-best`). */
export function channelId(spec: Pick<ChannelSpec, 'name'>): string {
  return spec.name.replace(/-?\{\w+\}/g, '');
}

export function asyncApiDocument(opts: AsyncApiOptions): Record<string, unknown> {
  const table = channelTable();
  const env = { description: 'channel prefix (CHANNEL_ENV of the server)', default: opts.env, examples: [opts.env] };
  const channels: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  const messages: Record<string, unknown> = {};
  for (const c of table) {
    const id = channelId(c);
    channels[id] = {
      address: `{env}:${c.name}`,
      title: id,
      description: c.description + (c.compare ? `. Clients compare ${c.compare}.` : '.'),
      parameters: { env, ...c.parameters },
      messages: { [c.payload]: { $ref: `#/components/messages/${c.payload}` } },
      'x-access': c.access,
      'x-subscribe-data': c.access === 'owner' ? { accessToken: '<JWT of the owner>' } : null,
      'x-recoverable': c.recoverable,
      ...(c.compare && { 'x-compare-by': c.compare }),
    };
    operations[`receive-${id}`] = {
      action: 'receive',
      channel: { $ref: `#/channels/${id}` },
      messages: [{ $ref: `#/channels/${id}/messages/${c.payload}` }],
      ...(c.access === 'owner' && { security: [{ $ref: '#/components/securitySchemes/accessToken' }] }),
    };
    messages[c.payload] = { name: c.payload, contentType: 'application/json', payload: { $ref: `#/components/schemas/${c.payload}` } };
  }
  return {
    asyncapi: '3.0.0',
    info: { title: 'perpx real-time channels', version: '1.0.0', description: REALTIME_PROTOCOL },
    defaultContentType: 'application/json',
    servers: { exchange: { host: opts.host, protocol: opts.protocol, pathname: REALTIME_PATH, description: 'Centrifugo protocol v2 (JSON)' } },
    channels,
    operations,
    components: {
      schemas: channelComponentSchemas(),
      messages,
      securitySchemes: {
        accessToken: {
          type: 'http', scheme: 'bearer', bearerFormat: 'JWT',
          description: 'Access token of a wallet session (POST /auth/user/sign-up), sent as the subscribe data `{ "accessToken": "<JWT>" }`; '
            + 'only the user whose exchangeId is in the channel name may subscribe',
        },
      },
    },
  };
}

function requestServer(req: FastifyRequest): Pick<AsyncApiOptions, 'host' | 'protocol'> {
  return { host: req.host, protocol: req.protocol === 'https' ? 'wss' : 'ws' };
}

/** GET /asyncapi.json (public, beside /docs and /openapi.json). */
export function installAsyncApi(app: FastifyInstance, env: string): void {
  app.get('/asyncapi.json', { schema: { hide: true } }, async (req) => asyncApiDocument({ env, ...requestServer(req) }));
}
