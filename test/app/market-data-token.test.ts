// GET /api/dx-feed/auth against a real started exchange: the market-data token is short-lived, the websocket
// accepts it as a connect token (the centrifuge client and the raw protocol) for the public channels, and it
// never opens a private channel nor any REST route. Bad or expired connect tokens are refused (3500, 109).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Centrifuge } from 'centrifuge';
import WebSocket from 'ws';
import { DEFAULT_TOKEN_ISSUER, MarketDataTokens, loadOrCreateSigningKey } from '../../src/auth/index.js';
import { RawClient, waitFor } from '../realtime/helpers.js';
import { Bot, assertError, http, ok, startTestExchange, type TestExchange } from './client.js';

type Msg = Record<string, any>;
const TTL_SEC = 120;
const ENV = 'futures-perp-dev';

/** Sends the commands in one frame after the socket opens; resolves when `until` holds. */
async function rawSession(url: string, commands: Msg[], until: (raw: RawClient) => boolean): Promise<RawClient> {
  const raw = new RawClient(url, { connect: false, autoPong: true });
  await raw.opened;
  raw.ws.send(commands.map((c) => JSON.stringify(c)).join('\n'));
  await waitFor(() => until(raw), 5000, 'server answer');
  return raw;
}

describe('market-data token (GET /api/dx-feed/auth)', () => {
  let X: TestExchange;
  let A: Bot;
  let token = '';

  before(async () => {
    X = await startTestExchange({ MARKET_DATA_TOKEN_TTL_SEC: String(TTL_SEC) });
    A = await new Bot(X.url).signIn();
  });
  after(() => X?.stop());

  test('issued to a signed-in user, with its expiry in ms', async () => {
    assertError(await http(X.url, 'GET', '/api/dx-feed/auth'), 401);
    const from = Date.now();
    const r = ok(await A.get('/api/dx-feed/auth'));
    const to = Date.now();
    assert.deepEqual(Object.keys(r).sort(), ['expireAt', 'token']);
    token = r.token;
    // exp is whole seconds after the issue second.
    assert.ok(r.expireAt > from + (TTL_SEC - 1) * 1000 && r.expireAt <= to + TTL_SEC * 1000, `expireAt ${r.expireAt}`);
  });

  test('never authorizes a REST route', async () => {
    const bearer = { authorization: `Bearer ${token}` };
    for (const path of ['/api/user/me', '/api/dx-feed/auth', '/auth/user/me', '/api/order/opened', '/api/market/available-balance']) {
      assertError(await http(X.url, 'GET', path, undefined, bearer), 401);
    }
    assertError(await http(X.url, 'POST', '/auth/refresh', undefined, bearer), 401);
  });

  test('the centrifuge client connects with it and receives a public channel', async () => {
    const c = new Centrifuge(X.ex.wsUrl, { websocket: WebSocket, token });
    try {
      const beat = new Promise<Msg>((resolve) => {
        const sub = c.newSubscription(`${ENV}:heartbeat`);
        sub.on('publication', (ctx) => resolve(ctx.data as Msg));
        sub.subscribe();
      });
      c.connect();
      assert.equal(typeof (await beat).t, 'number');
    } finally {
      c.disconnect();
    }
  });

  test('it opens no private channel and no history, even of its own user', async () => {
    const raw = await rawSession(X.ex.wsUrl, [
      { id: 1, connect: { token } },
      { id: 2, subscribe: { channel: `${ENV}:order-${A.exchangeId}`, data: { accessToken: token }, recoverable: true } },
      { id: 3, subscribe: { channel: `${ENV}:position-${A.exchangeId}`, recoverable: true } },
      { id: 4, history: { channel: `${ENV}:order-${A.exchangeId}`, limit: 10 } },
      { id: 5, subscribe: { channel: `${ENV}:info` } },
    ], (r) => [1, 2, 3, 4, 5].every((id) => r.reply(id) !== undefined)); // replies to subscribes may come in any order
    try {
      assert.ok((raw.reply(1) as Msg).connect, `connected: ${JSON.stringify(raw.reply(1))}`);
      assert.equal((raw.reply(2) as Msg).error?.code, 103);
      assert.equal((raw.reply(3) as Msg).error?.code, 103);
      assert.equal((raw.reply(4) as Msg).error?.code, 103);
      assert.ok((raw.reply(5) as Msg).subscribe, 'public channel subscribed after the checked connect');
      // The owner's real access token still opens the private channel on the same connection.
      raw.send({ id: 6, subscribe: { channel: `${ENV}:order-${A.exchangeId}`, data: { accessToken: A.accessToken } } });
      await waitFor(() => raw.reply(6) !== undefined, 5000, 'subscribe with the access token');
      assert.ok((raw.reply(6) as Msg).subscribe, JSON.stringify(raw.reply(6)));
    } finally {
      raw.ws.close();
    }
  });

  // An access token is a connect token too (its owner's private subscribes then need no token of their own).
  test('a bad connect token ends the connection (3500)', async () => {
    for (const bad of [`${token.slice(0, -4)}AAAA`, 'not-a-jwt', `${A.accessToken.slice(0, -4)}AAAA`]) {
      const raw = await rawSession(X.ex.wsUrl, [{ id: 1, connect: { token: bad } }, { id: 2, subscribe: { channel: `${ENV}:info` } }], (r) => r.closeCode !== 0);
      assert.equal(raw.closeCode, 3500, `close code for ${bad.slice(0, 12)}…`);
      assert.equal(raw.reply(2), undefined, 'nothing ran after a refused connect');
    }
  });

  test('an expired one gets error 109 (the client renews it)', async () => {
    // Issued by the exchange's own key, with a clock two TTLs in the past.
    const past = new MarketDataTokens(await loadOrCreateSigningKey(X.ex.dataDir), DEFAULT_TOKEN_ISSUER, TTL_SEC, () => Date.now() - 2 * TTL_SEC * 1000);
    const { token: expired } = await past.issue('someone');
    const raw = await rawSession(X.ex.wsUrl, [{ id: 1, connect: { token: expired } }], (r) => r.reply(1) !== undefined);
    try {
      assert.equal((raw.reply(1) as Msg).error?.code, 109);
      // Connecting again with a fresh token works on the same socket.
      raw.send({ id: 2, connect: { token } });
      await waitFor(() => raw.reply(2) !== undefined, 5000, 'second connect');
      assert.ok((raw.reply(2) as Msg).connect, JSON.stringify(raw.reply(2)));
    } finally {
      raw.ws.close();
    }
  });
});
