// Index feeds: the seeded random walk (deterministic, integer, on the price grid), CSV parsing and replay,
// and the operator push's validation.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { parseUnits } from '../../src/domain/fixed.js';
import { DEMO_INSTRUMENTS } from '../../src/domain/instrument.js';
import { CsvReplayFeed, feedInstrumentOf, loadCsvSeries, OperatorPush, parseIndexCsv, RandomWalkFeed } from '../../src/feeds/index.js';

const BTC = feedInstrumentOf(DEMO_INSTRUMENTS[0]);
const ETH = feedInstrumentOf(DEMO_INSTRUMENTS[1]);

function walk(seed: number, volatility = '0.001') {
  const sent: Array<[string, number]> = [];
  const current = new Map<string, number>();
  const feed = new RandomWalkFeed({
    instruments: [BTC, ETH], startPrices: { BTCUSDT: parseUnits('100000'), ETHUSDT: parseUnits('3500') },
    currentIndex: (id) => current.get(id) ?? null, intervalMs: 1000, volatility: parseUnits(volatility), seed,
    sink: async (id, p) => {
      sent.push([id, p]);
      current.set(id, p);
    },
  });
  return { feed, sent, current };
}


/** Mock setTimeout from 0; `advance(ms)` moves it 1 ms at a time and lets each submission's promise settle. */
function mockClock(t: TestContext): (ms: number) => Promise<void> {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const settle = () => new Promise<void>((r) => setImmediate(r));
  return async (ms) => {
    await settle(); // what the caller just started schedules its timers first
    for (let i = 0; i < ms; i++) {
      t.mock.timers.tick(1);
      await settle();
    }
  };
}

describe('random walk feed', () => {
  it('is deterministic per seed, stays on the price grid and moves with the configured volatility', async () => {
    const a = walk(7);
    const b = walk(7);
    const c = walk(8);
    for (let i = 0; i < 500; i++) {
      await a.feed.tick();
      await b.feed.tick();
      await c.feed.tick();
    }
    assert.deepEqual(a.sent, b.sent);
    assert.notDeepEqual(a.sent, c.sent);
    const btc = a.sent.filter(([id]) => id === 'BTCUSDT').map(([, p]) => p);
    assert.equal(btc.length, 500);
    for (const p of btc) {
      assert.ok(Number.isSafeInteger(p) && p % BTC.priceIncrement === 0 && p >= BTC.minPrice && p <= BTC.maxPrice);
    }
    // Mean absolute step of a normal step with sd 0.1% is ≈ 0.08% of the price: check it is in a sane band.
    let sum = 0n;
    let prev = BigInt(parseUnits('100000'));
    for (const p of btc) {
      const d = BigInt(p) - prev;
      sum += ((d < 0n ? -d : d) * 1_000_000n) / prev; // ppm
      prev = BigInt(p);
    }
    const meanPpm = Number(sum / 500n);
    assert.ok(meanPpm > 500 && meanPpm < 1100, `mean step ${meanPpm} ppm`);
    assert.ok(new Set(btc).size > 400, 'the price moves');
  });

  it('continues from the current index (an operator push moves the walk)', async () => {
    const w = walk(3, '0.0001');
    w.current.set('BTCUSDT', parseUnits('50000'));
    await w.feed.tick();
    const p = w.sent.find(([id]) => id === 'BTCUSDT')![1];
    assert.ok(Math.abs(p - parseUnits('50000')) < parseUnits('100'), `walk continued from 50000, got ${p}`);
  });

  it('start/stop submits on its interval and stops cleanly', async (t) => {
    const advance = mockClock(t);
    const sent: string[] = [];
    const feed = new RandomWalkFeed({
      instruments: [BTC], startPrices: { BTCUSDT: parseUnits('100000') }, currentIndex: () => null, intervalMs: 10,
      volatility: parseUnits('0.001'), seed: 1, sink: async (id) => void sent.push(id),
    });
    feed.start();
    await advance(9);
    assert.equal(sent.length, 0, 'the first tick waits one interval');
    await advance(26); // to 35 ms: ticks at 10, 20 and 30
    await feed.stop();
    assert.equal(sent.length, 3);
    await advance(100);
    assert.equal(sent.length, 3, 'nothing after stop');
  });
});

describe('CSV replay feed', () => {
  it('parses ms and ISO timestamps, a header and comments; sorts by time; rejects bad rows with the line', () => {
    const rows = parseIndexCsv('timestamp,price\n# comment\n2000,100.5\n1000,99\n\n1970-01-01T00:00:03.000Z,101.25\n');
    assert.deepEqual(rows, [
      { t: 1000, price: parseUnits('99') }, { t: 2000, price: parseUnits('100.5') }, { t: 3000, price: parseUnits('101.25') },
    ]);
    assert.throws(() => parseIndexCsv('1000,abc'), /line 1: bad price/);
    assert.throws(() => parseIndexCsv('1000,1\nxx,2'), /line 2: bad timestamp/);
    assert.throws(() => parseIndexCsv('1000,-1'), /line 1: price must be positive/);
    assert.throws(() => parseIndexCsv('1000,1,2'), /line 1: expected/);
  });

  it('replays rows in order at the given speed, rounded to the price grid, and loops', async (t) => {
    const advance = mockClock(t);
    const dir = mkdtempSync(join(tmpdir(), 'perpx-csv-'));
    try {
      const file = join(dir, 'eth.csv');
      writeFileSync(file, '0,3500\n100,3501.234\n200,3502\n');
      const sent: number[] = [];
      const feed = new CsvReplayFeed({
        series: loadCsvSeries(`ETHUSDT=${file}`, [BTC, ETH]), speed: 20, sink: async (_id, p) => void sent.push(p),
      });
      feed.start();
      // Rows 100 ms apart at speed 20: one every 5 ms; after the last the series starts again (1 ms).
      await advance(4);
      assert.deepEqual(sent, [parseUnits('3500')]);
      await advance(7); // to 11 ms: 5, 10, then the loop at 11
      await feed.stop();
      assert.deepEqual(sent, [parseUnits('3500'), parseUnits('3501.23'), parseUnits('3502'), parseUnits('3500')]);
      assert.throws(() => loadCsvSeries(`XRPUSDT=${file}`, [BTC, ETH]), /unknown instrument/);
      assert.throws(() => loadCsvSeries(file, [BTC, ETH]), /INSTRUMENT=path/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('operator push', () => {
  it('validates the instrument and price bounds, then submits the price on the grid', async () => {
    const sent: Array<[string, number]> = [];
    const push = new OperatorPush(() => [BTC], async (id, p) => void sent.push([id, p]));
    assert.equal(await push.push('BTCUSDT', parseUnits('95000.04')), parseUnits('95000'));
    await assert.rejects(push.push('ETHUSDT', parseUnits('1')), RangeError);
    await assert.rejects(push.push('BTCUSDT', parseUnits('0.5')), RangeError);
    assert.deepEqual(sent, [['BTCUSDT', parseUnits('95000')]]);
  });
});
