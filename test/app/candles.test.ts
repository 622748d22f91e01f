/**
 * GET /api/market/{instrument}/candles against a real exchange: trades made through the API appear as a
 * candle with exact string prices; hostile or inconsistent queries get a 4xx in the error shape.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertError, Bot, eventually, http, ok, startTestExchange, type TestExchange } from './client.js';

describe('candles route', () => {
  let tx: TestExchange;
  before(async () => {
    tx = await startTestExchange();
  });
  after(async () => {
    await tx?.stop();
  });

  it('folds the trades into OHLCV candles', async () => {
    const maker = await new Bot(tx.url).signIn();
    const taker = await new Bot(tx.url).signIn();
    await maker.faucet();
    await taker.faucet();
    ok(await maker.limit({ side: 'SELL', quantity: '0.01', limitPrice: '100000.5', leverage: 10 }));
    ok(await maker.limit({ side: 'SELL', quantity: '0.02', limitPrice: '100001', leverage: 10 }));
    ok(await taker.limit({ side: 'BUY', quantity: '0.03', limitPrice: '100001', leverage: 10 }));
    const candles = await eventually(
      async () => ok(await http(tx.url, 'GET', '/api/market/BTCUSDT/candles?interval=1m')) as Array<Record<string, unknown>>,
      (c) => c.length > 0,
      'a candle',
    );
    assert.equal(candles.length, 1);
    const [c] = candles;
    assert.deepEqual({ ...c, t: undefined }, { t: undefined, o: '100000.5', h: '100001', l: '100000.5', c: '100001', v: '0.03' });
    assert.equal(Number(c!.t) % 60_000, 0);
    const day = ok(await http(tx.url, 'GET', `/api/market/BTCUSDT/candles?interval=1d&from=0&to=${Date.now() + 86_400_000}`));
    assert.equal(day.length, 1);
    assert.equal(day[0].v, '0.03');
    // Outside the window: nothing.
    assert.deepEqual(ok(await http(tx.url, 'GET', `/api/market/BTCUSDT/candles?interval=1h&from=0&to=${Number(c!.t) - 3_600_000}`)), []);
    assert.deepEqual(ok(await http(tx.url, 'GET', '/api/market/ETHUSDT/candles?interval=5m')), []);
  });

  it('answers hostile queries with a 4xx error', async () => {
    const base = '/api/market/BTCUSDT/candles';
    for (const q of ['?interval=2m', '?interval=', '?from=-1', '?to=abc', '?limit=0', '?limit=1001',
      '?from=99999999999999999999999', '?from=5000&to=5000', '?from=6000&to=5000']) {
      assertError(await http(tx.url, 'GET', base + q), [400], undefined);
    }
    assertError(await http(tx.url, 'GET', '/api/market/NOPE/candles'), 404, 'INSTRUMENT_NOT_FOUND');
    assertError(await http(tx.url, 'GET', '/api/market/%00/candles'), [400, 404]);
  });
});
