// Fuzz of this module's routes against the real exchange: mutated bodies and queries never produce a 5xx,
// every failure has the contract's error shape, and refused writes store nothing (the stored state equals
// what the accepted writes alone explain).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Bot, startTestExchange, type Res, type TestExchange } from './client.js';

const RUNS = Number(process.env.FUZZ_RUNS_ACCOUNTS ?? 400);

let X: TestExchange;
let U: Bot;
before(async () => {
  X = await startTestExchange();
  U = await new Bot(X.url).signIn();
});
after(async () => {
  await X?.stop();
});

const nasty = fc.constantFrom<unknown>(
  '1e400', 'NaN', '-1', '0', '', ' ', '%', '_', '\\', '\u0000', '😀😀', 'a'.repeat(3000), null, true, [], {}, -0, 1e308, 2 ** 53 + 1,
  '__proto__', 'constructor', '1.0.0', '99999999999999999999.0.0', 'BTCUSDT', 'BUY', 'https://x.example/a', 'x@y.z',
);
const anyValue = fc.oneof(nasty, fc.jsonValue({ maxDepth: 2 }), fc.string({ maxLength: 30 }));

interface Template { method: string; path: string; body?: Record<string, unknown>; query?: Record<string, string> }
const TEMPLATES = (): Template[] => [
  { method: 'PUT', path: `/api/user/${U.userId}`, body: { name: 'Fuzz', email: 'f@example.com', locale: 'en', social: [{ type: 'x', value: 'v' }] } },
  { method: 'POST', path: '/api/user/account', body: { name: 'Fuzz' } },
  { method: 'PUT', path: '/api/pair/BTCUSDT/favorite', body: { favorite: true } },
  { method: 'POST', path: '/api/smart-account/validate', body: { addresses: ['0x' + '11'.repeat(20)] } },
  { method: 'POST', path: '/api/trade/signal', body: { instrument: 'BTCUSDT', side: 'BUY', entryPrice: '100000', takeProfit: '110000', stopLoss: '90000', leverage: 2 } },
  { method: 'GET', path: '/api/user/list', query: { search: 'fuzz', limit: '5', offset: '0' } },
  { method: 'GET', path: '/api/public/statistics/charts', query: { from: new Date(Date.now() - 86_400_000).toISOString(), to: new Date().toISOString(), name: 'tradingVolume' } },
  { method: 'GET', path: '/api/public/yield/apr', query: { days: '7' } },
  { method: 'GET', path: '/api/mobile-app/blocked-version', query: { platform: 'ios', version: '1.0.0' } },
  { method: 'GET', path: '/api/oauth', query: { integrationId: '00000000-0000-4000-8000-000000000000', scopes: 'read' } },
  { method: 'POST', path: '/api/oauth/approve', body: { requestId: '00000000-0000-4000-8000-000000000000', signature: '0x' + '11'.repeat(65) } },
  { method: 'POST', path: '/api/oauth/token', body: { integrationId: '00000000-0000-4000-8000-000000000000', clientSecret: 's', code: 'c' } },
  { method: 'PUT', path: '/api/mobile-app/blocked-version/00000000-0000-4000-8000-000000000000', body: { platform: 'ios', versionMin: '1.0.0' } },
];

function mutate(t: Template, key: number, value: unknown, op: number): { path: string; body?: unknown } {
  if (t.query) {
    const q = { ...t.query };
    const k = Object.keys(q)[key % Object.keys(q).length]!;
    if (op === 0) delete q[k];
    else q[k] = typeof value === 'string' ? value : JSON.stringify(value);
    return { path: `${t.path}?${new URLSearchParams(q).toString()}` };
  }
  if (op === 2) return { path: t.path, body: value };
  const b: Record<string, unknown> = { ...t.body };
  const k = Object.keys(b)[key % Object.keys(b).length]!;
  if (op === 0) delete b[k];
  else b[k] = value;
  return { path: t.path, body: b };
}

test('fuzzed account routes: no 5xx, error shape, refused writes store nothing', async () => {
  const templates = TEMPLATES();
  let acceptedSignals = 0;
  let lastProfile: any = (await U.get('/api/user/me')).body;
  await fc.assert(fc.asyncProperty(fc.nat(templates.length - 1), fc.nat(10), anyValue, fc.nat(2), async (ti, key, value, op) => {
    const t = templates[ti]!;
    const m = mutate(t, key, value, op);
    const res: Res = await U.req(t.method, m.path, m.body);
    assert.ok(res.status < 500, `${t.method} ${m.path} ${JSON.stringify(m.body)} → ${res.status} ${JSON.stringify(res.body)}`);
    if (res.status >= 400) {
      assert.equal(typeof res.body?.error?.code, 'string', JSON.stringify(res.body));
      assert.equal(typeof res.body?.error?.message, 'string');
    } else if (t.path === '/api/trade/signal') {
      acceptedSignals++;
    } else if (t.path.startsWith('/api/user/') && t.method !== 'GET') {
      lastProfile = res.body; // PUT /api/user/{id} and POST /api/user/account answer with the user
    }
    if (t.method === 'PUT' && t.path.startsWith('/api/user/') && res.status >= 400) {
      const now = (await U.get('/api/user/me')).body;
      assert.deepEqual({ ...now, favoriteInstruments: [], updatedAt: '' }, { ...lastProfile, favoriteInstruments: [], updatedAt: '' }, 'refused profile edit changed the profile');
    }
  }), { numRuns: RUNS });
  assert.equal((await U.get('/api/trade/signal?limit=1')).body.count, acceptedSignals, 'stored signals = accepted ones');
});
