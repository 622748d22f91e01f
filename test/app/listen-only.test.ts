// A bot that only listens: it subscribes to its order and fill channels once, with ACCESS_TOKEN_TTL_SEC=5, and
// never refreshes (the public client's getData keeps handing out the token it has). Another session of the same
// wallet trades, against another user, for 20 s, four token lifetimes (SLOW=1: 10 minutes): the subscription, authorized once, lives
// while its session does, so the events the listener received equal the read model's history of that user.
// Then a connect with the listener's long-expired token answers 109 and the client connects with a new one, and
// logging the listener's session out ends its subscriptions (2000 "session ended").
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Centrifuge, type Subscription } from 'centrifuge';
import { decodeJwt } from 'jose';
import WebSocket from 'ws';
import { ALL_TIME, Bot, eventually, http, ok, sleep, startTestExchange, type TestExchange } from './client.js';

const TTL_SEC = 5;
const RUN_MS = process.env.SLOW === '1' ? 600_000 : 20_000;
const PRICE = 100000;

interface OrderEvent { id: string; status: string }
interface FillEvent { executionId: string; orderId: string; fillQuantity: number; fillPrice: number; makerTakerFlag: string }

/** Keeps a trading session's access token fresh: refreshed when it has less than 2 s left. */
async function fresh(X: TestExchange, bot: Bot): Promise<Bot> {
  if ((decodeJwt(bot.accessToken).exp as number) * 1000 - Date.now() > 2000) return bot;
  const r = ok(await http(X.url, 'POST', '/auth/refresh', undefined, { authorization: `Bearer ${bot.refreshToken}` }), 'refresh') as {
    token: { accessToken: string; refreshToken: string };
  };
  bot.accessToken = r.token.accessToken;
  bot.refreshToken = r.token.refreshToken;
  return bot;
}

/** Every page of a paged list (`next` cursor). */
async function allPages<T>(X: TestExchange, bot: Bot, path: string): Promise<T[]> {
  const out: T[] = [];
  let next: string | undefined;
  do {
    const page = ok(await (await fresh(X, bot)).get(`${path}${path.includes('?') ? '&' : '?'}limit=100${next ? `&next=${encodeURIComponent(next)}` : ''}`), path) as { list: T[]; next?: string };
    out.push(...page.list);
    next = page.next;
  } while (next);
  return out;
}

/** A centrifuge client listening like the public client: fixed subscribe data, never refreshed. */
function listen(X: TestExchange, listener: Bot) {
  const client = new Centrifuge(X.ex.wsUrl, { websocket: WebSocket });
  const seen = { orders: [] as OrderEvent[], fills: [] as FillEvent[], unsubscribed: [] as Array<{ channel: string; code: number }>, errors: [] as number[] };
  const token = listener.accessToken;
  const subscribe = (name: string, onData: (data: unknown) => void): Subscription => {
    const sub = client.newSubscription(`${X.ex.channelPrefix}${name}-${listener.exchangeId}`, { recoverable: true, getData: async () => ({ accessToken: token }) });
    sub.on('publication', (ctx) => onData(ctx.data));
    sub.on('unsubscribed', (ctx) => seen.unsubscribed.push({ channel: name, code: ctx.code }));
    sub.on('error', (ctx) => seen.errors.push(ctx.error.code));
    sub.subscribe();
    return sub;
  };
  const orders = subscribe('order', (d) => seen.orders.push(d as OrderEvent));
  const fills = subscribe('orderFills', (d) => seen.fills.push(d as FillEvent));
  client.connect();
  return { client, orders, fills, seen };
}

const fillKey = (f: { id?: string; executionId?: string; order?: string; orderId?: string; fillQuantity: number; fillPrice: number; fillRole?: string; makerTakerFlag?: string }) =>
  [f.executionId ?? f.id, f.orderId ?? f.order, f.fillQuantity, f.fillPrice, f.makerTakerFlag ?? f.fillRole].join('/');

describe(`listen-only bot with ACCESS_TOKEN_TTL_SEC=${TTL_SEC}`, { timeout: RUN_MS + 120_000 }, () => {
  let X: TestExchange;
  before(async () => {
    X = await startTestExchange({ ACCESS_TOKEN_TTL_SEC: String(TTL_SEC) });
  });
  after(async () => {
    await X?.stop();
  });

  test(`receives every order and fill event over ${RUN_MS / 1000} s without refreshing; logout ends the subscriptions`, async (t) => {
    const trader = await new Bot(X.url).signIn();
    const other = await new Bot(X.url).signIn();
    await Promise.all([trader.faucet(), other.faucet()]);
    // Signed in last: its 5 s token must still be valid when it subscribes (a loaded machine or a cluster is slower).
    const listener = await new Bot(X.url, trader.wallet).signIn();
    const L = listen(X, listener);
    t.after(() => L.client.disconnect());
    const waitSubscribed = (sub: Subscription) => eventually(async () => sub.state, (s) => s === 'subscribed', 'subscribed', 10_000);
    await Promise.all([waitSubscribed(L.orders), waitSubscribed(L.fills)]);

    // The oracle of what happened: the ids of the orders the trader placed, kept here.
    const placed = new Set<string>();
    const end = Date.now() + RUN_MS;
    for (let round = 0; Date.now() < end; round++) {
      const side = round % 2 === 0 ? 'BUY' : 'SELL';
      const opposite = side === 'BUY' ? 'SELL' : 'BUY';
      const resting = ok(await (await fresh(X, trader)).limit({ side, quantity: '0.001', limitPrice: PRICE }), 'resting order');
      placed.add(resting.id);
      ok(await (await fresh(X, other)).limit({ side: opposite, quantity: '0.001', limitPrice: PRICE }), 'crossing order');
      if (round % 3 === 0) {
        const far = ok(await trader.limit({ side: 'BUY', quantity: '0.001', limitPrice: PRICE * 0.95 }), 'far order');
        assert.equal(far.status, 'NEW');
        placed.add(far.id);
        ok(await trader.del(`/api/order/${far.id}`), 'cancel');
      }
      await sleep(250); // pace: a bot's rhythm, not a synchronisation
    }
    assert.equal(decodeJwt(listener.accessToken).exp as number < Date.now() / 1000, true, 'the listener\'s token expired long ago');

    // Every order the trader placed is in the read model, in its final state.
    await fresh(X, trader);
    const final = (list: Array<{ id: string; status: string }>) =>
      list.filter((o) => placed.has(o.id) && (o.status === 'FILLED' || o.status === 'CANCELLED')).length;
    const restOrders = await eventually(
      () => allPages<{ id: string; status: string }>(X, trader, `/api/order?${ALL_TIME}`),
      (list) => final(list) === placed.size,
      `the read model to hold the ${placed.size} placed orders, final`,
      15_000,
    ).catch((err: Error) => assert.fail(err.message.slice(0, 300)));
    const restFills = await allPages<Parameters<typeof fillKey>[0]>(X, trader, `/api/fill?${ALL_TIME}`);
    // What the listener received equals that history: each order's last event carries its final status.
    const lastStatus = () => Object.fromEntries(L.seen.orders.map((o) => [o.id, o.status]));
    await eventually(async () => lastStatus(), (s) => Object.keys(s).length >= restOrders.length, 'the last order events', 10_000);
    assert.deepEqual(lastStatus(), Object.fromEntries(restOrders.map((o) => [o.id, o.status])));
    assert.deepEqual(L.seen.fills.map(fillKey).sort(), restFills.map(fillKey).sort());
    assert.ok(restFills.length >= placed.size / 2, `fills happened: ${restFills.length}`);
    assert.deepEqual(L.seen.unsubscribed, [], 'no subscription ended while the session lived');
    assert.deepEqual(L.seen.errors, []);

    // A connect with the expired token: 109, a new token from getToken, then a private subscribe on it.
    const errors: number[] = [];
    const c = new Centrifuge(X.ex.wsUrl, { websocket: WebSocket, token: listener.accessToken, getToken: async () => (await fresh(X, trader)).accessToken });
    c.on('error', (ctx) => errors.push(ctx.error.code));
    const viaConnectToken = c.newSubscription(`${X.ex.channelPrefix}order-${listener.exchangeId}`);
    viaConnectToken.subscribe();
    c.connect();
    try {
      await waitSubscribed(viaConnectToken);
      assert.deepEqual(errors, [109]);
    } finally {
      c.disconnect();
    }

    // Logout of the listener's session (its refresh token: the access token expired) ends both subscriptions.
    ok(await http(X.url, 'POST', '/auth/logout', undefined, { authorization: `Bearer ${listener.refreshToken}` }), 'logout');
    const ended = await eventually(async () => [...L.seen.unsubscribed], (u) => u.length === 2, 'both subscriptions to end', 10_000);
    assert.deepEqual(ended.map((u) => u.code), [2000, 2000]);
    assert.equal(L.orders.state, 'unsubscribed');
    L.client.disconnect();
  });
});
