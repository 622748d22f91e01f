// Channel naming and policy of src/realtime/channels.ts, with fakes (no server).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEMO_INSTRUMENTS } from '../../src/domain/instrument.js';
import type { ExchangeEngine } from '../../src/engine/api.js';
import type { EngineEvent } from '../../src/engine/records.js';
import { ChannelPolicy, parseChannel } from '../../src/realtime/channel-policy.js';
import { ExchangeChannels } from '../../src/realtime/channels.js';
import { orderView, positionView, USER } from '../api/fakes.js';
import { waitFor } from '../realtime/helpers.js';

const ENV = 'futures-perp-dev';
const client = { id: 'c' };

function jwt(exp: number): string {
  const b = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${b({ alg: 'ES256' })}.${b({ exp })}.sig`;
}

function setup() {
  const sent: Array<[string, unknown]> = [];
  const engine = {
    instrumentConfig: (id: string) => DEMO_INSTRUMENTS.find((i) => i.id === id),
    depth: (instrument: string) => ({ instrument, t: 5, asks: [{ price: 101e8, quantity: 1e8 }], bids: [{ price: 99e8, quantity: 2e8 }] }),
  } as unknown as ExchangeEngine;
  const ch = new ExchangeChannels({
    env: ENV,
    engine,
    publisher: { publish: (c, d) => void sent.push([c, d]), hasSubscribers: () => true },
    bookIntervalMs: 10,
  });
  const policy = new ChannelPolicy({
    env: ENV,
    engine,
    auth: {
      verifyAccessToken: async (t: string) => (t === 'good' ? { user: USER, expiresAt: 123, sessionId: 'session-1', sessionExpiresAt: 456 } : null),
    },
  });
  return { ch, policy, sent };
}

describe('realtime channels mapping', () => {
  test('parses names', () => {
    assert.deepEqual(parseChannel(ENV, `${ENV}:order-fee-7`), { kind: 'user', name: 'order-fee-7', exchangeId: 7 });
    assert.deepEqual(parseChannel(ENV, `${ENV}:funding-rate`), { kind: 'public', name: 'funding-rate' });
    assert.equal(parseChannel(ENV, `${ENV}:orderBook-BTCUSDT-50`).kind, 'instrument');
    assert.equal(parseChannel(ENV, `${ENV}:orderBook-BTCUSDT-7`).kind, 'unknown');
    assert.equal(parseChannel(ENV, `other:info`).kind, 'unknown');
  });

  test('authorize: public, owner (with the token\'s session), other user, expired, unknown', async () => {
    const { policy } = setup();
    assert.deepEqual(await policy.authorize(`${ENV}:instruments`, undefined, client), { allowed: true });
    assert.deepEqual(await policy.authorize(`${ENV}:trade-BTCUSDT`, undefined, client), { allowed: true });
    assert.equal((await policy.authorize(`${ENV}:trade-NOPE`, undefined, client) as { code: number }).code, 102);
    assert.deepEqual(await policy.authorize(`${ENV}:order-${USER.exchangeId}`, { accessToken: 'good' }, client), { allowed: true, expiresAt: 456, sessionId: 'session-1' });
    assert.equal((await policy.authorize(`${ENV}:order-999`, { accessToken: 'good' }, client) as { code: number }).code, 103);
    assert.equal((await policy.authorize(`${ENV}:order-7`, {}, client) as { code: number }).code, 103);
    const expired = await policy.authorize(`${ENV}:order-7`, { accessToken: jwt(1) }, client);
    assert.deepEqual(expired, { allowed: false, code: 110, message: 'token expired', temporary: true });
    assert.equal((await policy.authorize(`${ENV}:bogus`, undefined, client) as { code: number }).code, 102);
  });

  test('history only for per-user channels and funding-rate', () => {
    const { policy } = setup();
    assert.ok(policy.historyFor(`${ENV}:position-7`));
    assert.ok(policy.historyFor(`${ENV}:funding-rate`));
    assert.equal(policy.historyFor(`${ENV}:orderBook-BTCUSDT-best`), null);
  });

  test('routes events to channels', () => {
    const { ch, sent } = setup();
    const events: EngineEvent[] = [
      { type: 'order', order: orderView() },
      { type: 'trade', trade: { executionId: 'e', instrument: 'BTCUSDT', side: 'BUY', quantity: 1e8, price: 100e8, createdAt: 1 } },
      { type: 'book', instrument: 'BTCUSDT', t: 5 },
    ];
    ch.onBatch({ events });
    ch.stop();
    const names = sent.map(([c]) => c);
    assert.ok(names.includes(`${ENV}:order-${USER.exchangeId}`));
    assert.ok(names.includes(`${ENV}:recent-trade-BTCUSDT`));
    assert.ok(names.includes(`${ENV}:trade-BTCUSDT`));
    for (const s of ['0.1', '1', '10', '50', '100', 'best']) assert.ok(names.includes(`${ENV}:orderBook-BTCUSDT-${s}`), s);
    const best = sent.find(([c]) => c === `${ENV}:orderBook-BTCUSDT-best`)?.[1] as { instrument: string; orderBook: { t: number; asks: unknown[]; bids: unknown[] } };
    assert.equal(best.instrument, 'BTCUSDT');
    assert.equal(best.orderBook.t, 5);
  });

  test('order-book and trade channels nobody subscribes to are not built; user channels always are (history)', () => {
    const sent: Array<[string, unknown]> = [];
    let depthBuilds = 0;
    let statsReads = 0;
    const subscribed = new Set([`${ENV}:orderBook-BTCUSDT-1`]);
    const engine = {
      instrumentConfig: (id: string) => DEMO_INSTRUMENTS.find((i) => i.id === id),
      depth: (instrument: string) => {
        depthBuilds++;
        return { instrument, t: 5, asks: [], bids: [] };
      },
    } as unknown as ExchangeEngine;
    const ch = new ExchangeChannels({
      env: ENV,
      engine,
      publisher: { publish: (c, d) => void sent.push([c, d]), hasSubscribers: (c) => subscribed.has(c) },
      instrumentStats: () => void statsReads++,
    });
    ch.onBatch({
      events: [
        { type: 'order', order: orderView() },
        { type: 'trade', trade: { executionId: 'e', instrument: 'BTCUSDT', side: 'BUY', quantity: 1e8, price: 100e8, createdAt: 1 } },
        { type: 'book', instrument: 'BTCUSDT', t: 5 },
        { type: 'instrument', instrument: { id: 'BTCUSDT', updatedAt: 5 } as never },
      ],
    });
    ch.stop();
    assert.deepEqual(sent.map(([c]) => c).sort(), [`${ENV}:order-${USER.exchangeId}`, `${ENV}:orderBook-BTCUSDT-1`].sort());
    assert.equal(depthBuilds, 1);
    assert.equal(statsReads, 0, 'no statistics read for an instruments channel nobody listens to');
  });
});

describe('info channel: matcher snapshots', () => {
  test('the state is published every period, not only on change; updatedAt strictly increases across snapshots and changes', async () => {
    const sent: Array<[string, { state: string; updatedAt: string }]> = [];
    let state = 'active';
    let clock = 1_000_000;
    const engine = {
      instrumentConfig: () => undefined,
      matcher: () => ({ state, updatedAt: 0 }),
    } as unknown as ExchangeEngine;
    const ch = new ExchangeChannels({
      env: ENV,
      engine,
      publisher: { publish: (c, d) => void (c === `${ENV}:info` && sent.push([c, d as { state: string; updatedAt: string }])), hasSubscribers: () => true },
      heartbeatMs: 10,
      now: () => clock,
    });
    ch.start();
    try {
      // No matcher change at all, and the clock stands still: snapshots still arrive, each one later.
      await waitFor(() => sent.length >= 2, 3000, 'two snapshots');
      assert.ok(sent.every(([, d]) => d.state === 'active'));
      // A change whose engine time is not later than the last snapshot is still published later than it.
      const lastSnapshot = Date.parse(sent.at(-1)![1].updatedAt);
      state = 'me-dead';
      ch.onBatch({ events: [{ type: 'matcher', matcher: { state, updatedAt: clock - 5 } }] });
      const change = sent.at(-1)![1];
      assert.equal(change.state, 'me-dead');
      assert.ok(Date.parse(change.updatedAt) > lastSnapshot);
      clock += 1000;
      const n = sent.length;
      await waitFor(() => sent.length > n, 3000, 'a snapshot after the change');
      assert.equal(sent.at(-1)![1].state, 'me-dead');
    } finally {
      ch.stop();
    }
    const times = sent.map(([, d]) => Date.parse(d.updatedAt));
    for (let i = 1; i < times.length; i++) assert.ok(times[i] > times[i - 1], `updatedAt ${times[i - 1]} → ${times[i]}`);
  });
});

describe('comparison fields as the public client keys its entities', () => {
  const trade = (instrument: string, executionId: string, createdAt: number) =>
    ({ type: 'trade', trade: { executionId, instrument, side: 'BUY', quantity: 1e8, price: 100e8, createdAt } }) as const;

  test('trades of one instrument (kept by instrument): several fills of one command get strictly later createdAt', () => {
    const { ch, sent } = setup();
    // One taker sweeping three levels: three trades with the command's time; another instrument's trade alongside.
    ch.onBatch({ events: [trade('BTCUSDT', '1', 5000), trade('BTCUSDT', '2', 5000), trade('ETHUSDT', '3', 5000), trade('BTCUSDT', '4', 5000)] });
    ch.onBatch({ events: [trade('BTCUSDT', '5', 5001), trade('BTCUSDT', '6', 9000)] });
    ch.stop();
    const times = (name: string) => sent.filter(([c]) => c === `${ENV}:${name}`).map(([, d]) => Date.parse((d as { createdAt: string }).createdAt));
    for (const name of ['trade-BTCUSDT', 'recent-trade-BTCUSDT']) assert.deepEqual(times(name), [5000, 5001, 5002, 5003, 9000], name);
    assert.deepEqual(times('trade-ETHUSDT'), [5000]);
    // The recent trade keeps its execution id.
    const ids = sent.filter(([c]) => c === `${ENV}:recent-trade-BTCUSDT`).map(([, d]) => (d as { executionId: string }).executionId);
    assert.deepEqual(ids, ['1', '2', '4', '5', '6']);
  });

  test('a position closed and a new one opened on the same instrument in the same millisecond: the new one is later', () => {
    const { ch, sent } = setup();
    const u = USER.exchangeId;
    ch.onBatch({ events: [{ type: 'position', position: positionView({ id: 'p1', userId: u, instrument: 'BTCUSDT', quantity: 0, updatedAt: 7000 }) }] });
    ch.onBatch({ events: [
      { type: 'position', position: positionView({ id: 'p2', userId: u, instrument: 'BTCUSDT', quantity: 1e8, createdAt: 7000, updatedAt: 7000 }) },
      { type: 'position', position: positionView({ id: 'p3', userId: u, instrument: 'ETHUSDT', quantity: 1e8, createdAt: 7000, updatedAt: 7000 }) },
    ] });
    // The new position's next change in the same millisecond as well.
    ch.onBatch({ events: [{ type: 'position', position: positionView({ id: 'p2', userId: u, instrument: 'BTCUSDT', quantity: 2e8, updatedAt: 7001 }) }] });
    ch.stop();
    const pubs = sent.filter(([c]) => c === `${ENV}:position-${u}`).map(([, d]) => d as { id: string; instrument: string; updatedAt: string });
    const btc = pubs.filter((p) => p.instrument === 'BTCUSDT').map((p) => [p.id, Date.parse(p.updatedAt)]);
    assert.deepEqual(btc, [['p1', 7000], ['p2', 7001], ['p2', 7002]]);
    assert.deepEqual(pubs.filter((p) => p.instrument === 'ETHUSDT').map((p) => Date.parse(p.updatedAt)), [7000]);
  });
});

test('order books: a publication that would repeat the book time (and so the book) is not sent', (tc) => {
  tc.mock.timers.enable({ apis: ['setTimeout'] });
  const sent: Array<[string, { orderBook: { t: number } }]> = [];
  let t = 5;
  const engine = {
    instrumentConfig: (id: string) => DEMO_INSTRUMENTS.find((i) => i.id === id),
    depth: (instrument: string) => ({ instrument, t, asks: [], bids: [] }),
  } as unknown as ExchangeEngine;
  const ch = new ExchangeChannels({
    env: ENV, engine, publisher: { publish: (c, d) => void (c.endsWith('-best') && sent.push([c, d as { orderBook: { t: number } }])), hasSubscribers: () => true },
    bookIntervalMs: 10,
  });
  // The first event's publication already reads the book after the second change (t = 5) …
  ch.onBatch({ events: [{ type: 'book', instrument: 'BTCUSDT', t: 4 }] });
  // … so the trailing one the second event schedules would send t = 5 again.
  ch.onBatch({ events: [{ type: 'book', instrument: 'BTCUSDT', t: 5 }] });
  tc.mock.timers.tick(40); // the trailing publication's interval ends: t = 5 again, not sent
  t = 6;
  ch.onBatch({ events: [{ type: 'book', instrument: 'BTCUSDT', t: 6 }] });
  tc.mock.timers.tick(40);
  ch.stop();
  assert.deepEqual(sent.map(([, d]) => d.orderBook.t), [5, 6]);
});
