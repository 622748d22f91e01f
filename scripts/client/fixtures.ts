/**
 * The fixture format of the recorded public-client calls (test/fixtures/client/calls.json) and how record.ts turns
 * values the server handed out into variables: a string of a response that the client sends back in a later request
 * (a token, a nonce, an API key, a server-made id) becomes `{{vN}}` in those requests, and the response it came from
 * says where to read it (`captures`: name → JSON pointer), so a replay against a fresh server uses its own values.
 */
export interface RecordedRequest {
  method: string;
  path: string;
  /** Query string without `?`. */
  query: string;
  headers: Record<string, string>;
  /** The body as sent (JSON text), or null. */
  body: string | null;
}

export interface RecordedCall {
  /** The client method the driver called (`WalletAccount.createLimitOrderV2`). */
  call: string;
  /** The gateway route the request was made by, and its declared response type (null: not a gateway route). */
  route: string | null;
  type: string | null;
  request: RecordedRequest;
  status: number;
  websocket?: boolean;
  /** Response text; used to find captures, not written. */
  response: string;
}

export interface FixtureCall extends Omit<RecordedCall, 'response'> {
  captures?: Record<string, string>;
}

export interface Fixture {
  /** Client versions the calls were recorded with. */
  client: Record<string, string>;
  calls: FixtureCall[];
}

/** Strings worth tracking: long enough and mixing letters and digits (ids, tokens, nonces), not prices or names. */
const candidate = (s: string) => s.length >= 8 && /[0-9]/.test(s) && /[A-Za-z]/.test(s);

function leaves(node: unknown, pointer: string, out: Array<[string, string]>): Array<[string, string]> {
  if (typeof node === 'string') out.push([pointer, node]);
  else if (Array.isArray(node)) node.forEach((v, i) => leaves(v, `${pointer}/${i}`, out));
  else if (node && typeof node === 'object') for (const [k, v] of Object.entries(node)) leaves(v, `${pointer}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, out);
  return out;
}

const requestText = (r: RecordedRequest) => [r.path, r.query, ...Object.values(r.headers), r.body ?? ''].join('\n');

function substitute(r: RecordedRequest, vars: ReadonlyMap<string, string>): RecordedRequest {
  // Longest values first, so a value inside another is not replaced in part.
  const known = [...vars.entries()].sort((a, b) => b[0].length - a[0].length);
  const sub = (s: string) => known.reduce((acc, [value, name]) => acc.split(value).join(`{{${name}}}`), s);
  return {
    method: r.method, path: sub(r.path), query: sub(r.query),
    headers: Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, sub(v)])), body: r.body === null ? null : sub(r.body),
  };
}

export function captureValues(calls: readonly RecordedCall[], client: Record<string, string> = {}): Fixture {
  const texts = calls.map((c) => requestText(c.request));
  const vars = new Map<string, string>();
  const out: FixtureCall[] = [];
  calls.forEach((c, i) => {
    const captures: Record<string, string> = {};
    let parsed: unknown;
    try {
      parsed = c.response ? JSON.parse(c.response) : undefined;
    } catch {
      parsed = undefined;
    }
    for (const [pointer, value] of leaves(parsed, '', [])) {
      if (!candidate(value) || vars.has(value)) continue;
      // Sent by the client up to and including this request: the client's own value, not the server's.
      if (texts.slice(0, i + 1).some((t) => t.includes(value))) continue;
      if (!texts.slice(i + 1).some((t) => t.includes(value))) continue;
      const name = `v${vars.size + 1}`;
      captures[name] = pointer;
      vars.set(value, name);
    }
    const { response: _response, ...rest } = c;
    out.push({ ...rest, request: substitute(c.request, new Map([...vars].filter(([, n]) => !(n in captures)))), ...(Object.keys(captures).length > 0 && { captures }) });
  });
  return { client, calls: out };
}
