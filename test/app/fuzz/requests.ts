/**
 * One fuzz request for an operation of the app's OpenAPI document: path, query and body valid by the
 * operation's schemas (signed ones built by signed.ts), then, with some probability, one hostile change:
 * a field, parameter or path segment replaced, a required field dropped, an unknown one added, the whole
 * body replaced, broken JSON or another media type.
 */
import { SIGNED, type Built } from './signed.js';
import { hostile, hostileText, valid, type Known, type Rng } from './values.js';
import type { World } from './world.js';

export interface Operation {
  /** `method path` as in the document, e.g. `put /api/order/{orderId}/limit`. */
  key: string;
  method: string;
  path: string;
  params: Array<{ name: string; in: string; required?: boolean; schema?: Record<string, any> }>;
  body: Record<string, any> | undefined;
  auth: boolean;
}

export function operationsOf(doc: { paths: Record<string, Record<string, any>> }): Operation[] {
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries<any>(methods)) {
      if (!['get', 'post', 'put', 'delete', 'patch'].includes(method)) continue;
      ops.push({
        key: `${method} ${path}`, method: method.toUpperCase(), path, params: op.parameters ?? [],
        body: op.requestBody?.content?.['application/json']?.schema, auth: Array.isArray(op.security) && op.security.length > 0,
      });
    }
  }
  return ops;
}

export interface FuzzRequest extends Built {
  /** Raw payload and media type when the body is not JSON of `body`. */
  raw?: { payload: string; contentType: string };
  /** Which hostile change was made (none = valid by the schema). */
  change: string;
}

function cleanRequest(op: Operation, r: Rng, known: Known): Built {
  const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const p = op.params.find((x) => x.in === 'path' && x.name === name);
    return encodeURIComponent(String(valid(p?.schema, name, r, known)));
  });
  const q = new URLSearchParams();
  for (const p of op.params) {
    if (p.in !== 'query' || (!p.required && r.chance(0.6))) continue;
    const v = valid(p.schema, p.name, r, known);
    for (const one of Array.isArray(v) ? v : [v]) q.append(p.name, String(one));
  }
  const qs = q.toString();
  return { method: op.method, path: qs ? `${path}?${qs}` : path, ...(op.body ? { body: valid(op.body, '', r, known) } : {}) };
}

function mutateBody(body: unknown, r: Rng): { body: unknown; change: string } {
  const target = Array.isArray(body) && body.length > 0 && typeof body[0] === 'object' ? (body[0] as Record<string, unknown>) : body;
  if (!target || typeof target !== 'object' || Array.isArray(target)) return { body: hostile(r), change: 'body replaced' };
  const keys = Object.keys(target);
  const copy: Record<string, unknown> = { ...target };
  const roll = r.int(3);
  const k = keys.length > 0 ? r.pick(keys) : 'x';
  let change: string;
  if (roll === 0 && keys.length > 0) {
    delete copy[k];
    change = `body.${k} dropped`;
  } else if (roll === 1) {
    copy[k] = hostile(r);
    change = `body.${k} hostile`;
  } else {
    copy[r.pick(['__proto__', 'constructor', 'extra', `${k}Extra`])] = hostile(r);
    change = 'body field added';
  }
  return { body: Array.isArray(body) ? [copy, ...body.slice(1)] : copy, change };
}

function mutate(b: Built, r: Rng): FuzzRequest {
  const [path, qs = ''] = b.path.split('?');
  switch (r.int(6)) {
    case 0:
    case 1: {
      if (b.body === undefined) break;
      return { ...b, ...mutateBody(b.body, r) };
    }
    case 2: {
      const q = new URLSearchParams(qs);
      const names = [...q.keys()];
      const name = names.length > 0 && r.chance(0.7) ? r.pick(names) : r.pick(['limit', 'offset', 'after', 'before', 'from', 'to', 'instrument', 'status', 'version', 'maxLevel', 'roundPrice', 'sort', 'days', 'search']);
      q.set(name, hostileText(r));
      return { ...b, path: `${path}?${q.toString()}`, change: `query ${name} hostile` };
    }
    case 3: {
      const parts = path.split('/');
      if (parts.length <= 3) break;
      const at = 2 + r.int(parts.length - 2);
      parts[at] = encodeURIComponent(hostileText(r));
      return { ...b, path: parts.join('/') + (qs ? `?${qs}` : ''), change: `path segment ${at} hostile` };
    }
    case 4:
      if (b.method === 'GET') break;
      return { ...b, raw: { payload: r.pick(['{', '{"a":', '[1,', 'null', '"x"', '{"__proto__":{"x":1}}', 'a=1&b=2', '\u0000']), contentType: r.pick(['application/json', 'text/plain', 'application/x-www-form-urlencoded']) }, change: 'raw body' };
    default:
      if (b.body === undefined) break;
      return { ...b, body: hostile(r), change: 'body replaced' };
  }
  return { ...b, change: 'none' };
}

export async function buildRequest(op: Operation, w: World, r: Rng, signer: World['A']): Promise<FuzzRequest> {
  const signed = SIGNED[op.key];
  const base = signed ? await signed(w.signed(signer), r) : cleanRequest(op, r, w.known(op.key));
  return r.chance(0.35) ? mutate(base, r) : { ...base, change: 'none' };
}
