/**
 * Request budgets through the real HTTP server (src/api/rate-limits.ts): per IP, sign-in per IP, per
 * credential (user, API key) for reads and order entry; TRUST_PROXY; the per-IP nonce cap. Distinct client
 * IPs are distinct loopback source addresses (test/app/peer.ts). Windows are 10 minutes, so none restarts
 * during a test.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import WebSocket from 'ws';
import { clientSignIn, randomWallet } from '../auth/helpers.js';
import { assertError, Bot, CHAIN_ID, ok, RAISED_RATE_LIMITS, startTestExchange, type Res, type TestExchange } from './client.js';
import { peerRequest, type PeerRes } from './peer.js';

const WINDOW_MS = 600_000;
const windows = Object.fromEntries(['IP', 'SIGN_IN', 'ORDERS', 'FAUCET', 'READS'].map((b) => [`RATE_LIMIT_${b}_WINDOW_MS`, String(WINDOW_MS)]));

const running: TestExchange[] = [];
after(async () => {
  await Promise.all(running.map((x) => x.stop()));
});

async function start(env: Record<string, string>): Promise<TestExchange> {
  const x = await startTestExchange({ ...RAISED_RATE_LIMITS, ...windows, ...env });
  running.push(x);
  return x;
}

/** 429 RATE_LIMITED in the error shape, with Retry-After: whole seconds within the window. */
function assertRateLimited(res: PeerRes | (Res & { headers?: Headers }), what: string, retryAfter?: string | null): void {
  assert.equal(res.status, 429, `${what}: ${JSON.stringify(res.body)}`);
  assertError(res, 429, 'RATE_LIMITED');
  const header = retryAfter !== undefined ? retryAfter : (res as PeerRes).headers['retry-after'];
  assert.match(String(header), /^\d+$/, `${what}: Retry-After ${String(header)}`);
  const s = Number(header);
  assert.ok(s >= 1 && s <= WINDOW_MS / 1000, `${what}: Retry-After ${s} s outside the window`);
}

const bearer = (bot: Bot) => ({ authorization: `Bearer ${bot.accessToken}` });

test('per-IP budget: the request past it is 429 RATE_LIMITED with Retry-After; another IP still has its own', async () => {
  const { url } = await start({ RATE_LIMIT_IP_MAX: '5' });
  for (let i = 0; i < 5; i++) assert.equal((await peerRequest(url, '/api/ping')).status, 200, `request ${i + 1}`);
  assertRateLimited(await peerRequest(url, '/api/ping'), 'public route');
  // Counted before routing and authentication: unknown routes and bad credentials do not get through either.
  assertRateLimited(await peerRequest(url, '/api/no-such-route'), 'unknown route');
  assertRateLimited(await peerRequest(url, '/api/user/me', { headers: { authorization: 'Bearer junk' } }), 'bad credentials');
  assert.equal((await peerRequest(url, '/api/ping', { from: '127.0.0.2' })).status, 200, 'another IP');
});

test('per-user budget: one user used up, another user from the same IP is unaffected; order entry has its own budget', async () => {
  const { url } = await start({ RATE_LIMIT_READS_MAX: '4', RATE_LIMIT_ORDERS_MAX: '2' });
  const alice = await new Bot(url).signIn(); // one read: GET /api/user/me
  const bob = await new Bot(url).signIn();
  for (let i = 0; i < 3; i++) ok(await alice.get('/api/user/balance'), `alice read ${i + 2}`);
  assertRateLimited(await peerRequest(url, '/api/user/balance', { headers: bearer(alice) }), 'alice read 5');
  ok(await bob.get('/api/user/me'), 'bob, same IP, other user');
  // Alice's order entry is a budget of its own; requests with a bad body count too (checked before the body is read).
  ok(await alice.post('/api/order/mass-cancel', { instrument: 'BTCUSDT' }), 'alice order entry while her reads are used up');
  assertError(await alice.post('/api/order/mass-cancel', { instrument: 5 }), 400, 'VALIDATION_ERROR');
  assertError(await alice.post('/api/order/mass-cancel', { instrument: 'BTCUSDT' }), 429, 'RATE_LIMITED');
  ok(await bob.post('/api/order/mass-cancel', { instrument: 'BTCUSDT' }), 'bob order entry');
});

test('per-API-key budget: each key has its own, separate from the user\'s token', async () => {
  const { url } = await start({ RATE_LIMIT_READS_MAX: '4' });
  const alice = await new Bot(url).signIn(); // user budget: 1
  const k1 = ok(await alice.post('/api/user/api-key', { name: 'bot-1' })).apiKey as string; // 2
  const k2 = ok(await alice.post('/api/user/api-key', { name: 'bot-2' })).apiKey as string; // 3
  for (let i = 0; i < 4; i++) assert.equal((await peerRequest(url, '/api/user/me', { headers: { 'x-api-key': k1 } })).status, 200, `key 1 read ${i + 1}`);
  assertRateLimited(await peerRequest(url, '/api/user/me', { headers: { 'x-api-key': k1 } }), 'key 1 read 5');
  assert.equal((await peerRequest(url, '/api/user/me', { headers: { 'x-api-key': k2 } })).status, 200, 'key 2');
  ok(await alice.get('/api/user/me'), 'the access token (user budget: 4th)');
  assertRateLimited(await peerRequest(url, '/api/user/me', { headers: bearer(alice) }), 'the access token, 5th');
});

test('sign-in budget is per IP and separate from reads', async () => {
  const { url } = await start({ RATE_LIMIT_SIGN_IN_MAX: '3', RATE_LIMIT_READS_MAX: '2' });
  const alice = await new Bot(url).signIn(); // sign-in: nonce + sign-up = 2; reads: 1
  ok(await alice.get('/api/user/me'), 'read 2');
  assertRateLimited(await peerRequest(url, '/api/user/me', { headers: bearer(alice) }), 'read 3');
  ok(await peerRequest(url, '/auth/nonce') as Res, 'sign-in 3 while reads are used up');
  assertRateLimited(await peerRequest(url, '/auth/nonce'), 'nonce, sign-in 4');
  const refresh = await peerRequest(url, '/auth/refresh', { method: 'POST', headers: { authorization: `Bearer ${alice.refreshToken}` } });
  assertRateLimited(refresh, 'token refresh shares the sign-in budget');
  // Public reads spend only the per-IP budget; another IP has its own sign-in budget.
  assert.equal((await peerRequest(url, '/api/market')).status, 200, 'public market data');
  assert.equal((await peerRequest(url, '/auth/nonce', { from: '127.0.0.2' })).status, 200, 'nonce from another IP');
});

test('X-Forwarded-For is ignored unless TRUST_PROXY names the peer', async () => {
  const direct = await start({ RATE_LIMIT_IP_MAX: '2' });
  const spoof = (n: number, from?: string) => peerRequest(direct.url, '/api/ping', { from, headers: { 'x-forwarded-for': `10.0.0.${n}` } });
  assert.equal((await spoof(1)).status, 200);
  assert.equal((await spoof(2)).status, 200);
  assertRateLimited(await spoof(3), 'no TRUST_PROXY: a new X-Forwarded-For per request is still the same client');

  const proxied = await start({ RATE_LIMIT_IP_MAX: '2', TRUST_PROXY: '127.0.0.1' });
  const via = (client: string, from = '127.0.0.1') => peerRequest(proxied.url, '/api/ping', { from, headers: { 'x-forwarded-for': client } });
  assert.equal((await via('10.0.0.1')).status, 200);
  assert.equal((await via('10.0.0.1')).status, 200);
  assertRateLimited(await via('10.0.0.1'), 'the forwarded client used its budget');
  assert.equal((await via('10.0.0.2')).status, 200, 'another forwarded client');
  // A client cannot prepend its own entry: the nearest untrusted hop counts.
  assertRateLimited(await via('10.0.0.7, 10.0.0.1'), 'spoofed leftmost entry');
  // A peer TRUST_PROXY does not name is the client itself, whatever it forwards.
  assert.equal((await via('10.0.0.3', '127.0.0.2')).status, 200);
  assert.equal((await via('10.0.0.4', '127.0.0.2')).status, 200);
  assertRateLimited(await via('10.0.0.5', '127.0.0.2'), 'untrusted peer');
});

test('websocket per-IP connection caps count the client TRUST_PROXY names, like the HTTP budgets', async () => {
  const { ex } = await start({ TRUST_PROXY: '127.0.0.1', WS_MAX_CONNECTIONS_PER_IP: '1' });
  const open: WebSocket[] = [];
  /** 'open', or the HTTP status the upgrade was refused with. */
  const connect = (forwardedFor: string, from = '127.0.0.1') =>
    new Promise<number | 'open'>((resolve, reject) => {
      const ws = new WebSocket(ex.wsUrl, { localAddress: from, headers: { 'x-forwarded-for': forwardedFor } });
      ws.once('open', () => {
        open.push(ws);
        resolve('open');
      });
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('error', reject);
    });
  try {
    assert.equal(await connect('10.1.1.1'), 'open');
    assert.equal(await connect('10.1.1.1'), 429, 'the same forwarded client');
    assert.equal(await connect('10.1.1.2'), 'open', 'another forwarded client behind the same proxy');
    assert.equal(await connect('10.1.1.3', '127.0.0.2'), 'open');
    assert.equal(await connect('10.1.1.4', '127.0.0.2'), 429, 'an untrusted peer is the client, whatever it forwards');
  } finally {
    for (const ws of open) ws.close();
  }
});

test('a nonce flood from one IP does not push out another IP\'s nonce', async () => {
  const { url } = await start({ AUTH_NONCES_MAX: '20', AUTH_NONCES_PER_IP: '4' });
  const nonceFrom = async (from?: string) => (ok((await peerRequest(url, '/auth/nonce', { from })) as Res, 'nonce') as { nonce: string }).nonce;
  const signUp = async (nonce: string, from?: string) =>
    peerRequest(url, '/auth/user/sign-up', { method: 'POST', from, body: await clientSignIn(randomWallet(), nonce, { chainId: Number(CHAIN_ID) }) });

  const victim = await nonceFrom('127.0.0.2');
  const flood: string[] = [];
  for (let i = 0; i < 60; i++) flood.push(await nonceFrom('127.0.0.1')); // 3× the whole store
  assert.equal((await signUp(victim, '127.0.0.2')).status, 200, 'the other IP still signs in with its nonce');
  // The flooder only pushed out its own: its oldest nonces are gone, its newest still work.
  assertError(await signUp(flood[0]!) as Res, 401, 'invalid_nonce');
  assert.equal((await signUp(flood[59]!)).status, 200);
});
