// Replays the requests the real public client made (test/fixtures/client/calls.json, recorded by
// scripts/client/record.ts through the client harness, docs/client-compat.md) against a fresh exchange, in order,
// and checks every response against the JSON schema generated from the client's own response type
// (test/fixtures/client/schemas). Values the server handed out are taken from this run's responses (`captures`);
// sign-in messages are signed again with the same deterministic test wallets (fresh nonce), and orders whose id
// carries a day are moved to today and signed again (the server accepts an order id's day ±1 only). Every call
// must succeed except the client methods docs/client-compat.md marks unsupported.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { ethers, Wallet } from 'ethers';
import type { Fixture } from '../../scripts/client/fixtures.js';
import { sign, startTestExchange, units, type SignedTypeName, type TestExchange } from '../app/client.js';

const DIR = 'test/fixtures/client';
const fixture = JSON.parse(readFileSync(join(DIR, 'calls.json'), 'utf8')) as Fixture;

/** The client harness's throwaway wallets: keccak of a fixed label (driver.ts derives the same). */
const WALLETS = new Map(['A', 'B'].map((label) => {
  const w = new Wallet(ethers.id(`perpx-client-proof:${label}`));
  return [w.address.toLowerCase(), w];
}));

/** Client methods docs/client-compat.md marks unsupported (status column starting with "unsupported"). */
function unsupportedMethods(): Set<string> {
  const doc = readFileSync('docs/client-compat.md', 'utf8');
  return new Set([...doc.matchAll(/^\| `([\w.]+)` \|[^|]*\| unsupported/gm)].map((m) => m[1]));
}

/** Fields where perpx differs from the client's type on purpose: docs/client-compat.md, "Where perpx answers differently". */
function acceptedDifferences(): Set<string> {
  const doc = readFileSync('docs/client-compat.md', 'utf8');
  return new Set([...doc.matchAll(/^\| `(\w+)` \| `(\w+)` \|/gm)].map((m) => `${m[1]}.${m[2]}`));
}

/** The field an ajv error is about: a missing property, or a null where a value was expected. */
function errorField(e: ErrorObject): string | undefined {
  if (e.keyword === 'required') return String(e.params.missingProperty);
  if (e.keyword === 'type') return e.instancePath.split('/').at(-1);
  return undefined;
}

const ORDER_ID = /\b(\d{5}):([0-9a-f]{26})\b/g;
const HAS_ORDER_ID = /\b\d{5}:[0-9a-f]{26}\b/;
const today = () => String(Math.floor((Date.now() - Date.UTC(2025, 6, 24)) / 86_400_000)).padStart(5, '0');

function pointerGet(node: unknown, pointer: string): unknown {
  return pointer.split('/').slice(1).reduce<any>((n, k) => n?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], node);
}

type Body = Record<string, unknown>;

/** The EIP-712 type a signed order body was signed as, from its fields (replace bodies carry no id). */
function orderType(b: Body, replace: boolean): SignedTypeName {
  if (replace) return b.stopPrice !== undefined ? 'Replace stop-limit order' : 'Replace limit order';
  if (b.stopPrice !== undefined) return 'New stop-limit order';
  if (b.cashQuantity !== undefined) return 'New market order';
  if (b.limitPrice !== undefined) return 'New limit order';
  return 'Position close order';
}

async function signOrder(wallet: Wallet, b: Body, orderId: string | undefined): Promise<string> {
  const type = orderType(b, orderId !== undefined);
  const amount = (k: string) => units(String(b[k]));
  const values: Record<SignedTypeName, () => Record<string, unknown>> = {
    'New limit order': () => ({ id: b.id, instrument: b.instrument, side: b.side, leverage: b.leverage, quantity: amount('quantity'), limitPrice: amount('limitPrice'), chainId: BigInt(String(b.chainId)) }),
    'New market order': () => ({ id: b.id, instrument: b.instrument, side: b.side, timeInForce: b.timeInForce, leverage: b.leverage, cashQuantity: amount('cashQuantity'), chainId: BigInt(String(b.chainId)) }),
    'New stop-limit order': () => ({ id: b.id, instrument: b.instrument, side: b.side, leverage: b.leverage, quantity: amount('quantity'), limitPrice: amount('limitPrice'), stopPrice: amount('stopPrice'), chainId: BigInt(String(b.chainId)) }),
    'Position close order': () => ({ id: b.id, instrument: b.instrument, leverage: b.leverage, quantity: amount('quantity'), chainId: BigInt(String(b.chainId)) }),
    'Replace limit order': () => ({ orderId, quantity: amount('quantity'), limitPrice: amount('limitPrice') }),
    'Replace stop-limit order': () => ({ orderId, quantity: amount('quantity'), limitPrice: amount('limitPrice'), stopPrice: amount('stopPrice') }),
    'New take-profit/stop-loss': () => ({}),
  };
  return sign(wallet, type, values[type](), String(b.chainId ?? '16182'));
}

describe('the public client\'s recorded calls, replayed', () => {
  let X: TestExchange;
  const validators = new Map<string, ValidateFunction>();

  before(async () => {
    X = await startTestExchange();
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    for (const f of readdirSync(join(DIR, 'schemas'))) validators.set(f, ajv.compile(JSON.parse(readFileSync(join(DIR, 'schemas', f), 'utf8'))));
  });
  after(() => X?.stop());

  test('the fixture covers the client\'s gateway routes and names the response type of each', () => {
    const routes = JSON.parse(readFileSync(join(DIR, 'routes.json'), 'utf8')) as Array<{ method: string; type: string | null }>;
    const called = new Set(fixture.calls.map((c) => c.route));
    const uncalled = routes.filter((r) => r.type !== null && !called.has(r.method)).map((r) => r.method);
    assert.deepEqual(uncalled, [], 'gateway routes the driver never called');
    for (const c of fixture.calls) if (c.type) assert.ok(validators.has(schemaFile(c.type)), `schema for ${c.type}`);
    // docs/client-compat.md has a row for every client method the recording called.
    const doc = readFileSync('docs/client-compat.md', 'utf8');
    const missing = [...new Set(fixture.calls.map((c) => c.call))].filter((m) => !m.startsWith('(') && !doc.includes(`| \`${m}\` |`));
    assert.deepEqual(missing, [], 'client methods without a row in docs/client-compat.md');
  });

  test('every call succeeds and its response matches the client\'s type', async () => {
    const unsupported = unsupportedMethods();
    const accepted = acceptedDifferences();
    const vars = new Map<string, string>();
    /** Which wallet each captured credential belongs to. */
    const owners = new Map<string, Wallet>();
    const day = today();
    const failures: string[] = [];
    let replayed = 0;
    for (const call of fixture.calls) {
      if (call.websocket) continue;
      const fill = (s: string) => s.replace(/\{\{(v\d+)\}\}/g, (_, v: string) => {
        assert.ok(vars.has(v), `${call.call}: ${v} was never captured`);
        return vars.get(v)!;
      }).replace(ORDER_ID, (_, _d: string, hex: string) => `${day}:${hex}`);
      const credential = Object.values(call.request.headers).join(' ').match(/\{\{(v\d+)\}\}/)?.[1];
      const r = call.request;
      let body = r.body === null ? undefined : fill(r.body);
      let owner = credential ? owners.get(credential) : undefined;
      if (r.path === '/auth/user/sign-up' && body) {
        const b = JSON.parse(body) as Body;
        owner = WALLETS.get(String(b.wallet).toLowerCase());
        assert.ok(owner, `sign-up of an unknown wallet ${String(b.wallet)}`);
        b.message = String(b.message).replace(/Issued At: .*/, `Issued At: ${new Date().toISOString()}`);
        b.signature = await owner.signMessage(String(b.message));
        body = JSON.stringify(b);
      } else if (body && owner && HAS_ORDER_ID.test(r.path + r.body) && /\/order|\/position/.test(r.path)) {
        const pathId = fill(r.path).match(HAS_ORDER_ID)?.[0];
        const recordedDay = (r.path + r.body).match(HAS_ORDER_ID)?.[0].slice(0, 5);
        const resign = async (b: Body) => {
          if (b.signature === undefined) return b;
          const signature = await signOrder(owner!, b, typeof b.orderId === 'string' ? b.orderId : b.id === undefined ? pathId : undefined);
          // Recorded today: the ids did not move, so signing again must give the client's own signature.
          if (recordedDay === day && b.signature !== signature) failures.push(`${call.call}: re-signing differs from the client's signature`);
          return { ...b, signature };
        };
        const parsed = JSON.parse(body) as Body | Body[];
        body = JSON.stringify(Array.isArray(parsed) ? await Promise.all(parsed.map(resign)) : await resign(parsed));
      }
      const res = await fetch(`${X.url}${fill(r.path)}${r.query ? `?${fill(r.query)}` : ''}`, {
        method: r.method, body, headers: Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, fill(v)])),
      });
      const text = await res.text();
      const json = text ? JSON.parse(text) as unknown : undefined;
      replayed += 1;
      for (const [name, pointer] of Object.entries(call.captures ?? {})) {
        const value = pointerGet(json, pointer);
        if (typeof value === 'string') {
          vars.set(name, value);
          if (owner) owners.set(name, owner);
        }
      }
      if (unsupported.has(call.call)) continue;
      if (res.status < 200 || res.status > 299) {
        failures.push(`${call.call} (${r.method} ${r.path}): ${res.status} ${text.slice(0, 200)}`);
        continue;
      }
      if (!call.type) continue;
      const validate = validators.get(schemaFile(call.type))!;
      if (validate(json)) continue;
      const kind = call.type.replace(/\[\]$/, '').replace(/(With\w+)?List$/, '');
      const rest = (validate.errors ?? []).filter((e) => !accepted.has(`${kind}.${errorField(e)}`) || (e.keyword === 'type' && pointerGet(json, e.instancePath) !== null));
      if (rest.length > 0) failures.push(`${call.call} (${call.type}): ${JSON.stringify(rest.slice(0, 5))}`);
    }
    assert.ok(replayed > 50, `${replayed} requests replayed`);
    assert.deepEqual(failures, []);
  });
});

function schemaFile(type: string): string {
  return type === '{}' ? 'Empty.json' : `${type.replace(/\[\]$/, '.array')}.json`;
}

