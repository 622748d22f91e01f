// Centrifugo protocol details a client may meet: a connect token that expired answers 109 (centrifuge-js then
// fetches another with getToken and reconnects), an invalid one disconnects with 3500; commands sent behind
// the connect wait for its token check and run in order; history from another epoch answers 112; a recovery
// reply's offset is the stream top.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Authorize, CheckConnectToken, RealtimeServer } from '../../src/realtime/index.js';

type ConnectVerdict = Awaited<ReturnType<CheckConnectToken>>;
import { RawClient, client, connected, startServer, subscribed, waitFor } from './helpers.js';

const PRIVATE = 'test:private-u1';
const HISTORY = { size: 50, ttlMs: 60_000 };

/** Connect tokens: `token-of-u1` valid, `expired` expired, anything else invalid; the check waits while held. */
const VERDICTS: Record<string, ConnectVerdict> = { 'token-of-u1': 'valid', expired: 'expired' };

/** `private-u1` needs the token of u1, from the subscribe data or else from the connection. */
const authorize: Authorize = async (channel, data, info) => {
  if (channel.startsWith('test:public')) return { allowed: true };
  const token = (data as { accessToken?: string } | undefined)?.accessToken ?? info.connectToken;
  return channel === PRIVATE && token === 'token-of-u1' ? { allowed: true } : { allowed: false, code: 103, message: 'permission denied' };
};

describe('protocol details: connect tokens, history epochs, recovery offsets', () => {
  let rt: RealtimeServer;
  let url: string;
  let hold: Promise<void> | null = null;
  const checked: string[] = [];
  const checkConnectToken: CheckConnectToken = async (token) => {
    checked.push(token);
    if (hold) await hold;
    return VERDICTS[token] ?? 'invalid';
  };

  before(async () => {
    ({ rt, url } = await startServer({ authorize, checkConnectToken, historyFor: (ch) => (ch === PRIVATE ? HISTORY : null) }));
  });
  after(() => rt.close());

  test('an expired connect token answers 109; centrifuge-js gets a new token and connects with it', async () => {
    let calls = 0;
    const errors: number[] = [];
    const c = client(url, { token: 'expired', getToken: async () => (calls++, 'token-of-u1') });
    c.on('error', (ctx) => errors.push(ctx.error.code));
    c.connect();
    try {
      await connected(c);
      assert.deepEqual(errors, [109]);
      assert.equal(calls, 1);
      // The verified connect token is the credential of a private subscribe without its own.
      const sub = c.newSubscription(PRIVATE);
      sub.subscribe();
      await subscribed(sub);
    } finally {
      c.disconnect();
    }
  });

  test('an invalid connect token disconnects with 3500 (terminal); no token is no check', async () => {
    const bad = new RawClient(url, { connect: false });
    await bad.opened;
    bad.send({ id: 1, connect: { token: 'forged' } });
    await bad.closed;
    assert.equal(bad.closeCode, 3500);

    const before = checked.length;
    const plain = new RawClient(url);
    await waitFor(() => plain.reply(1) !== undefined, 3000, 'connect reply');
    assert.ok(plain.reply(1)?.connect);
    assert.equal(checked.length, before);
    // Without a connect token a private subscribe needs its own credential.
    plain.send({ id: 2, subscribe: { channel: PRIVATE } });
    await waitFor(() => plain.reply(2) !== undefined, 3000, 'subscribe reply');
    assert.deepEqual((plain.reply(2)?.error as { code: number }).code, 103);
    plain.ws.close();
  });

  test('commands behind a connect wait for its token check, then run in order; too many disconnect', async () => {
    let release!: () => void;
    hold = new Promise((r) => (release = r));
    try {
      const raw = new RawClient(url, { connect: false });
      await raw.opened;
      raw.ws.send(
        [
          { id: 1, connect: { token: 'token-of-u1' } },
          { id: 2, subscribe: { channel: 'test:public-a' } },
          { id: 3, subscribe: { channel: PRIVATE } },
          { id: 4, unsubscribe: { channel: 'test:public-z' } },
        ]
          .map((c) => JSON.stringify(c))
          .join('\n'),
      );
      raw.send({ id: 5, subscribe: { channel: 'test:public-b' } });
      await waitFor(() => checked.at(-1) === 'token-of-u1', 3000, 'the token check to start');
      // A later command is answered only after the connect: nothing arrived while the check is held.
      raw.send({ id: 6, subscribe: { channel: 'test:public-c' } });
      await waitFor(() => hold !== null, 100);
      assert.deepEqual(raw.messages, []);
      release();
      await waitFor(() => [1, 2, 3, 4, 5, 6].every((id) => raw.reply(id) !== undefined), 3000, 'every reply');
      const ids = (raw.messages as Array<Record<string, unknown>>).filter((m) => typeof m.id === 'number').map((m) => m.id);
      assert.equal(ids[0], 1, 'the connect reply comes first');
      assert.deepEqual([...ids].sort((a, b) => (a as number) - (b as number)), [1, 2, 3, 4, 5, 6]);
      for (const id of [2, 3, 5, 6]) assert.ok(raw.reply(id)?.subscribe, `subscribe ${id} succeeded`);
      raw.ws.close();

      hold = new Promise((r) => (release = r));
      const flood = new RawClient(url, { connect: false });
      await flood.opened;
      flood.ws.send(
        [{ id: 1, connect: { token: 'token-of-u1' } }, ...Array.from({ length: 65 }, (_, i) => ({ id: i + 2, subscribe: { channel: `test:public-${i}` } }))]
          .map((c) => JSON.stringify(c))
          .join('\n'),
      );
      await flood.closed;
      assert.equal(flood.closeCode, 3501, 'more than 64 commands behind a connect: bad request');
    } finally {
      hold = null;
      release();
    }
  });

  test('history since a position of another epoch answers 112; of this epoch, the publications after it', async () => {
    for (let i = 1; i <= 3; i++) await rt.publish(PRIVATE, { i });
    const raw = new RawClient(url);
    await raw.opened;
    raw.send({ id: 2, subscribe: { channel: PRIVATE, data: { accessToken: 'token-of-u1' }, recoverable: true } });
    await waitFor(() => raw.reply(2) !== undefined, 3000, 'subscribe reply');
    const { epoch, offset: top } = raw.reply(2)?.subscribe as { epoch: string; offset: number };
    raw.send({ id: 3, history: { channel: PRIVATE, limit: 10, since: { offset: 0, epoch: `${epoch}-other` } } });
    raw.send({ id: 4, history: { channel: PRIVATE, limit: 10, since: { offset: top - 1, epoch } } });
    await waitFor(() => raw.reply(3) !== undefined && raw.reply(4) !== undefined, 3000, 'history replies');
    assert.deepEqual(raw.reply(3)?.error, { code: 112, message: 'unrecoverable position' });
    const h = raw.reply(4)?.history as { publications: Array<{ offset: number }>; offset: number; epoch: string };
    assert.deepEqual(h.publications.map((p) => p.offset), [top]);
    assert.equal(h.offset, top);
    raw.ws.close();
  });

  test('a recovery reply carries the stream top as its offset, with the publications after the client\'s position', async () => {
    const first = new RawClient(url);
    await first.opened;
    first.send({ id: 2, subscribe: { channel: PRIVATE, data: { accessToken: 'token-of-u1' }, recoverable: true } });
    await waitFor(() => first.reply(2) !== undefined, 3000, 'subscribe reply');
    const { epoch, offset: from } = first.reply(2)?.subscribe as { epoch: string; offset: number };
    first.ws.close();
    for (let i = 0; i < 3; i++) await rt.publish(PRIVATE, { missed: i });

    const again = new RawClient(url);
    await again.opened;
    again.send({ id: 2, subscribe: { channel: PRIVATE, data: { accessToken: 'token-of-u1' }, recoverable: true, recover: true, offset: from, epoch } });
    await waitFor(() => again.reply(2) !== undefined, 3000, 'recovering subscribe reply');
    const r = again.reply(2)?.subscribe as { recovered: boolean; offset: number; epoch: string; publications: Array<{ offset: number; data: unknown }> };
    assert.equal(r.recovered, true);
    assert.equal(r.offset, from + 3, 'the stream top');
    assert.equal(r.epoch, epoch);
    assert.deepEqual(r.publications.map((p) => [p.offset, p.data]), [[from + 1, { missed: 0 }], [from + 2, { missed: 1 }], [from + 3, { missed: 2 }]]);
    again.ws.close();
  });
});
