// A subscribe still being authorized serves nothing: no history, no publication, for every per-user channel of
// the exchange's registry (USER_CHANNELS, so a channel added later is covered too). The exchange's own channel
// policy runs behind an authorizer held open by the test, so the history command arrives in a later frame while
// the subscribe is provably still pending. Without a token, with another user's valid token: nothing, before or
// after the refusal. With the owner's token: nothing before the subscribe reply, everything after it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEMO_INSTRUMENTS } from '../../src/domain/instrument.js';
import type { ExchangeEngine } from '../../src/engine/api.js';
import { ChannelPolicy, USER_CHANNELS } from '../../src/realtime/channel-policy.js';
import type { Authorize, RealtimeServer } from '../../src/realtime/index.js';
import { USER } from '../api/fakes.js';
import { RawClient, startServer, waitFor } from './helpers.js';

type Msg = Record<string, any>;
const ENV = 'futures-perp-test';
const OWNER = USER.exchangeId;
const OTHER = OWNER + 1;
const TOKENS: Record<string, number> = { 'token-of-owner': OWNER, 'token-of-other': OTHER };

describe('a subscribe being authorized serves nothing (slow authorizer)', () => {
  let rt: RealtimeServer;
  let url: string;
  /** Authorizations the test holds open; release() lets the oldest one run the real policy. */
  const held: Array<() => void> = [];
  const release = () => held.shift()!();
  const releaseAll = () => {
    while (held.length > 0) release();
  };

  before(async () => {
    const channels = new ChannelPolicy({
      env: ENV,
      engine: { instrumentConfig: (id: string) => DEMO_INSTRUMENTS.find((i) => i.id === id) } as unknown as ExchangeEngine,
      auth: {
        verifyAccessToken: async (t: string) =>
          t in TOKENS ? { user: { ...USER, exchangeId: TOKENS[t] }, expiresAt: Date.now() + 60_000, sessionId: `session-${t}`, sessionExpiresAt: Date.now() + 120_000 } : null,
      },
    });
    const authorize: Authorize = async (channel, data, client) => {
      await new Promise<void>((r) => held.push(r));
      return channels.authorize(channel, data, client);
    };
    ({ rt, url } = await startServer({ authorize, historyFor: channels.historyFor }));
    for (const name of USER_CHANNELS) {
      for (let i = 0; i < 3; i++) await rt.publish(`${ENV}:${name}-${OWNER}`, { secret: `${name}#${i}` });
    }
  });
  after(() => rt.close());

  async function connected(): Promise<RawClient> {
    const raw = new RawClient(url);
    await waitFor(() => raw.reply(1) !== undefined, 3000, 'connect reply');
    return raw;
  }

  async function ask(raw: RawClient, cmd: Msg): Promise<Msg> {
    raw.send(cmd);
    await waitFor(() => raw.reply(cmd.id) !== undefined, 3000, `reply ${cmd.id}`);
    return raw.reply(cmd.id) as Msg;
  }

  const secrets = (raw: RawClient) => JSON.stringify(raw.messages).match(/"secret"/g)?.length ?? 0;

  for (const name of USER_CHANNELS) {
    const channel = `${ENV}:${name}-${OWNER}`;

    for (const [who, data] of [['no token', {}], ["another user's valid token", { accessToken: 'token-of-other' }]] as const) {
      test(`${name}-{id} with ${who}: history while authorizing, and after the refusal → 103; no publication`, async () => {
        const raw = await connected();
        try {
          raw.send({ id: 2, subscribe: { channel, data, recoverable: true } });
          await waitFor(() => held.length === 1, 3000, 'authorization pending');
          const during = await ask(raw, { id: 3, history: { channel, limit: 100 } });
          assert.equal(during.error?.code, 103, JSON.stringify(during));
          await rt.publish(channel, { secret: 'while authorizing' });
          release();
          await waitFor(() => raw.reply(2) !== undefined, 3000, 'subscribe reply');
          assert.equal((raw.reply(2) as Msg).error?.code, 103);
          const afterwards = await ask(raw, { id: 4, history: { channel, limit: 100 } });
          assert.equal(afterwards.error?.code, 103);
          assert.equal(secrets(raw), 0, `leaked: ${JSON.stringify(raw.messages)}`);
        } finally {
          releaseAll();
          raw.ws.close();
        }
      });
    }

    test(`${name}-{id} with the owner's token: nothing before the subscribe reply, history after it`, async () => {
      const raw = await connected();
      try {
        raw.send({ id: 2, subscribe: { channel, data: { accessToken: 'token-of-owner' }, recoverable: true } });
        await waitFor(() => held.length === 1, 3000, 'authorization pending');
        const during = await ask(raw, { id: 3, history: { channel, limit: 100 } });
        assert.equal(during.error?.code, 103, JSON.stringify(during));
        assert.equal(secrets(raw), 0);
        release();
        await waitFor(() => raw.reply(2) !== undefined, 3000, 'subscribe reply');
        assert.equal((raw.reply(2) as Msg).error, undefined, JSON.stringify(raw.reply(2)));
        const h = await ask(raw, { id: 4, history: { channel, limit: 100 } });
        const got = (h.history.publications as Array<{ data: { secret: string } }>).map((p) => p.data.secret);
        assert.deepEqual(got.slice(0, 3), [0, 1, 2].map((i) => `${name}#${i}`));
      } finally {
        releaseAll();
        raw.ws.close();
      }
    });
  }

  test('an unsubscribe while authorizing cancels the subscribe: no reply, no history, no publication', async () => {
    const channel = `${ENV}:order-${OWNER}`;
    const raw = await connected();
    try {
      raw.send({ id: 2, subscribe: { channel, data: { accessToken: 'token-of-owner' } } });
      await waitFor(() => held.length === 1, 3000, 'authorization pending');
      await ask(raw, { id: 3, unsubscribe: { channel } });
      release();
      await rt.publish(channel, { secret: 'after unsubscribe' });
      const h = await ask(raw, { id: 4, history: { channel, limit: 100 } });
      assert.equal(h.error?.code, 103);
      assert.equal(raw.reply(2), undefined, 'the cancelled subscribe is not answered');
      assert.equal(secrets(raw), 0);
      await waitFor(() => rt.stats.subscriptions === 0, 3000, 'no subscription left');
    } finally {
      releaseAll();
      raw.ws.close();
    }
  });
});
