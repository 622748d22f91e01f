/** GET /api/dx-feed/auth: a short-lived websocket connect token for the public channels (the public client's name). */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ErrorBody } from '../../records/common.js';
import { userOf } from '../authenticate.js';
import type { MarketDataTokenIssuer } from '../ports.js';

const MarketDataTokenRecord = Type.Object({
  token: Type.String({ description: 'JWT; send it as the websocket connect token' }),
  expireAt: Type.Integer({ description: 'when the token expires, ms since the epoch' }),
}, { description: 'DxFeedAuthToken' });

export function marketDataTokenRoutes(tokens: MarketDataTokenIssuer) {
  return async function plugin(app: FastifyInstance) {
    app.get('/api/dx-feed/auth', {
      config: { auth: true, scope: 'read' },
      schema: {
        tags: ['market'], summary: 'Market-data token: a websocket connect token for the public channels only',
        description: 'Read-only and short-lived (MARKET_DATA_TOKEN_TTL_SEC). The websocket accepts it as the connect token; it '
          + 'never authorizes a private channel (those need an access token in the subscribe data) nor any REST route.',
        response: { 200: MarketDataTokenRecord, 401: ErrorBody, '4xx': ErrorBody },
      },
    }, async (req) => {
      const { token, expiresAt } = await tokens.issue(userOf(req).id);
      return { token, expireAt: expiresAt };
    });
  };
}
