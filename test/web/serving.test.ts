/**
 * How the exchange serves the web terminal: / is the built page with a strict CSP and no framing, hashed
 * assets are immutable, index.html is revalidated, the API's own paths and unknown paths are untouched; and
 * the terminal's REST types (web/src/api/schema.d.ts) match the server's OpenAPI document.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { DEFAULT_WEB_ROOT } from '../../src/api/web-app.js';
import { renderWebApiTypes, SCHEMA_FILE } from '../../scripts/gen-web-api.js';
import { http, startTestExchange, type TestExchange } from '../app/client.js';

const built = existsSync(`${DEFAULT_WEB_ROOT}/index.html`) ? false : 'web/dist is not built (npm install builds it)';

describe('web terminal serving', { skip: built }, () => {
  let tx: TestExchange;
  before(async () => {
    tx = await startTestExchange();
  });
  after(async () => {
    await tx?.stop();
  });

  it('serves the page with its security headers and caching', async () => {
    const res = await fetch(`${tx.url}/`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    for (const d of ["default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'"]) assert.ok(csp.includes(d), d);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    const html = await res.text();
    assert.doesNotMatch(html, /<script>(?!<\/script>)|<script[^>]*>[^<]+<\/script>/, 'no inline script');
    const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(asset, 'the page loads a hashed bundle');
    const a = await fetch(tx.url + asset);
    assert.equal(a.status, 200);
    assert.equal(a.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.match(a.headers.get('content-type') ?? '', /javascript/);
  });

  it('leaves the API, docs and unknown paths alone', async () => {
    assert.equal((await http(tx.url, 'GET', '/api/ping')).status, 200);
    assert.equal((await http(tx.url, 'GET', '/openapi.json')).status, 200);
    const unknown = await http(tx.url, 'GET', '/api/nope');
    assert.equal(unknown.status, 404);
    assert.equal(typeof unknown.body?.error?.code, 'string');
    assert.equal((await http(tx.url, 'GET', '/not-a-file.js')).status, 404);
    assert.equal((await http(tx.url, 'GET', '/../package.json')).status, 404);
    const cfg = await http(tx.url, 'GET', '/api/config');
    assert.deepEqual(cfg.body, { chainId: '16182', channelEnv: 'futures-perp-dev', websocketPath: '/connection/websocket', fundingIntervalMs: 0 });
  });
});

describe('web terminal REST types', () => {
  it('web/src/api/schema.d.ts matches the OpenAPI document (npm run gen:api -w web)', async () => {
    assert.equal(readFileSync(SCHEMA_FILE, 'utf8'), await renderWebApiTypes());
  });
});
