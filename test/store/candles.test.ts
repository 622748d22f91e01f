/**
 * Candles (src/store/candles.ts) against a fold of the projected trades, on SQLite and PostgreSQL: every
 * interval, random half-open windows, limits; open/close follow journal order within a bucket.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatUnits } from '../../src/domain/fixed.js';
import { CANDLE_INTERVALS, MAX_CANDLES, type Candle, type CandleInterval } from '../../src/store/candles.js';
import type { ReadStore } from '../../src/store/index.js';
import { mulberry32 } from '../../src/simulation/seeded-random.js';
import { DIALECTS, type TestStore } from './dialects.js';
import { generateHistory, INSTRUMENTS, T0, type History } from './history-fixture.js';

function oracle(h: History, instrument: string, interval: CandleInterval, from: number, to: number, limit = MAX_CANDLES): Candle[] {
  const step = CANDLE_INTERVALS[interval];
  const trades = h.ref.trades
    .filter((t) => t.instrument === instrument)
    .sort((a, b) => a.createdAt - b.createdAt || a.seq - b.seq || a.ev - b.ev);
  const byBucket = new Map<number, { o: number; h: number; l: number; c: number; v: bigint }>();
  for (const t of trades) {
    const b = t.createdAt - (t.createdAt % step);
    if (b < from || b >= to) continue;
    const c = byBucket.get(b);
    if (!c) byBucket.set(b, { o: t.price, h: t.price, l: t.price, c: t.price, v: BigInt(t.quantity) });
    else {
      c.h = Math.max(c.h, t.price);
      c.l = Math.min(c.l, t.price);
      c.c = t.price;
      c.v += BigInt(t.quantity);
    }
  }
  return [...byBucket.entries()]
    .sort((a, b) => a[0] - b[0])
    .slice(-limit)
    .map(([t, c]) => ({ t, o: formatUnits(c.o), h: formatUnits(c.h), l: formatUnits(c.l), c: formatUnits(c.c), v: formatUnits(c.v) }));
}

// Up to 10 minutes between commands: the history spans days, so every interval has many buckets.
const newHistory = (): History => generateHistory({ seed: 5, orders: 1500, stepMs: 600_000 });

for (const dialect of DIALECTS) {
  describe(`candles (${dialect.name})`, async () => {
    const available = await dialect.available();
    const history = newHistory();
    const tMax = history.batches.at(-1)!.ts;
    let ts: TestStore;
    let store: ReadStore;

    before(async () => {
      if (!available) return;
      ts = await dialect.open();
      store = ts.store;
      for (let i = 0; i < history.batches.length; i += 500) await store.projector.project(history.batches.slice(i, i + 500));
    });
    after(async () => {
      if (ts) await ts.dispose();
    });

    it('match a fold of the trades for every interval and random windows', { skip: !available }, async () => {
      assert.ok(history.ref.trades.length > 200, 'the fixture has trades');
      const r = mulberry32(11);
      for (const interval of Object.keys(CANDLE_INTERVALS) as CandleInterval[]) {
        for (const instrument of INSTRUMENTS) {
          const whole = await store.queries.candles({ instrument, interval, from: 0, to: tMax + 86_400_000 });
          assert.deepEqual(whole, oracle(history, instrument, interval, 0, tMax + 86_400_000));
          for (let k = 0; k < 4; k++) {
            const from = T0 + Math.floor(r() * (tMax - T0));
            const to = from + Math.floor(r() * (tMax - T0));
            const limit = r() < 0.5 ? 1 + Math.floor(r() * 20) : undefined;
            assert.deepEqual(
              await store.queries.candles({ instrument, interval, from, to, limit }),
              oracle(history, instrument, interval, from, to, limit),
              `${instrument} ${interval} [${from}, ${to}) limit ${limit}`,
            );
          }
        }
      }
    });

    it('a window is half-open on candle open times and never returns more than 1000', { skip: !available }, async () => {
      const instrument = INSTRUMENTS[0]!;
      const all = await store.queries.candles({ instrument, interval: '1m', from: 0, to: tMax + 60_000 });
      assert.ok(all.length > 3);
      const mid = all[Math.floor(all.length / 2)]!.t;
      const before = await store.queries.candles({ instrument, interval: '1m', from: 0, to: mid });
      const after = await store.queries.candles({ instrument, interval: '1m', from: mid, to: tMax + 60_000 });
      assert.equal(before.at(-1)!.t < mid, true);
      assert.equal(after[0]!.t, mid);
      assert.deepEqual([...before, ...after], all);
      // A `from` inside a bucket starts at the next bucket (that candle would be partial).
      assert.equal((await store.queries.candles({ instrument, interval: '1m', from: mid + 1, to: tMax + 60_000 }))[0]!.t > mid, true);
      assert.deepEqual(await store.queries.candles({ instrument, interval: '1m', from: mid, to: mid }), []);
      assert.ok((await store.queries.candles({ instrument, interval: '1m', from: 0, to: tMax + 60_000, limit: 5000 })).length <= MAX_CANDLES);
    });
  });
}
