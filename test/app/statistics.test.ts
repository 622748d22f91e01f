// Public statistics, yield and trade signals end to end: the figures are checked against the engine's own
// ledger (fees, balances) and the trades the test made, so they come from real history, not constants.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { Bot, assertError, eventually, http, ok, startTestExchange, type TestExchange } from './client.js';

const DAY = 86_400_000;
const SCALE = 100_000_000n;
/** JSON number of an exact money amount (1e-8 units). */
const wire = (m: bigint) => Number(m) / 1e8;

describe('public statistics, yield, trade signals', () => {
  let X: TestExchange;
  let A: Bot;
  let B: Bot;
  let C: Bot;
  const get = (path: string) => http(X.url, 'GET', path);

  before(async () => {
    X = await startTestExchange();
    [A, B, C] = await Promise.all([new Bot(X.url).signIn(), new Bot(X.url).signIn(), new Bot(X.url).signIn()]);
    await Promise.all([A.faucet(), B.faucet(), C.faucet()]);
    // C makes the market; A and B each take 0.01 BTC at 100000: two trades, 2000 usdt of volume.
    ok(await C.limit({ side: 'SELL', quantity: '0.02', limitPrice: 100000 }));
    assert.equal(ok(await A.limit({ side: 'BUY', quantity: '0.01', limitPrice: 100000 })).status, 'FILLED');
    assert.equal(ok(await B.limit({ side: 'BUY', quantity: '0.01', limitPrice: 100000 })).status, 'FILLED');
  });
  after(async () => {
    await X?.stop();
  });

  const ledger = () => X.ex.engine.ledger!();
  const totals = () => eventually(async () => ok(await get('/api/public/statistics/total')), (t) => t.trades === 2, 'two trades in totals');

  test('totals come from history and agree with the engine ledger', async () => {
    const t = await totals();
    const l = ledger();
    assert.ok(l.fees > 0n);
    assert.equal(t.tradingVolume, 2000);
    assert.equal(t.feesVolume, wire(l.fees), 'fees on fills = fees the engine collected');
    assert.equal(t.exchangeFees, wire(l.fees));
    assert.equal(t.reserveFund, 0);
    assert.equal(t.totalValueLocked, wire(l.balances));
    assert.equal(t.totalValueLocked, 30000 - wire(l.fees), 'three faucets minus fees');
    assert.equal(t.usersRegistered, 3);
    assert.equal(t.depositors, 3);
  });

  test('charts: one point per UTC day, per instrument where it applies', async () => {
    await totals();
    const now = Date.now();
    const from = new Date(now - 2 * DAY).toISOString();
    const to = new Date(now).toISOString();
    const r = ok(await get(`/api/public/statistics/charts?from=${from}&to=${to}`));
    const byName = Object.fromEntries(r.charts.map((c: any) => [c.name, c]));
    assert.deepEqual(Object.keys(byName).sort(), ['activeDepositors', 'feesVolume', 'totalValueLocked', 'tradingVolume', 'userRegistred']);
    for (const c of r.charts) assert.equal(c.points.length, 3, c.name);
    const values = (name: string) => byName[name].points.map((p: any) => p.value);
    const l = ledger();
    assert.deepEqual(values('tradingVolume'), [0, 0, 2000]);
    assert.deepEqual(values('feesVolume'), [0, 0, wire(l.fees)]);
    assert.deepEqual(values('userRegistred'), [0, 0, 3]);
    assert.deepEqual(values('activeDepositors'), [0, 0, 3]);
    assert.deepEqual(values('totalValueLocked'), [0, 0, wire(l.balances)]);
    assert.equal(byName.tradingVolume.unit, 'usdt');
    assert.equal(byName.userRegistred.unit, 'count');
    assert.equal(byName.tradingVolume.points[2].date, new Date(Math.floor(now / DAY) * DAY).toISOString());

    const eth = ok(await get(`/api/public/statistics/charts?from=${from}&to=${to}&instrument=ETHUSDT&name=tradingVolume`));
    assert.equal(eth.instrument, 'ETHUSDT');
    assert.deepEqual(eth.charts.map((c: any) => c.name), ['tradingVolume']);
    assert.deepEqual(eth.charts[0].points.map((p: any) => p.value), [0, 0, 0]);
    const btc = ok(await get(`/api/public/statistics/charts?from=${now - DAY}&to=${now}&instrument=BTCUSDT&name=tradingVolume`));
    assert.deepEqual(btc.charts[0].points.map((p: any) => p.value), [0, 2000], 'epoch-ms bounds work too');
  });

  test('charts: bad input → 400', async () => {
    const now = Date.now();
    const iso = (t: number) => new Date(t).toISOString();
    for (const q of [
      `from=${iso(now)}&to=${iso(now - DAY)}`,
      `from=${iso(now - 400 * DAY)}&to=${iso(now)}`,
      `from=yesterday&to=${iso(now)}`,
      `to=${iso(now)}`,
      `from=${iso(now - DAY)}&to=${iso(now)}&name=volume`,
      `from=${iso(now - DAY)}&to=${iso(now)}&instrument=NOPEUSDT`,
    ]) {
      assertError(await get(`/api/public/statistics/charts?${q}`), 400);
    }
  });

  test('yield APR = (fees + reserve income) / average TVL × 365 / days', async () => {
    await totals();
    const l = ledger();
    // Only today holds collateral inside the window, so Σ daily TVL = today's TVL.
    // rounded half-up to 1e-8
    const expected = wire((2n * l.fees * 365n * SCALE + l.balances) / (2n * l.balances));
    const d7 = ok(await get('/api/public/yield/apr'));
    assert.equal(d7.days, 7);
    assert.equal(d7.apr, expected);
    assert.equal(d7.exchangeFees, wire(l.fees));
    assert.equal(d7.reserveFundIncome, 0);
    assert.equal(d7.averageTvl, wire(l.balances / 7n));
    const d1 = ok(await get('/api/public/yield/apr?days=1'));
    assert.equal(d1.apr, d7.apr, 'a one-day window over the only day with collateral gives the same rate');
    assert.equal(d1.averageTvl, wire(l.balances));
    for (const days of ['0', '366', 'abc', '-3']) assertError(await get(`/api/public/yield/apr?days=${days}`), 400);
  });

  test("a user's yield status and accrued share", async () => {
    await totals();
    const l = ledger();
    const balance = X.ex.engine.account(A.exchangeId).balance;
    const status = ok(await A.get('/api/user/yield/status'));
    assert.equal(status.participating, true);
    assert.equal(status.currency, 'usdt');
    assert.equal(status.balance, wire(balance));
    assert.ok(Math.abs(status.share - Number(balance) / Number(l.balances)) < 1e-8);
    assert.equal(status.apr, ok(await get('/api/public/yield/apr')).apr);
    const earned = ok(await A.get('/api/user/yield/earned'));
    assert.equal(earned.earned, wire((l.fees * balance) / l.balances));
    assertError(await http(X.url, 'GET', '/api/user/yield/status'), 401);
    assertError(await http(X.url, 'GET', '/api/user/yield/earned'), 401);
  });

  test('online users follow the real-time connections', async () => {
    const count = async () => ok(await get('/api/public/statistics/online-users')).count as number;
    const base = await count();
    const ws = new WebSocket(X.ex.wsUrl);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    await eventually(count, (n) => n === base + 1, 'one more connection');
    ws.close();
    await eventually(count, (n) => n === base, 'connection gone');
  });

  test('trade signals: create, list own, public read; bad input → 400 with nothing stored', async () => {
    const body = { instrument: 'BTCUSDT', side: 'BUY', entryPrice: '100000', takeProfit: 110000, stopLoss: '95000', leverage: 5, comment: 'breakout' };
    const s = ok(await A.post('/api/trade/signal', body));
    assert.equal(s.user, A.userId);
    assert.equal(s.entryPrice, 100000);
    assert.equal(s.takeProfit, 110000);
    assert.equal(s.stopLoss, 95000);
    assert.equal(s.leverage, 5);
    const short = ok(await A.post('/api/trade/signal', { instrument: 'ETHUSDT', side: 'SELL', entryPrice: 3000 }));
    assert.equal(short.takeProfit, null);
    assert.equal(short.leverage, 1);

    const mine = ok(await A.get('/api/trade/signal'));
    assert.equal(mine.count, 2);
    assert.deepEqual(new Set(mine.list.map((x: any) => x.id)), new Set([s.id, short.id]));
    assert.deepEqual(ok(await B.get('/api/trade/signal')), { list: [], count: 0 }, "B's list holds none of A's");

    ok(await A.put(`/api/user/${A.userId}`, { name: 'Signal Sam' }));
    const pub = ok(await get(`/api/trade/signal/${s.id}`));
    assert.equal(pub.id, s.id);
    assert.equal(pub.author.name, 'Signal Sam');
    assert.equal(pub.author.authId, ok(await A.get('/api/user/me')).authId);
    assert.ok(!('wallet' in pub.author) && !('email' in pub.author));
    assertError(await get('/api/trade/signal/00000000-0000-4000-8000-000000000000'), 404);

    for (const bad of [
      { ...body, takeProfit: 90000 },
      { ...body, stopLoss: 105000 },
      { ...body, side: 'SELL' },
      { ...body, instrument: 'NOPEUSDT' },
      { ...body, entryPrice: '-1' },
      { ...body, entryPrice: '100000.123' },
      { ...body, leverage: 0 },
      { ...body, extra: 1 },
      { instrument: 'BTCUSDT', side: 'BUY' },
    ]) {
      assertError(await A.post('/api/trade/signal', bad), 400);
    }
    assert.equal(ok(await A.get('/api/trade/signal')).count, 2, 'refused signals were not stored');
    assertError(await http(X.url, 'POST', '/api/trade/signal', body), 401);
    assertError(await http(X.url, 'GET', '/api/trade/signal'), 401);
  });
});
