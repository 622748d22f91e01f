/**
 * Serves the browser trading terminal (web/, built into web/dist by `npm install` / `npm start`) at `/`.
 * One route per built file (no wildcard), so /api, /auth, /docs, /openapi.json, /connection/websocket and
 * /metrics can never be shadowed and unknown paths keep the API's 404. Hashed assets are immutable for a
 * year; index.html is revalidated on every load so a rebuilt terminal is picked up at once. The page
 * carries a strict Content-Security-Policy with frame-ancestors 'none': a demo key may sit in its storage.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { notFound } from './errors.js';

export const DEFAULT_WEB_ROOT = fileURLToPath(new URL('../../web/dist/', import.meta.url));

/**
 * 'self' covers same-origin ws:/wss: in CSP Level 3 browsers; inline scripts and styles, eval, plugins,
 * framing, <base> and form posts elsewhere are all refused.
 */
export const WEB_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE_HEADERS: Record<string, string> = {
  'content-security-policy': WEB_CSP,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

const IMMUTABLE = 'public, max-age=31536000, immutable';

export function webAppRoutes(root: string = DEFAULT_WEB_ROOT) {
  return async function plugin(app: FastifyInstance) {
    app.addHook('onSend', async (_req, reply, payload) => {
      for (const [k, v] of Object.entries(PAGE_HEADERS)) reply.header(k, v);
      return payload;
    });
    if (!existsSync(`${root}/index.html`)) {
      app.get('/', { schema: { hide: true } }, async () => {
        throw notFound('WEB_TERMINAL_NOT_BUILT', 'The web terminal is not built: run `npm install` (or `npm run build -w web`)');
      });
      return;
    }
    await app.register(fastifyStatic, {
      root,
      wildcard: false,
      index: ['index.html'],
      decorateReply: false,
      cacheControl: false,
      etag: true,
      lastModified: true,
      setHeaders(res, path) {
        res.setHeader('cache-control', /[/\\]assets[/\\]/.test(path) ? IMMUTABLE : 'no-cache');
      },
    });
  };
}
