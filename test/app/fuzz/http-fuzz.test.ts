/**
 * Fuzz of the whole HTTP interface (issue 26, point 11) against a real started exchange: every operation of
 * its OpenAPI document, with a JWT, an API key, the operator token, another user's token, garbage or nothing;
 * valid signatures over hostile fields; hostile fields, paths, queries and bodies. Seeded: FUZZ_SEED and
 * FUZZ_RUNS change the seed and the number of requests (docs/security.md, "Fuzzing").
 *
 * Asserted for every request: never a 5xx; every error in the contract's shape; a refused request (≥ 400)
 * leaves the journal's last seq and the engine's state hash unchanged. Each operation must have been reached
 * past validation (authenticated and schema-valid: the handler answered) at least MIN_REACHED times.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { http } from '../client.js';
import { buildRequest, operationsOf, type FuzzRequest, type Operation } from './requests.js';
import { Rng } from './values.js';
import { startWorld, type World } from './world.js';

// 8,000 in the suite (each operation still reached 10 times); SLOW=1 sends 30,000.
const RUNS = Number(process.env.FUZZ_RUNS ?? (process.env.SLOW === '1' ? 30_000 : 8_000));
const SEED = Number(process.env.FUZZ_SEED ?? 20261128);
/** Reached-the-handler minimum per operation, scaled down for short runs. */
const MIN_REACHED = Math.max(1, Math.min(10, Math.floor(RUNS / 500)));

/** Refusals given before the handler runs: parsing, schema validation, authentication, scope, rate limits. */
const BEFORE_HANDLER = new Set([
  'VALIDATION_ERROR', 'INVALID_JSON', 'UNSUPPORTED_MEDIA_TYPE', 'BODY_TOO_LARGE', 'INVALID_URL', 'URL_TOO_LONG', 'ROUTE_NOT_FOUND', 'NOT_FOUND',
  'UNAUTHORIZED', 'INVALID_TOKEN', 'TOKEN_EXPIRED', 'SESSION_REVOKED', 'INVALID_API_KEY', 'INSUFFICIENT_SCOPE', 'FORBIDDEN', 'RATE_LIMITED',
  'ADMIN_NEEDS_WALLET_SESSION', 'OPERATOR_ONLY',
]);

type AuthMode = 'jwt' | 'apiKey' | 'none' | 'garbage' | 'otherUser' | 'refreshAsBearer' | 'operator';
const AUTH_MODES: AuthMode[] = ['jwt', 'jwt', 'jwt', 'jwt', 'apiKey', 'apiKey', 'none', 'garbage', 'otherUser', 'refreshAsBearer'];

let W: World;
let ops: Operation[];
before(async () => {
  W = await startWorld();
  const doc = await http(W.X.url, 'GET', '/docs/json');
  assert.equal(doc.status, 200);
  ops = operationsOf(doc.body);
  assert.ok(ops.length >= 80, `OpenAPI operations: ${ops.length}`);
});
after(async () => {
  await W?.X.stop();
});

function headersFor(mode: AuthMode, r: Rng): Record<string, string> {
  switch (mode) {
    case 'jwt': return { authorization: `Bearer ${W.A.accessToken}` };
    case 'apiKey': return { 'x-api-key': W.apiKeyA };
    case 'otherUser': return { authorization: `Bearer ${W.B.accessToken}` };
    case 'refreshAsBearer': return { authorization: `Bearer ${r.pick(W.refreshTokens)}` };
    case 'operator': return { 'x-operator-token': W.X.ex.operatorToken };
    case 'garbage': return r.pick<Record<string, string>>([{ authorization: 'Bearer x.y.z' }, { authorization: 'Basic YTpi' }, { 'x-api-key': 'nope' }, { 'x-operator-token': 'nope' }, { authorization: `Bearer ${W.A.accessToken.slice(0, -2)}xx` }]);
    default: return {};
  }
}

async function send(req: FuzzRequest, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const h: Record<string, string> = { accept: 'application/json', ...headers };
  let payload: string | undefined;
  if (req.raw) {
    payload = req.raw.payload;
    h['content-type'] = req.raw.contentType;
  } else if (req.body !== undefined) {
    payload = JSON.stringify(req.body);
    h['content-type'] = 'application/json';
  }
  const res = await fetch(W.X.url + req.path, { method: req.method, headers: h, body: payload });
  return { status: res.status, text: await res.text() };
}

function errorOf(text: string): { code: string; message: string } | undefined {
  try {
    const e = (JSON.parse(text) as { error?: { code?: unknown; message?: unknown } }).error;
    return e && typeof e.code === 'string' && e.code.length > 0 && typeof e.message === 'string' && e.message.length > 0 ? (e as { code: string; message: string }) : undefined;
  } catch {
    return undefined;
  }
}

test(`HTTP fuzz: ${RUNS} requests over every OpenAPI operation (seed ${SEED})`, { timeout: 900_000 }, async () => {
  const reached = new Map<string, number>(ops.map((o) => [o.key, 0]));
  const statuses = new Map<number, number>();
  const codes = new Map<string, number>();
  let refused = 0;
  const timing = { build: 0, probe: 0, send: 0 };
  const property = fc.asyncProperty(fc.nat(ops.length - 1), fc.nat(AUTH_MODES.length - 1), fc.integer(), async (opIndex, authIndex, seed) => {
    const tStart = performance.now();
    const op = ops[opIndex]!;
    const r = new Rng(seed);
    const mode: AuthMode = op.path.startsWith('/api/admin/') && r.chance(0.7) ? 'operator' : AUTH_MODES[authIndex]!;
    const req = await buildRequest(op, W, r, r.chance(0.1) ? W.B : W.A);
    // Logging out with A's or B's token would end their sessions for the rest of the run: spare ones go there.
    const headers = op.path === '/auth/logout' && mode !== 'none' && mode !== 'garbage' ? { authorization: `Bearer ${r.pick(W.spareAccessTokens)}` } : headersFor(mode, r);
    const t0 = performance.now();
    const before = W.probe();
    const t1 = performance.now();
    const res = await send(req, headers);
    timing.build += t0 - tStart;
    timing.probe += t1 - t0;
    timing.send += performance.now() - t1;
    const what = `${req.method} ${req.path} [${mode}; ${req.change}] ${req.raw?.payload ?? JSON.stringify(req.body) ?? ''}`.slice(0, 2000);
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    assert.ok(res.status < 500, `${what} → ${res.status} ${res.text}`);
    if (res.status < 400) {
      reached.set(op.key, reached.get(op.key)! + 1);
      return;
    }
    refused++;
    const e = errorOf(res.text);
    assert.ok(e, `error shape: ${what} → ${res.status} ${res.text.slice(0, 500)}`);
    codes.set(`${res.status} ${e.code}`, (codes.get(`${res.status} ${e.code}`) ?? 0) + 1);
    if (process.env.FUZZ_VERBOSE === '2' && e.code === 'VALIDATION_ERROR' && req.change === 'none' && mode !== 'none') console.log(`${op.key}: ${e.message} ${JSON.stringify(req.body)?.slice(0, 300)}`);
    if (!BEFORE_HANDLER.has(e.code)) reached.set(op.key, reached.get(op.key)! + 1);
    const afterIt = W.probe();
    assert.equal(afterIt.seq, before.seq, `refused request advanced the journal: ${what} → ${res.status} ${e.code}`);
    assert.ok(afterIt.stateHash === before.stateHash, `refused request changed the engine state: ${what} → ${res.status} ${e.code}`);
  });
  await fc.assert(property, { numRuns: RUNS, seed: SEED, endOnFailure: true });

  if (process.env.FUZZ_VERBOSE) {
    console.log(JSON.stringify({ timing, statuses: [...statuses].sort(), codes: [...codes].sort((a, b) => b[1] - a[1]) }));
    console.log([...reached].sort((a, b) => a[1] - b[1]).map(([k, n]) => `${n}\t${k}`).join('\n'));
  }
  const short = [...reached].filter(([, n]) => n < MIN_REACHED);
  assert.deepEqual(short, [], `operations reached past validation fewer than ${MIN_REACHED} times`);
  assert.ok(refused > RUNS / 4, `mostly refusals expected: ${JSON.stringify([...statuses])}`);
  // The operator's view agrees with the handles the loop read: durable seq and state hash.
  const cp = await http(W.X.url, 'POST', '/api/admin/checkpoint', undefined, { 'x-operator-token': W.X.ex.operatorToken });
  assert.equal(cp.status, 200);
  assert.deepEqual(cp.body, { seq: W.probe().seq, stateHash: W.probe().stateHash });
});
