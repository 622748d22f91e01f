/**
 * Fuzz of the websocket interface (Centrifugo protocol JSON) against a real started exchange while two users
 * trade: seeded frames of one or several commands (connect, subscribe, unsubscribe, history, presence, rpc,
 * publish, refresh, pings, garbage lines) with hostile fields: other users' private channels, other users'
 * or broken tokens, huge and negative ids and limits, odd channel names.
 *
 * Oracle (the test knows whose token is whose): a connection is entitled to user U's channel `name-U` only if
 * it sent a subscribe to exactly that channel with U's access token. Asserted: no publication of a user
 * channel (push, subscribe recovery, history) reaches a connection not entitled to it, and no order, fill
 * or balance of a user appears in any answer to a connection that presented none of that user's tokens;
 * every reply is a result or an error with a numeric code; a closed connection closed with a protocol code;
 * the server still serves HTTP and new websocket connections afterwards.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { USER_CHANNELS } from '../../../src/realtime/channel-policy.js';
import { RawClient, waitFor } from '../../realtime/helpers.js';
import { Bot, http, ok, startTestExchange, type TestExchange } from '../client.js';
import { hostile, Rng } from './values.js';

const RUNS = Number(process.env.FUZZ_WS_RUNS ?? 1500);
const SEED = Number(process.env.FUZZ_SEED ?? 20261128);
/** Close codes a connection may end with: normal, going away, policy, too big, and Centrifugo's ranges. */
const PROPER_CLOSE = (code: number) => [1000, 1001, 1008, 1009].includes(code) || (code >= 3000 && code <= 4999);

type Msg = Record<string, any>;

let X: TestExchange;
let A: Bot;
let B: Bot;
before(async () => {
  // Budgets raised, not off: the rate hooks still run (a refusal is error 111 or a 3013 close, both proper).
  X = await startTestExchange({
    CHAIN_DELAY_MS: '3600000', WS_CONNECTS_PER_IP_PER_SEC: '1000', WS_CONNECTS_PER_IP_BURST: '1000', WS_HISTORY_PER_SEC: '1000',
    WS_HISTORY_BURST: '1000', WS_SUBSCRIBES_PER_SEC: '1000', WS_SUBSCRIBES_BURST: '1000',
  });
  [A, B] = await Promise.all([new Bot(X.url).signIn(), new Bot(X.url).signIn()]);
  await Promise.all([A.faucet(), B.faucet()]);
});
after(async () => {
  await X?.stop();
});

/** One fuzzed connection and what the oracle knows of it. */
class Conn {
  readonly raw: RawClient;
  /** Channels subscribed with their owner's token (sent, whatever the answer). */
  readonly entitled = new Set<string>();
  /** Users (exchange ids) whose token this connection presented. */
  readonly presented = new Set<number>();
  /** Reply id → channel of the history/subscribe command that used it (ids unique for those). */
  readonly channelOfId = new Map<number, string>();
  nextId = 1;
  checked = 0;
  constructor(url: string) {
    this.raw = new RawClient(url, { connect: false });
  }
}

const users = () => [A, B];
const chan = (name: string, id: number | string) => `${X.ex.channelPrefix}${name}-${id}`;

function channel(r: Rng): string {
  const roll = r.next();
  if (roll < 0.6) return chan(r.pick(USER_CHANNELS), r.pick(users()).exchangeId);
  if (roll < 0.75) return `${X.ex.channelPrefix}${r.pick(['heartbeat', 'info', 'instruments', 'coin-price', 'funding-rate', 'orderBook-BTCUSDT-0.1', 'recent-trade-BTCUSDT'])}`;
  return r.pick([
    chan(r.pick(USER_CHANNELS), `0${A.exchangeId}`), chan('order', `${A.exchangeId}0`), chan('order', '-1'), chan('order', '99999999999999999999'),
    `order-${A.exchangeId}`, '', 'x'.repeat(5000), `${X.ex.channelPrefix}../order-${A.exchangeId}`, `${X.ex.channelPrefix}order-${A.exchangeId} `, '\u0000', '$private',
  ]);
}

function token(r: Rng): { data?: unknown; owner?: Bot } {
  const roll = r.next();
  if (roll < 0.55) {
    const owner = r.pick(users());
    return { data: { accessToken: owner.accessToken }, owner };
  }
  if (roll < 0.7) return {};
  return { data: r.pick<unknown>([{ accessToken: 'x.y.z' }, { accessToken: A.refreshToken }, { accessToken: null }, 'token', [], { accessToken: A.accessToken.slice(0, -3) + 'abc' }, hostile(r)]) };
}

/** A command for `c`, noting what the oracle needs. */
function command(c: Conn, r: Rng): Msg | string {
  const roll = r.next();
  const id = c.nextId++;
  if (roll < 0.35) {
    const ch = channel(r);
    const t = token(r);
    if (t.owner) {
      c.presented.add(t.owner.exchangeId);
      if (ch === chan(ch.slice(X.ex.channelPrefix.length).replace(/-\d+$/, ''), t.owner.exchangeId)) c.entitled.add(ch);
    }
    c.channelOfId.set(id, ch);
    const sub: Msg = { channel: ch, ...(t.data !== undefined ? { data: t.data } : {}) };
    if (r.chance(0.3)) Object.assign(sub, { recover: true, recoverable: true, offset: r.pick([0, 1, -1, 2 ** 53, 1e30]), epoch: r.pick(['', 'x', '0']) });
    return { id, subscribe: sub };
  }
  if (roll < 0.6) {
    const ch = channel(r);
    c.channelOfId.set(id, ch);
    return { id, history: { channel: ch, limit: r.pick([0, 1, 100, 1000, -1, 1e9, 'x']), ...(r.chance(0.3) ? { since: { offset: r.pick([0, -5, 1e20]), epoch: 'e' } } : {}), reverse: r.chance(0.5) } };
  }
  if (roll < 0.7) return { id, unsubscribe: { channel: channel(r) } };
  const weird = r.int(10);
  const oddId = r.pick([0, -1, 2 ** 53, 1e300, '7', null, id]);
  switch (weird) {
    case 0: return { id: oddId, presence: { channel: channel(r) } };
    case 1: return { id: oddId, presence_stats: { channel: channel(r) } };
    case 2: return { id: oddId, rpc: { method: r.pick(['getBalance', '', 'x'.repeat(300)]), data: hostile(r) } };
    case 3: return { id: oddId, publish: { channel: channel(r), data: { id: 'spoof' } } };
    case 4: return { id: oddId, refresh: { token: 'x' } };
    case 5: return { id: oddId, sub_refresh: { channel: channel(r), token: 'x' } };
    case 6: return {};
    case 7: return { id: oddId, connect: {} };
    case 8: return r.pick(['{', 'null', '[]', '"x"', '{"id":1,"subscribe":', '\u0000', '{"id":1e999}']);
    default: return { id: oddId, [r.pick(['send', 'nope', '__proto__'])]: hostile(r) };
  }
}

/** Channel of a user and its owner (exchange id), or undefined for other channels. */
function ownerOf(channelName: string): number | undefined {
  const m = new RegExp(`^${X.ex.channelPrefix}(${USER_CHANNELS.join('|')})-(\\d+)$`).exec(channelName);
  return m ? Number(m[2]) : undefined;
}

/** Exchange ids of users whose records appear in a publication's data (orders, fills, balances, positions). */
function usersIn(data: unknown, out = new Set<number>()): Set<number> {
  if (!data || typeof data !== 'object') return out;
  for (const [k, v] of Object.entries(data as Record<string, unknown>)) {
    if ((k === 'user' || k === 'userId' || k === 'exchangeId') && (typeof v === 'string' || typeof v === 'number') && /^\d+$/.test(String(v))) out.add(Number(v));
    else if (typeof v === 'object') usersIn(v, out);
  }
  return out;
}

/** Publications of user channels delivered (to entitled connections): the oracle had something to judge. */
let privateDelivered = 0;

/** Checks the messages `c` received since the last check. */
function checkConn(c: Conn): void {
  const msgs = c.raw.messages;
  for (; c.checked < msgs.length; c.checked++) {
    const m = msgs[c.checked] as Msg;
    const pubs: Array<{ ch: string | undefined; data: unknown }> = [];
    if (m.push?.pub) pubs.push({ ch: m.push.channel, data: m.push.pub.data });
    for (const kind of ['subscribe', 'history']) {
      for (const p of (m[kind]?.publications ?? []) as Msg[]) pubs.push({ ch: c.channelOfId.get(m.id), data: p.data });
    }
    if (m.error) assert.equal(typeof m.error.code, 'number', `error without code: ${JSON.stringify(m)}`);
    for (const p of pubs) {
      const owner = p.ch === undefined ? undefined : ownerOf(p.ch);
      if (owner !== undefined) assert.ok(c.entitled.has(p.ch!), `publication of ${p.ch} reached a connection not entitled to it: ${JSON.stringify(m).slice(0, 400)}`);
      if (owner !== undefined) privateDelivered++;
      for (const u of usersIn(p.data)) {
        if (u === A.exchangeId || u === B.exchangeId) assert.ok(c.presented.has(u), `data of user ${u} reached a connection that never presented its token: ${JSON.stringify(m).slice(0, 400)}`);
      }
    }
  }
}

test(`websocket fuzz: ${RUNS} frames, no private data to the unentitled, proper errors and closes (seed ${SEED})`, { timeout: 600_000 }, async () => {
  const conns: Conn[] = [];
  let closes = 0;
  let trades = 0;
  const open = async (): Promise<Conn> => {
    const c = new Conn(X.ex.wsUrl);
    await Promise.race([c.raw.opened, c.raw.closed]);
    conns.push(c);
    return c;
  };
  await fc.assert(fc.asyncProperty(fc.integer(), async (seed) => {
    const r = new Rng(seed);
    let c = conns.length >= 8 || (conns.length > 0 && r.chance(0.9)) ? r.pick(conns) : await open();
    if (c.raw.ws.readyState !== c.raw.ws.OPEN) {
      await c.raw.closed;
      assert.ok(PROPER_CLOSE(c.raw.closeCode), `closed with ${c.raw.closeCode} ${c.raw.closeReason}`);
      checkConn(c);
      conns.splice(conns.indexOf(c), 1);
      closes++;
      c = await open();
    }
    const frame: Array<Msg | string> = [];
    if (c.nextId === 1 && r.chance(0.9)) frame.push({ id: c.nextId++, connect: r.chance(0.8) ? {} : { token: 'x', data: hostile(r) } });
    const n = r.chance(0.2) ? 2 + r.int(8) : 1;
    for (let i = 0; i < n; i++) frame.push(command(c, r));
    // A last command every open connection answers at once: the frame is done when its reply (or a close) arrives.
    const lastId = c.nextId++;
    frame.push({ id: lastId, unsubscribe: { channel: `${X.ex.channelPrefix}heartbeat` } });
    const text = frame.map((m) => (typeof m === 'string' ? m : JSON.stringify(m))).join('\n');
    if (c.raw.ws.readyState === c.raw.ws.OPEN) c.raw.ws.send(r.chance(0.02) ? Buffer.from(text) : text);
    // Private data keeps flowing: A and B trade with each other now and then.
    if (r.chance(0.05)) {
      const [maker, taker] = r.chance(0.5) ? [A, B] : [B, A];
      ok(await maker.limit({ side: 'SELL', quantity: '0.001', limitPrice: 100000 }));
      ok(await taker.limit({ side: 'BUY', quantity: '0.001', limitPrice: 100000 }));
      trades++;
    }
    await Promise.race([waitFor(() => c.raw.reply(lastId) !== undefined || c.raw.ws.readyState !== c.raw.ws.OPEN, 2000, 'reply').catch(() => undefined), c.raw.closed]);
    checkConn(c);
  }), { numRuns: RUNS, seed: SEED, endOnFailure: true });

  for (const c of conns) checkConn(c);
  assert.ok(trades > 0 && privateDelivered > 0, `private data flowed during the fuzz: ${trades} trades, ${privateDelivered} delivered`);
  // The server is alive: HTTP answers and a new connection gets its own data.
  assert.equal((await http(X.url, 'GET', '/api/ping')).status, 200);
  const fresh = new RawClient(X.ex.wsUrl);
  await waitFor(() => fresh.reply(1) !== undefined, 3000, 'connect after the fuzz');
  fresh.send({ id: 2, subscribe: { channel: chan('order', A.exchangeId), data: { accessToken: A.accessToken } } });
  await waitFor(() => fresh.reply(2) !== undefined, 3000, 'subscribe after the fuzz');
  assert.equal(fresh.reply(2)!.error, undefined, JSON.stringify(fresh.reply(2)));
  fresh.ws.close();
  for (const c of conns) c.raw.ws.close();
  if (process.env.FUZZ_VERBOSE) console.log(JSON.stringify({ closes, trades, privateDelivered, open: conns.length }));
});
