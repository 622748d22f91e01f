/**
 * Funding end to end in the live exchange, driven by its own funding clock (FUNDING_INTERVAL_MS = 5 s, each
 * settlement paying 8 h of funding): the clock's funding.settle goes through the sequencer and the engine to the
 * per-user `funding-{id}` channels, the `funding-rate` channel and REST (balances, /api/user/funding-transfer,
 * the position's accumulated funding). Then the exchange stops across a boundary and starts again on the same
 * data directory: the missed boundary is settled once, during the start, for one period.
 *
 * Amounts by hand: no index ticks, so no premium samples: F₈ₕ = interest 0.01 %; the long of 0.1 BTC at a mark of
 * 100,000 pays floor(10,000 × 0.0001) = 1 USDT per settlement and the single short receives it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Centrifuge } from 'centrifuge';
import pino from 'pino';
import WebSocket from 'ws';
import { loadConfig } from '../../src/app/config.js';
import { startExchange, type RunningExchange } from '../../src/app/exchange.js';
import { waitFor } from '../realtime/helpers.js';
import { Bot, ok, RAISED_RATE_LIMITS } from './client.js';

const INTERVAL_MS = 5000;
const dataDir = mkdtempSync(join(tmpdir(), 'perpx-funding-e2e-'));
const config = loadConfig({
  PORT: '0', DATA_DIR: dataDir, SIGNATURE_THREADS: '0', LOG_LEVEL: 'silent', SEED_DEMO: 'true', MARKET_MAKERS: '0', DEMO_WALLET: 'false',
  INDEX_FEED: 'off', HEARTBEAT_MS: '1000', FUNDING_INTERVAL_MS: String(INTERVAL_MS), FUNDING_RATE_PERIOD_MS: String(8 * 3600_000), ...RAISED_RATE_LIMITS,
});

interface Movement { quantity: number; balance: number; type: string; createdAt: string }
const fundingMovements = async (bot: Bot): Promise<Movement[]> =>
  (ok(await bot.get('/api/user/funding-transfer?limit=500')).list as Movement[]).filter((m) => m.type === 'funding');
const balanceOf = async (bot: Bot) => (await bot.balance()).funding.balance;
const boundaryAfter = (t: number) => (Math.floor(t / INTERVAL_MS) + 1) * INTERVAL_MS;

describe('funding from the clock through the engine to the channels and REST; a missed boundary at restart', () => {
  let ex: RunningExchange;
  let long: Bot;
  let short: Bot;
  const logs: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
  /** When the first paying settlement happened (its command time). */
  let firstPaid = 0;

  before(async () => {
    ex = await startExchange(config, { logger });
    long = await new Bot(ex.url).signIn();
    short = await new Bot(ex.url).signIn();
    await long.faucet();
    await short.faucet();
  });
  after(async () => {
    await ex?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('a settlement by the clock reaches funding-{id}, funding-rate and REST, with the amounts worked out by hand', async () => {
    ok(await short.limit({ side: 'SELL', quantity: '0.1', limitPrice: '100000', leverage: 10 }), 'short rests');
    ok(await long.limit({ side: 'BUY', quantity: '0.1', limitPrice: '100000', leverage: 10 }), 'long takes it');
    const [longBefore, shortBefore] = [await balanceOf(long), await balanceOf(short)];

    const c = new Centrifuge(ex.wsUrl, { websocket: WebSocket });
    const pubs: Array<{ channel: string; data: Record<string, unknown> }> = [];
    const subscribe = (channel: string, token?: string) => new Promise<void>((resolve, reject) => {
      const sub = c.newSubscription(`${ex.channelPrefix}${channel}`, token ? { data: { accessToken: token } } : {});
      sub.on('publication', (ctx) => pubs.push({ channel, data: ctx.data as Record<string, unknown> }));
      sub.once('subscribed', () => resolve());
      sub.once('error', (e) => reject(new Error(JSON.stringify(e))));
      sub.subscribe();
    });
    c.connect();
    try {
      await Promise.all([
        subscribe(`funding-${long.exchangeId}`, long.accessToken),
        subscribe(`funding-${short.exchangeId}`, short.accessToken),
        subscribe('funding-rate'),
      ]);
      // The clock settles at the next multiple of the interval: nobody submits anything here.
      await waitFor(() => pubs.some((p) => p.channel === `funding-${long.exchangeId}`), 3 * INTERVAL_MS, 'the long\'s funding publication');
      await waitFor(() => pubs.some((p) => p.channel === `funding-${short.exchangeId}`), INTERVAL_MS, 'the short\'s');
      await waitFor(() => pubs.some((p) => p.channel === 'funding-rate' && p.data.instrument === 'BTCUSDT'), INTERVAL_MS, 'the rate');
    } finally {
      c.disconnect();
    }

    const longPub = pubs.find((p) => p.channel === `funding-${long.exchangeId}`)!.data;
    const shortPub = pubs.find((p) => p.channel === `funding-${short.exchangeId}`)!.data;
    assert.equal(Number(longPub.quantity), longBefore - 1, 'the long paid 1 USDT (the channel carries the new balance)');
    assert.equal(Number(shortPub.quantity), shortBefore + 1, 'the short received it');
    const rate = pubs.find((p) => p.channel === 'funding-rate' && p.data.instrument === 'BTCUSDT')!.data;
    assert.equal(rate.fundingRate, '0.0001');

    // REST: the same movement in the history, the balance, the position's accumulated funding.
    const [paid] = await fundingMovements(long);
    assert.deepEqual([paid.quantity, paid.balance], [-1, longBefore - 1]);
    const [received] = await fundingMovements(short);
    assert.deepEqual([received.quantity, received.balance], [1, shortBefore + 1]);
    assert.equal(paid.createdAt, received.createdAt, 'one settlement');
    firstPaid = Date.parse(paid.createdAt);
    const [position] = await long.positions();
    assert.ok(position.fundingRate <= -1, `the long's position shows the funding it paid: ${position.fundingRate}`);
  });

  test('a boundary passed while stopped is settled once at the next start, for one period', async () => {
    assert.ok(firstPaid > 0, 'the first test saw a settlement');
    await ex.close();
    // Stopped across the next boundary.
    const missed = boundaryAfter(Date.now());
    await waitFor(() => Date.now() > missed + 100, 2 * INTERVAL_MS, 'a boundary passing while stopped');

    const restartFrom = Date.now();
    ex = await startExchange(config, { logger });
    assert.ok(logs.some((l) => l.msg === 'funding boundary missed while down: settling now' && l.instrument === 'BTCUSDT'), 'the start says so');

    // The clock's own settlements after the restart happen at the next boundary or later; the catch-up happened
    // while starting, well before it (a start takes far less than the ~5 s between them).
    const regular = boundaryAfter(restartFrom);
    const again = await new Bot(ex.url, long.wallet).signIn();
    const catchUp = (await fundingMovements(again)).filter((m) => Date.parse(m.createdAt) >= restartFrom && Date.parse(m.createdAt) < regular);
    assert.equal(catchUp.length, 1, `one settlement for the missed boundary: ${JSON.stringify(catchUp)}`);
    assert.equal(catchUp[0].quantity, -1, 'one period of funding, as at any boundary');
  });
});
