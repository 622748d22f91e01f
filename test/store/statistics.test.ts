// Exchange statistics fold (src/store/exchange-statistics.ts) against a straightforward recount of the projected
// events: generated history spread over three UTC days, projected in parts with an incremental refresh
// between them, read in chunks far smaller than one journal batch can be.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { EngineEvent } from '../../src/engine/records.js';
import { notional } from '../../src/domain/fixed.js';
import { DAY_MS, ExchangeStatistics } from '../../src/store/exchange-statistics.js';
import type { ProjectionBatch } from '../../src/store/projector.js';
import { openPostgresTestStore, openSqliteTestStore, postgresAvailable, type TestStore } from './dialects.js';
import { generateHistory } from './history-fixture.js';

/** Moves every event time of the batch by `ms` (the fixture's history fits in one day). */
function shifted(b: ProjectionBatch, ms: number): ProjectionBatch {
  const events = b.events.map((e): EngineEvent => {
    switch (e.type) {
      case 'trade': return { ...e, trade: { ...e.trade, createdAt: e.trade.createdAt + ms } };
      case 'fill': return { ...e, fill: { ...e.fill, createdAt: e.fill.createdAt + ms } };
      case 'funding': return { ...e, funding: { ...e.funding, updatedAt: e.funding.updatedAt + ms } };
      default: return e;
    }
  });
  return { ...b, ts: b.ts + ms, events };
}

/** Joins runs of 1–8 consecutive batches into one (one journal seq with many rows per table). */
function merged(batches: ProjectionBatch[]): ProjectionBatch[] {
  const out: ProjectionBatch[] = [];
  for (let i = 0, k = 1; i < batches.length; i += k, k = (k % 8) + 1) {
    const run = batches.slice(i, i + k);
    // Renumbered: the projector takes seqs one after the other (it refuses a gap).
    out.push({ seq: (out.at(-1)?.seq ?? batches[0]!.seq - 1) + 1, ts: run[run.length - 1]!.ts, events: run.flatMap((b) => b.events) });
  }
  return out;
}

interface RefDay { volume: Map<string, bigint>; fees: Map<string, bigint>; exchangeFees: bigint; reserve: bigint; depositors: Set<number>; tvl: bigint }

function recount(batches: ProjectionBatch[]): Map<number, RefDay> {
  const days = new Map<number, RefDay>();
  const balances = new Map<number, bigint>();
  let tvl = 0n;
  const day = (t: number) => {
    const d = Math.floor(t / DAY_MS);
    if (!days.has(d)) days.set(d, { volume: new Map(), fees: new Map(), exchangeFees: 0n, reserve: 0n, depositors: new Set(), tvl: 0n });
    return days.get(d)!;
  };
  const add = (m: Map<string, bigint>, k: string, v: bigint) => m.set(k, (m.get(k) ?? 0n) + v);
  for (const b of batches) {
    for (const e of b.events) {
      if (e.type === 'trade') add(day(e.trade.createdAt).volume, e.trade.instrument, notional(e.trade.quantity, e.trade.price));
      else if (e.type === 'fill') add(day(e.fill.createdAt).fees, e.fill.instrument, e.fill.fee);
      else if (e.type === 'funding') {
        const f = e.funding;
        const d = day(f.updatedAt);
        if (f.reason === 'fee') d.exchangeFees -= f.quantity;
        if (f.reason === 'liquidation-fee') d.reserve -= f.quantity;
        if (f.reason === 'deposit') d.depositors.add(f.userId);
        tvl += f.balance - (balances.get(f.userId) ?? 0n);
        balances.set(f.userId, f.balance);
        d.tvl = tvl;
      }
    }
  }
  return days;
}

for (const [name, openStore] of [['sqlite', openSqliteTestStore], ['postgres', openPostgresTestStore]] as Array<[string, () => Promise<TestStore>]>) describe(`exchange statistics fold (${name})`, () => {
  test('incremental, chunked fold equals a recount of the events, per day and instrument', async (ctx) => {
    if (name === 'postgres' && !(await postgresAvailable())) return ctx.skip('PostgreSQL not reachable');
    const t = await openStore();
    try {
      const h = generateHistory({ seed: 11, orders: 300 });
      const third = Math.ceil(h.batches.length / 3);
      const batches = merged(h.batches.map((b, i) => shifted(b, Math.floor(i / third) * DAY_MS + DAY_MS / 2)));
      assert.ok(batches.some((b) => b.events.filter((e) => e.type === 'trade').length > 3), 'some seq holds more rows than a chunk');
      const stats = new ExchangeStatistics(t.store.db, { chunk: 3 });
      const parts = [0, 0.2, 0.5, 0.9, 1].map((f) => Math.floor(f * batches.length));
      for (let i = 0; i + 1 < parts.length; i++) {
        await t.store.projector.project(batches.slice(parts[i], parts[i + 1]));
        await stats.refresh();
      }
      const ref = recount(batches);
      const dayNumbers = [...ref.keys()].sort((a, b) => a - b);
      assert.equal(dayNumbers.length, 3);
      const got = await stats.daysBetween(dayNumbers[0]! - 1, dayNumbers[2]! + 1);
      assert.equal(got.length, 5);
      assert.equal(got[0]!.tvl, 0n);
      assert.equal(got[0]!.volume.size, 0);
      let trades = 0;
      for (const b of batches) for (const e of b.events) if (e.type === 'trade') trades++;
      assert.ok(trades > 50, `history has trades (${trades})`);
      for (const g of got.slice(1, 4)) {
        const r = ref.get(g.day)!;
        assert.deepEqual(g.volume, r.volume, `volume day ${g.day}`);
        assert.deepEqual(g.fees, r.fees, `fees day ${g.day}`);
        assert.equal(g.exchangeFees, r.exchangeFees);
        assert.equal(g.reserveIncome, r.reserve);
        assert.deepEqual(g.depositors, r.depositors);
        assert.equal(g.tvl, r.tvl, `tvl day ${g.day}`);
      }
      assert.equal(got[4]!.tvl, got[3]!.tvl, 'TVL carries forward over a day without changes');
      const totals = await stats.totals();
      assert.equal(totals.trades, trades);
      let volume = 0n;
      for (const r of ref.values()) for (const v of r.volume.values()) volume += v;
      assert.equal(totals.tradingVolume, volume);
      assert.equal(totals.totalValueLocked, ref.get(dayNumbers[2]!)!.tvl);

      // A fresh fold over the finished store (one pass, default chunk) agrees with the incremental one.
      const again = new ExchangeStatistics(t.store.db);
      assert.deepEqual(await again.totals(), totals);
    } finally {
      await t.dispose();
    }
  });
});

describe('rolling 24 h instrument statistics (fields=metrics, instruments channel)', () => {
  const MIN = 60_000;
  const u = (v: number) => Math.round(v * 1e8);
  let seq = 0;
  const trade = (instrument: string, t: number, qty: number, price: number): ProjectionBatch => ({
    seq: ++seq, ts: t,
    events: [{ type: 'trade', trade: { executionId: `e${seq}`, instrument, side: 'BUY', quantity: u(qty), price: u(price), createdAt: t } }],
  });

  test('high, low, volumes and the price 24 h ago over a sliding window of whole minutes; folded incrementally', async () => {
    const t = await openSqliteTestStore();
    try {
      const T = Date.UTC(2026, 0, 10, 12, 0, 30);
      let now = T;
      const stats = new ExchangeStatistics(t.store.db, { chunk: 2, now: () => now });
      assert.equal(stats.instrumentStats('BTCUSDT'), undefined, 'never traded');
      await t.store.projector.project([
        trade('BTCUSDT', T - DAY_MS - 5 * MIN, 1, 90000), // before the window: the price 24 h ago
        trade('BTCUSDT', T - DAY_MS + 2 * MIN, 0.5, 95000),
        trade('BTCUSDT', T - 60 * MIN, 0.25, 101000),
        trade('ETHUSDT', T - 30 * MIN, 2, 3500),
        trade('BTCUSDT', T - 1000, 0.25, 99000),
        trade('BTCUSDT', T - 500, 0.1, 100000.5),
      ]);
      await stats.refresh();
      assert.deepEqual(stats.instrumentStats('BTCUSDT'), {
        high: u(101000), low: u(95000), closePrice: u(90000),
        volume: notional(u(0.5), u(95000)) + notional(u(0.25), u(101000)) + notional(u(0.25), u(99000)) + notional(u(0.1), u(100000.5)),
        volumeBase: u(1.1),
      });
      assert.deepEqual(stats.instrumentStats('ETHUSDT'), { high: u(3500), low: u(3500), closePrice: u(3500), volume: notional(u(2), u(3500)), volumeBase: u(2) });

      // Five minutes later the 95000 trade has left the window and is the price 24 h ago; a new trade arrives.
      now = T + 5 * MIN;
      await t.store.projector.project([trade('BTCUSDT', now - 100, 0.2, 98000)]);
      await stats.refresh();
      const later = stats.instrumentStats('BTCUSDT')!;
      assert.deepEqual([later.high, later.low, later.closePrice, later.volumeBase], [u(101000), u(98000), u(95000), u(0.8)]);

      // A day without trades: nothing in the window, the last price is the price 24 h ago.
      now = T + 2 * DAY_MS;
      assert.deepEqual(stats.instrumentStats('BTCUSDT'), { high: 0, low: 0, closePrice: u(98000), volume: 0n, volumeBase: 0 });

      // A fresh fold at that time agrees (history older than the window only sets the price before it).
      const fresh = new ExchangeStatistics(t.store.db, { now: () => now });
      await fresh.refresh();
      assert.deepEqual(fresh.instrumentStats('BTCUSDT'), stats.instrumentStats('BTCUSDT'));
    } finally {
      await t.dispose();
    }
  });
});
