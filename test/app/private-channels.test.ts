// End to end over a real websocket against a started exchange: a per-user channel's history (orders,
// balances, transfers…) reaches nobody but its owner. The attack is one frame holding connect, subscribe
// (without a token, or with another user's valid one) and history: the history must be refused while the
// subscribe is still being authorized, and stay refused after the subscribe is denied. Every per-user
// channel of the registry (USER_CHANNELS) is tried, so a channel added later is covered too.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { USER_CHANNELS } from '../../src/realtime/channel-policy.js';
import { RawClient, waitFor } from '../realtime/helpers.js';
import { Bot, ok, startTestExchange, type TestExchange } from './client.js';

type Msg = Record<string, any>;

/** Sends the given commands in ONE websocket frame (newline-separated), waits for the replies to all of them. */
async function oneFrame(wsUrl: string, commands: Msg[]): Promise<RawClient> {
  const raw = new RawClient(wsUrl, { connect: false });
  await raw.opened;
  raw.ws.send(commands.map((c) => JSON.stringify(c)).join('\n'));
  await waitFor(() => commands.every((c) => raw.reply(c.id) !== undefined), 5000, 'replies');
  return raw;
}

function attack(channel: string, data: unknown): Msg[] {
  return [
    { id: 1, connect: {} },
    { id: 2, subscribe: { channel, data, recoverable: true } },
    { id: 3, history: { channel, limit: 1000 } },
  ];
}

/** Nothing of the channel reached the client: refused subscribe and history, no publication, no history result. */
function assertNothingLeaked(raw: RawClient, what: string): void {
  assert.equal((raw.reply(2) as Msg | undefined)?.error?.code, 103, `${what}: subscribe must be refused: ${JSON.stringify(raw.reply(2))}`);
  const history = raw.reply(3) as Msg;
  assert.equal(history.error?.code, 103, `${what}: history must be refused: ${JSON.stringify(history)}`);
  assert.equal(history.history, undefined, `${what}: history result leaked`);
  const pushes = raw.messages.filter((m) => (m as Msg).push?.pub !== undefined);
  assert.deepEqual(pushes, [], `${what}: publications leaked`);
}

describe('private channels: history only for an authorized, started subscription', () => {
  let X: TestExchange;
  let A: Bot;
  let B: Bot;
  let aFilledId = '';
  const channelOf = (name: string, owner: Bot) => `${X.ex.channelPrefix}${name}-${owner.exchangeId}`;

  before(async () => {
    X = await startTestExchange();
    const C = new Bot(X.url);
    [A, B] = await Promise.all([new Bot(X.url).signIn(), new Bot(X.url).signIn(), C.signIn()]);
    await Promise.all([A.faucet(), C.faucet()]);
    // A trades with C (orders, fills, fees, position), then hangs a TpSl on the position.
    assert.equal(ok(await C.limit({ side: 'SELL', quantity: '0.01', limitPrice: 100000 })).status, 'NEW');
    const filled = ok(await A.limit({ side: 'BUY', quantity: '0.01', limitPrice: 100000 }));
    assert.equal(filled.status, 'FILLED');
    aFilledId = filled.id;
    ok(await A.post('/api/tpsl/BTCUSDT', await A.tpslBody('BTCUSDT', { type: 'take-profit', side: 'SELL', quantity: 0, price: 110000 })));
  });
  after(async () => {
    await X?.stop();
  });

  test('the owner reads its own history once subscribed (the channels hold A\'s data)', async () => {
    const order = channelOf('order', A);
    const raw = new RawClient(X.ex.wsUrl);
    try {
      await waitFor(() => raw.reply(1) !== undefined);
      raw.send({ id: 2, subscribe: { channel: order, data: { accessToken: A.accessToken }, recoverable: true } });
      await waitFor(() => raw.reply(2) !== undefined);
      assert.equal(raw.reply(2)!.error, undefined, JSON.stringify(raw.reply(2)));
      raw.send({ id: 3, history: { channel: order, limit: 1000 } });
      await waitFor(() => raw.reply(3) !== undefined);
      const pubs = (raw.reply(3) as Msg).history.publications as Array<{ data: { id: string } }>;
      assert.ok(pubs.some((p) => p.data.id === aFilledId), `A's order in its history: ${JSON.stringify(pubs)}`);
    } finally {
      raw.ws.close();
    }
  });

  for (const name of USER_CHANNELS) {
    test(`${name}-{id}: connect + subscribe without a token + history in one frame → nothing`, async () => {
      const raw = await oneFrame(X.ex.wsUrl, attack(channelOf(name, A), {}));
      try {
        assertNothingLeaked(raw, `${name} without token`);
      } finally {
        raw.ws.close();
      }
    });

    test(`${name}-{id}: connect + subscribe with another user's valid token + history in one frame → nothing`, async () => {
      const raw = await oneFrame(X.ex.wsUrl, attack(channelOf(name, A), { accessToken: B.accessToken }));
      try {
        assertNothingLeaked(raw, `${name} with B's token`);
        // B's token itself is fine: B's own channel of the same kind is granted.
        raw.send({ id: 4, subscribe: { channel: channelOf(name, B), data: { accessToken: B.accessToken } } });
        await waitFor(() => raw.reply(4) !== undefined);
        assert.equal(raw.reply(4)!.error, undefined, JSON.stringify(raw.reply(4)));
        // A history command after the refusal (another frame) is refused too.
        raw.send({ id: 5, history: { channel: channelOf(name, A), limit: 1000 } });
        await waitFor(() => raw.reply(5) !== undefined);
        assert.equal((raw.reply(5) as Msg).error?.code, 103);
      } finally {
        raw.ws.close();
      }
    });
  }
});
