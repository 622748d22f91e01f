// The AsyncAPI document at /asyncapi.json against the official AsyncAPI 3.0.0 JSON Schema (@asyncapi/specs), and
// against the exchange itself: every channel family it lists is subscribed over a real websocket (names built
// from the document's addresses), traffic is produced on all of them (trading, funds, TpSl, an index push that
// puts a long in margin call, a funding settlement), and every publication received is validated with ajv
// against its channel's payload schema from the document, with undeclared fields refused. The test fails if a
// family had no publication validated, so a channel the document lists but the exchange never publishes (or
// publishes in another shape) shows up, and one the code adds without a document entry does not compile.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import specs from '@asyncapi/specs';
import { Ajv, type ValidateFunction } from 'ajv';
import { parseChannel } from '../../src/realtime/channel-policy.js';
import { RawClient, waitFor } from '../realtime/helpers.js';
import { Bot, http, ok, startTestExchange, type TestExchange } from './client.js';

type Doc = Record<string, any>;
type Msg = Record<string, any>;

const FUNDING_INTERVAL_MS = 2000;

/** The object a local `#/a/b` reference points at, or undefined. */
function resolveRef(doc: Doc, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  return ref.slice(2).split('/').reduce<any>((node, key) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
}

/** Every `$ref` string in the document. */
function refsOf(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const n of node) refsOf(n, out);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refsOf(v, out);
    }
  }
  return out;
}

/** A copy where every object schema with properties refuses undeclared ones: a field published but not documented fails. */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, closed(v)]));
  if (out.type === 'object' && out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

/** Fills a channel address: each `{parameter}` takes each of its values. */
function expand(address: string, values: Record<string, string[]>): string[] {
  const m = /\{(\w+)\}/.exec(address);
  if (!m) return [address];
  const options = values[m[1]];
  assert.ok(options?.length, `no value for parameter ${m[1]} of ${address}`);
  return options.flatMap((v) => expand(address.replace(m[0], v), values));
}

describe('AsyncAPI document of the real-time channels', () => {
  let X: TestExchange;
  let doc: Doc;

  before(async () => {
    X = await startTestExchange({ FUNDING_INTERVAL_MS: String(FUNDING_INTERVAL_MS) });
    const res = await http(X.url, 'GET', '/asyncapi.json');
    doc = ok(res, 'asyncapi.json');
  });
  after(async () => {
    await X?.stop();
  });

  test('is a valid AsyncAPI 3.0.0 document whose references all resolve', () => {
    assert.equal(doc.asyncapi, '3.0.0');
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    const validate = ajv.compile<unknown>(specs.schemasWithoutId['3.0.0'] as object);
    assert.ok(validate(doc), JSON.stringify(validate.errors, null, 1));
    const broken = refsOf(doc).filter((r) => resolveRef(doc, r) === undefined);
    assert.deepEqual(broken, []);
    assert.equal(doc.servers.exchange.pathname, new URL(X.ex.wsUrl).pathname);
    const channels = Object.values(doc.channels) as Doc[];
    assert.ok(channels.length >= 17, `${channels.length} channels`);
    for (const c of channels) {
      assert.equal(typeof c.address, 'string');
      const messages = Object.values(c.messages) as Doc[];
      assert.equal(messages.length, 1, c.address);
      const payload = (resolveRef(doc, messages[0].$ref) as Doc).payload;
      assert.equal((resolveRef(doc, payload.$ref) as Doc).type, 'object', `${c.address}: payload schema`);
    }
  });

  test('every channel family: its access matches the server, and a real publication validates against its schema', async (t) => {
    const env = X.ex.channelPrefix.slice(0, -1);
    const [A, B, admin] = await Promise.all([0, 1, 2].map(() => new Bot(X.url).signIn()));
    await X.ex.auth.setRole(admin.exchangeId, 'admin');

    // Payload validators by channel id, from the document alone.
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    const validators = new Map<string, ValidateFunction>();
    const families = new Map<string, string>(); // concrete channel name → channel id
    const owners = new Map<string, Bot>();
    for (const [id, c] of Object.entries(doc.channels as Record<string, Doc>)) {
      const message = resolveRef(doc, (Object.values(c.messages)[0] as Doc).$ref) as Doc;
      validators.set(id, ajv.compile(closed(resolveRef(doc, message.payload.$ref)) as object));
      const values: Record<string, string[]> = {
        env: [c.parameters.env.default], instrument: ['BTCUSDT'], exchangeId: [String(A.exchangeId), String(B.exchangeId)],
      };
      for (const [p, param] of Object.entries(c.parameters as Record<string, Doc>)) if (param.enum) values[p] = param.enum;
      for (const name of expand(c.address, values)) {
        families.set(name, id);
        // The document's access and history claims are the server's policy.
        const parsed = parseChannel(env, name);
        assert.equal(parsed.kind === 'user' ? 'owner' : parsed.kind === 'unknown' ? 'unknown' : 'public', c['x-access'], name);
        if (parsed.kind === 'user') owners.set(name, parsed.exchangeId === A.exchangeId ? A : B);
      }
    }

    const raw = new RawClient(X.ex.wsUrl);
    t.after(() => raw.ws.close());
    await waitFor(() => raw.reply(1) !== undefined, 15_000, 'connect');
    const names = [...families.keys()];
    // An owner channel without a token is refused (subscribe ids from 1000), a public one is not.
    const publicNames = names.filter((n) => !owners.has(n));
    const ownerNames = names.filter((n) => owners.has(n));
    ownerNames.forEach((n, i) => raw.send({ id: 1000 + i, subscribe: { channel: n } }));
    await waitFor(() => ownerNames.every((_, i) => raw.reply(1000 + i)), 15_000, 'refusals');
    ownerNames.forEach((n, i) => assert.equal((raw.reply(1000 + i) as Msg).error?.code, 103, `${n} without a token: ${JSON.stringify(raw.reply(1000 + i))}`));
    names.forEach((n, i) => {
      const owner = owners.get(n);
      raw.send({ id: 10 + i, subscribe: { channel: n, ...(owner && { data: { accessToken: owner.accessToken } }) } });
    });
    await waitFor(() => names.every((_, i) => raw.reply(10 + i)), 15_000, 'subscribe replies');
    names.forEach((n, i) => assert.equal((raw.reply(10 + i) as Msg).error, undefined, `${n}: ${JSON.stringify(raw.reply(10 + i))}`));
    assert.ok(publicNames.length > 0 && ownerNames.length > 0);

    // Traffic on every family: deposits, an index push, a trade at 50x, a TpSl, a margin call, a funding settlement.
    await Promise.all([A.faucet(), B.faucet()]);
    const push = async (price: string) => ok(await admin.post('/api/admin/index-price', { instrument: 'BTCUSDT', price }), `index ${price}`);
    await push('100000');
    assert.equal(ok(await B.limit({ side: 'SELL', quantity: '1', limitPrice: '100000', leverage: 20 })).status, 'NEW');
    assert.equal(ok(await A.limit({ side: 'BUY', quantity: '1', limitPrice: '100000', leverage: 50 })).status, 'FILLED');
    ok(await A.post('/api/tpsl/BTCUSDT', await A.tpslBody('BTCUSDT', { type: 'take-profit', side: 'SELL', quantity: 0, price: 110000 })), 'tpsl');
    await push('90500'); // A's equity 450 against maintenance 402.5: margin call (test/app/risk-e2e.test.ts)

    const validated = new Set<string>();
    const failures: string[] = [];
    let seen = 0;
    const check = () => {
      const pubs = raw.messages.filter((m) => (m as Msg).push?.pub);
      for (const m of pubs.slice(seen) as Msg[]) {
        const name = m.push.channel as string;
        const id = families.get(name);
        if (!id) {
          failures.push(`publication on ${name}, not subscribed`);
          continue;
        }
        const validate = validators.get(id)!;
        if (validate(m.push.pub.data)) validated.add(id);
        else failures.push(`${name}: ${JSON.stringify(validate.errors)} in ${JSON.stringify(m.push.pub.data)}`);
      }
      seen = pubs.length;
      return failures.length > 0 || validated.size === validators.size;
    };
    await waitFor(check, 15 * FUNDING_INTERVAL_MS, 'a publication on every channel family').catch(() => {});
    assert.deepEqual(failures, []);
    assert.deepEqual([...validators.keys()].filter((id) => !validated.has(id)), [], 'channel families without a validated publication');
  });
});
