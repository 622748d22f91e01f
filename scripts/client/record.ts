/**
 * Records what the real public client sends: starts perpx locally as the tests do (startTestExchange: temp data
 * dir, no demo bots, no moving index), a recording proxy in front of it, and a driver command pointed at the proxy
 * (PERPX_PROXY=http://127.0.0.1:<port>). Every request is forwarded and written, in order, with its status, to
 * <out>/calls.json; docs/client-compat.md says how the client harness runs.
 *
 *   npx tsx scripts/client/record.ts --routes <routes.json> --out test/fixtures/client --client name@version,… -- <driver command…>
 *
 * The driver names the client method it is about to call with `POST /__record/call {"name": …}`; each request is
 * also matched to the gateway route it was made by (routes.json, read from the client's gateway sources) and so to
 * the response type whose schema the replay checks. Values the server hands out and the client sends back later
 * (tokens, nonces, API keys, server ids) are written as `{{vN}}` with where to read them (`captures`), so the
 * replay (test/client/replay.test.ts) can take them from its own responses. Websocket upgrades are piped through
 * and only their path is written.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { startTestExchange } from '../../test/app/client.js';
import { matchRoute, type ClientRoute } from './routes.js';
import { captureValues, type RecordedCall } from './fixtures.js';

const args = process.argv.slice(2);
const opt = (name: string, fallback?: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const dash = args.indexOf('--');
const driver = dash >= 0 ? args.slice(dash + 1) : [];
const out = opt('--out', 'test/fixtures/client')!;
const routes = JSON.parse(readFileSync(opt('--routes', join(out, 'routes.json'))!, 'utf8')) as ClientRoute[];
if (driver.length === 0) throw new Error('usage: record.ts [--routes routes.json] [--out dir] -- <driver command…>');

/** Request headers that matter to the server; the rest (user agent, lengths, hosts) are the transport's. */
const KEPT_HEADERS = ['authorization', 'x-api-key', 'content-type'];

// The replay starts its exchange the same way, so both see the same instruments, prices and budgets.
const exchange = await startTestExchange();
const target = new URL(exchange.url);

const calls: RecordedCall[] = [];
let current = '(setup)';

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const proxy = http.createServer(async (req, res) => {
  const raw = await readBody(req);
  const url = new URL(req.url ?? '/', 'http://proxy');
  if (url.pathname === '/__record/call') {
    current = (JSON.parse(raw.toString('utf8')) as { name: string }).name;
    res.writeHead(204).end();
    return;
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k)) headers[k] = v;
  const method = req.method ?? 'GET';
  const upstream = await fetch(new URL(url.pathname + url.search, target), { method, headers, body: raw.length > 0 ? raw : undefined });
  const text = await upstream.text();
  const route = matchRoute(routes, method, url.pathname, url.searchParams);
  const bodyText = raw.toString('utf8');
  calls.push({
    call: current,
    route: route?.method ?? null,
    type: route?.type ?? null,
    request: {
      method, path: url.pathname, query: url.search.slice(1),
      headers: Object.fromEntries(KEPT_HEADERS.filter((h) => headers[h] !== undefined).map((h) => [h, headers[h]])),
      body: bodyText === '' ? null : bodyText,
    },
    status: upstream.status,
    response: text,
  });
  res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' }).end(text);
});
// Websocket: the upgrade is piped to perpx as it is; only the path is written.
proxy.on('upgrade', (req, socket, head) => {
  calls.push({ call: current, route: null, type: null, request: { method: 'GET', path: req.url ?? '/', query: '', headers: {}, body: null }, status: 101, websocket: true, response: '' });
  const upstream = net.connect(Number(target.port), target.hostname, () => {
    const lines = [`${req.method} ${req.url} HTTP/1.1`, ...Object.entries(req.headers).map(([k, v]) => `${k}: ${k === 'host' ? target.host : String(v)}`)];
    upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length) upstream.write(head);
    socket.pipe(upstream).pipe(socket);
  });
  const close = () => { socket.destroy(); upstream.destroy(); };
  upstream.on('error', close);
  socket.on('error', close);
});
await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
const proxyUrl = `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
console.error(`perpx at ${exchange.url}, recording proxy at ${proxyUrl}; driver: ${driver.join(' ')}`);

const code = await new Promise<number>((resolve) => {
  const child = spawn(driver[0], driver.slice(1), { stdio: 'inherit', env: { ...process.env, PERPX_PROXY: proxyUrl } });
  child.on('exit', (c) => resolve(c ?? 1));
});
proxy.closeAllConnections();
proxy.close();
await exchange.stop();

mkdirSync(out, { recursive: true });
const versions = Object.fromEntries((opt('--client', '') ?? '').split(',').filter(Boolean).map((p) => p.split('@') as [string, string]));
const fixture = captureValues(calls, versions);
writeFileSync(join(out, 'calls.json'), `${JSON.stringify(fixture, null, 1)}\n`);
console.error(`${calls.length} requests of ${new Set(calls.map((c) => c.call)).size} client calls written to ${join(out, 'calls.json')}; driver exit ${code}`);
process.exit(code);
