/**
 * Fuzz: ≥10,000 malformed requests across every route, against the gateway wired to the REAL engine (auth,
 * signatures and the read store are fakes). Asserts: never a 5xx, every error has the contract's shape, and
 * a refused request (≥ 400) leaves the engine's state exactly as it was (compared without `seq`: this harness
 * applies commands to the engine without the sequencer, so every one counts). The real exchange, where a
 * refusal uses no seq, is fuzzed in test/app/fuzz/.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Value } from '@sinclair/typebox/value';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/api/server.js';
import type { CommandInput } from '../../src/engine/commands.js';
import { DEMO_INSTRUMENTS, DEMO_START_PRICES } from '../../src/domain/instrument.js';
import { parseUnits } from '../../src/domain/fixed.js';
import { createEngine } from '../../src/engine/engine.js';
import type { Command } from '../../src/engine/commands.js';
import { serializeState } from '../../src/engine/snapshot.js';
import { ErrorBody } from '../../src/records/common.js';
import { AUTH, NOW, USER, makeDeps } from './fakes.js';
import { VALID, type Req } from './requests.js';

const NUM_RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);

async function makeApp(): Promise<{ app: FastifyInstance; state: () => string }> {
  const engine = createEngine();
  let ts = NOW;
  const apply = (cmd: CommandInput) => engine.apply({ ...cmd, ts: ++ts } as Command);
  for (const config of DEMO_INSTRUMENTS) apply({ kind: 'instrument.upsert', config });
  for (const config of DEMO_INSTRUMENTS) apply({ kind: 'price.tick', instrument: config.id, indexPrice: parseUnits(DEMO_START_PRICES[config.id]) });
  apply({ kind: 'funds.deposit', userId: USER.exchangeId, amount: '100000000000000', transferId: 'fuzz-seed' });
  const { deps } = makeDeps({ engine, submit: async (cmd) => apply(cmd), clock: () => ts });
  return { app: await buildServer(deps), state: () => JSON.stringify({ ...serializeState(engine.s), seq: 0 }) };
}

/** Values that tend to break decimal/number handling. */
const nasty = fc.constantFrom<unknown>(
  '1e400', '-1e400', 'NaN', 'Infinity', '-0', '0x10', ' 1 ', '1e-9', '0.000000005', '99999999999999999999999', '', '.', '-', '1.', '.5',
  1e308, -1e308, 5e-324, -0, 0, 2 ** 53 + 1, 'BUY', 'SELL', 'yes', null, true, [], {}, '__proto__', 'constructor', '\u0000', '😀'.repeat(3),
);
const anyValue: fc.Arbitrary<unknown> = fc.oneof(nasty, fc.jsonValue({ maxDepth: 3 }), fc.string({ maxLength: 40 }), fc.double(), fc.integer());

type Mutation = (r: Req) => { url: string; payload?: string; contentType?: string };

const json = (v: unknown) => ({ payload: JSON.stringify(v), contentType: 'application/json' });

function mutateObject(obj: Record<string, unknown>, key: string | undefined, value: unknown, op: number): Record<string, unknown> {
  const copy = { ...obj };
  const k = key ?? Object.keys(copy)[0] ?? 'x';
  if (op === 0) delete copy[k];
  else if (op === 1) copy[k] = value;
  else copy[`extra_${k}`] = value;
  return copy;
}

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  // Whole body replaced by arbitrary JSON.
  anyValue.map((v): Mutation => (r) => ({ url: r.url, ...json(v) })),
  // One field removed, replaced or added (top level, or inside the first array item).
  fc.tuple(fc.nat(20), anyValue, fc.nat(2)).map(([i, v, op]): Mutation => (r) => {
    const body = r.body;
    if (Array.isArray(body) && body.length > 0 && typeof body[0] === 'object') {
      const item = body[0] as Record<string, unknown>;
      const keys = Object.keys(item);
      return { url: r.url, ...json([mutateObject(item, keys[i % keys.length], v, op), ...body.slice(1)]) };
    }
    if (body && typeof body === 'object') {
      const keys = Object.keys(body);
      return { url: r.url, ...json(mutateObject(body as Record<string, unknown>, keys[i % Math.max(1, keys.length)], v, op)) };
    }
    return { url: r.url, ...json(v) };
  }),
  // Broken JSON / other media types.
  fc.tuple(fc.string({ maxLength: 60 }), fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream'))
    .map(([raw, ct]): Mutation => (r) => ({ url: r.url, payload: raw, contentType: ct })),
  // A path segment replaced with random text.
  fc.tuple(fc.nat(10), fc.string({ minLength: 0, maxLength: 40 })).map(([i, seg]): Mutation => (r) => {
    const [path, qs] = r.url.split('?');
    const parts = path.split('/');
    const at = 2 + (i % Math.max(1, parts.length - 2));
    parts[at] = encodeURIComponent(seg);
    return { url: parts.join('/') + (qs ? `?${qs}` : ''), ...(r.body !== undefined ? json(r.body) : {}) };
  }),
  // Random query parameters added or replacing the valid ones.
  fc.tuple(fc.constantFrom('limit', 'offset', 'maxLevel', 'roundPrice', 'marketLevel', 'status', 'after', 'before', 'instrument', 'sort', 'fields', 'side', 'withTpSL', 'version', 'id'),
    fc.oneof(fc.string({ maxLength: 30 }), fc.integer().map(String), fc.constantFrom('-1', '1e9', 'NaN', '', '0.5', '99999999999999999999')), fc.boolean())
    .map(([k, v, keep]): Mutation => (r) => {
      const base = keep ? r.url : r.url.split('?')[0];
      const sep = base.includes('?') ? '&' : '?';
      return { url: `${base}${sep}${k}=${encodeURIComponent(v)}&${k}=${encodeURIComponent(v)}`, ...(r.body !== undefined ? json(r.body) : {}) };
    }),
);

const headersArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant<Record<string, string>>(AUTH) },
  { weight: 1, arbitrary: fc.constant<Record<string, string>>({}) },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map((s) => ({ authorization: `Bearer ${s.replace(/[\r\n]/g, '')}` })) },
);

test(`fuzz: ${NUM_RUNS} malformed requests, never a 5xx, errors always shaped`, { timeout: 600_000 }, async () => {
  const { app, state } = await makeApp();
  const seen = new Map<number, number>();
  try {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...VALID), mutation, headersArb, fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE') }), async (route, mutate, headers, method) => {
        const m = mutate(route);
        const before = state();
        const res = await app.inject({
          method: method ?? route.method,
          url: m.url,
          headers: { ...headers, ...(m.contentType ? { 'content-type': m.contentType } : {}) },
          ...(m.payload !== undefined ? { payload: m.payload } : {}),
        });
        seen.set(res.statusCode, (seen.get(res.statusCode) ?? 0) + 1);
        assert.ok(res.statusCode < 500, `${method ?? route.method} ${m.url} ${m.payload ?? ''} → ${res.statusCode} ${res.body}`);
        if (res.statusCode >= 400) {
          assert.ok(Value.Check(ErrorBody, res.json()), `error shape for ${m.url}: ${res.body}`);
          assert.equal(state(), before, `refused ${method ?? route.method} ${m.url} ${m.payload ?? ''} changed the engine state`);
        }
      }),
      { numRuns: NUM_RUNS },
    );
  } finally {
    await app.close();
  }
  // The fuzz must mostly exercise refusals, not just the happy path.
  if (process.env.FUZZ_VERBOSE) console.log(JSON.stringify([...seen].sort()));
  const refused = [...seen].filter(([s]) => s >= 400).reduce((a, [, n]) => a + n, 0);
  assert.ok(refused > NUM_RUNS / 2, `statuses: ${JSON.stringify([...seen])}`);
});
