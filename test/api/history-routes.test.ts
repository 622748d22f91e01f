/**
 * History routes over HTTP (app.inject) on a real read store, SQLite and PostgreSQL: a generated history of
 * thousands of orders for the signed-in user (exchangeId 7) and another user, checked against in-memory
 * oracles — GET /api/order (filters, sorts, next/offset paging, tpslList), /api/fill,
 * /api/user/funding-transfer, /api/position/history (filters, closeType, sorts), /api/user/balance/chart
 * (every group) and /api/user/statistics; bad query values are 400 and change nothing.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/api/server.js';
import { historyReader } from '../../src/app/history-reader.js';
import type { OrderGroup, Side } from '../../src/domain/enums.js';
import type { EngineEvent, OrderView, PositionView } from '../../src/engine/records.js';
import type { ProjectionBatch } from '../../src/store/index.js';
import type { ChartGroup } from '../../src/store/index.js';
import { DIALECTS, type TestStore } from '../store/dialects.js';
import { generateHistory, INSTRUMENTS, T0, type History } from '../store/history-fixture.js';
import { periodAfter, periodsCovering } from '../store/calendar.js';
import { mulberry32 } from '../../src/simulation/seeded-random.js';
import { refFills, refFunding, refOrders } from '../store/reference-queries.js';
import { AUTH, USER, makeDeps } from './fakes.js';

const ME = USER.exchangeId;
const OTHER = ME + 1;

/** Position lifetimes (open → close) for ME, sequential, with every close type; returns batches + oracle. */
function positionHistory(startSeq: number, startT: number, n: number) {
  const r = mulberry32(99);
  const batches: ProjectionBatch[] = [];
  const ref: Array<{ instrument: string; side: Side; openAt: number; closeAt: number; closeType: string }> = [];
  let seq = startSeq;
  let t = startT;
  const groups: OrderGroup[] = ['manually', 'tpsl', 'liquidation', 'adl'];
  for (let i = 0; i < n; i++) {
    const instrument = INSTRUMENTS[Math.floor(r() * INSTRUMENTS.length)]!;
    const side: Side = r() < 0.5 ? 'BUY' : 'SELL';
    const group = groups[Math.floor(r() * groups.length)]!;
    const pos = (qty: number, at: number): PositionView => ({
      id: `pos-${i}`, userId: ME, instrument, side, quantity: qty, costBasis: BigInt(qty) * 100n, avgPrice: 100e8, leverage: 10,
      maintenanceMargin: 0n, fundingPaid: 0n, fee: 0n, realizedPnL: 0n, unRealizedPnL: 0n, markPrice: 0, bankruptcyPrice: null,
      adlLevel: 0, createdAt: at, updatedAt: at,
    });
    const step = (orderGroup: OrderGroup, qty: number, oside: Side): ProjectionBatch => {
      t += 1 + Math.floor(r() * 3);
      const id = `00099:${(seq).toString(16).padStart(26, '0')}`;
      const order: OrderView = {
        id, userId: ME, instrument, type: 'MARKET', side: oside, status: 'FILLED', rejectedReason: '', timeInForce: 'IOC', postOnly: false,
        leverage: 10, quantity: 1e8, limitPrice: 0, stopPrice: null, group: orderGroup, unFilledQuantity: 0, cashQuantity: 0,
        filledQuantity: 1e8, filledValue: 100n, realizedPnL: 0n, fee: 0n, triggeredAt: null, createdAt: t, updatedAt: t,
      };
      const events: EngineEvent[] = [
        { type: 'order', order },
        { type: 'fill', fill: { executionId: `px${seq}`, userId: ME, orderId: id, instrument, side: oside, role: 'TAKER', quantity: 1e8, price: 100e8, fee: 0n, realizedPnL: 0n, createdAt: t } },
        { type: 'position', position: pos(qty, t) },
      ];
      return { seq: seq++, ts: t, events };
    };
    const open = step('manually', 1e8, side);
    const close = step(group, 0, side === 'BUY' ? 'SELL' : 'BUY');
    batches.push(open, close);
    ref.push({ instrument, side, openAt: open.ts, closeAt: close.ts, closeType: group === 'manually' ? 'manually' : group });
  }
  return { batches, ref };
}

const qs = (o: Record<string, unknown>) =>
  Object.entries(o).flatMap(([k, v]) => (v === undefined ? [] : Array.isArray(v) ? v.map((x) => `${k}=${encodeURIComponent(String(x))}`) : [`${k}=${encodeURIComponent(String(v))}`])).join('&');

for (const dialect of DIALECTS) {
  describe(`history routes (${dialect.name})`, async () => {
    const available = await dialect.available();
    let history: History;
    let positions: ReturnType<typeof positionHistory>;
    let ts: TestStore;
    let app: FastifyInstance;
    let now = 0;

    const get = async (url: string) => {
      const res = await app.inject({ method: 'GET', url, headers: AUTH });
      return { status: res.statusCode, body: res.json() };
    };
    const okGet = async (url: string) => {
      const r = await get(url);
      assert.equal(r.status, 200, `${url}: ${JSON.stringify(r.body)}`);
      return r.body;
    };
    /** Every page of a list route via `next`. */
    const walk = async (url: string) => {
      const out: any[] = [];
      let next: string | undefined;
      let count = -1;
      do {
        const page = await okGet(`${url}${url.includes('?') ? '&' : '?'}${next ? `next=${encodeURIComponent(next)}` : ''}`);
        if (count === -1) count = page.count;
        assert.equal(page.count, count, 'count does not depend on the page');
        out.push(...page.list);
        next = page.next;
        assert.ok(out.length <= count, `${url}: more rows than count (next ignored?)`);
      } while (next);
      assert.equal(out.length, count);
      return out;
    };

    before(async () => {
      if (!available) return;
      history = generateHistory({ seed: 6, orders: 3000, users: [ME, OTHER] });
      const last = history.batches.at(-1)!;
      positions = positionHistory(last.seq + 1, last.ts + 10, 300);
      now = positions.batches.at(-1)!.ts + 1000;
      // The position lifetimes' orders and fills belong in the order/fill oracles too.
      for (const b of positions.batches) {
        b.events.forEach((e, ev) => {
          if (e.type === 'order') history.ref.orders.set(`${e.order.userId}|${e.order.id}`, e.order);
          else if (e.type === 'fill') history.ref.fills.push({ ...e.fill, seq: b.seq, ev });
        });
      }
      ts = await dialect.open();
      const all = [...history.batches, ...positions.batches];
      for (let i = 0; i < all.length; i += 1000) await ts.store.projector.project(all.slice(i, i + 1000));
      const { deps } = makeDeps({ readStore: historyReader(ts.store.queries, { stats: ts.store.statistics }), clock: () => now });
      app = await buildServer(deps, { logger: false });
    });
    after(async () => {
      await app?.close();
      await ts?.dispose();
    });

    it('GET /api/order: random filters and sorts, walked by next and by offset, match the oracle', { skip: !available }, async () => {
      const r = mulberry32(3);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
      const tMax = history.batches.at(-1)!.ts;
      for (let i = 0; i < 25; i++) {
        const f: Record<string, unknown> = { limit: pick([7, 50, 500]) };
        if (r() < 0.4) f.instrument = r() < 0.5 ? pick(INSTRUMENTS) : INSTRUMENTS.slice(0, 2);
        if (r() < 0.3) f.status = pick(['FILLED', 'CANCELLED', 'NEW', 'PARTIALLY_FILLED']);
        if (r() < 0.3) f.side = pick(['BUY', 'SELL']);
        if (r() < 0.3) f.groupStatus = pick(['OPENED', 'CLOSED', 'CANCELLED', 'INACTIVE']);
        if (r() < 0.2) f.type = pick(['LIMIT', 'MARKET', 'STOP_LIMIT']);
        if (r() < 0.3) f.after = new Date(T0 + Math.floor(r() * (tMax - T0))).toISOString();
        if (r() < 0.3) f.before = String(T0 + Math.floor(r() * (tMax - T0)));
        f.sort = pick(['created-at-asc', 'created-at-desc', 'updated-at-asc', 'updated-at-desc']);
        const expected = refOrders(history.ref, ME, {
          instrument: f.instrument as string, status: f.status as any, side: f.side as any, groupStatus: f.groupStatus as any,
          type: f.type as any, after: f.after as string, before: f.before === undefined ? undefined : Number(f.before) + 1, sort: f.sort as any,
        }).map((o) => o.id);
        const got = (await walk(`/api/order?${qs(f)}`)).map((o) => o.id);
        assert.deepEqual(got, expected, `filter ${JSON.stringify(f)}`);
        // deprecated offset gives the same rows
        const offset = Math.floor(r() * Math.max(1, expected.length));
        const page = await okGet(`/api/order?${qs({ ...f, offset })}`);
        assert.deepEqual(page.list.map((o: any) => o.id), expected.slice(offset, offset + (f.limit as number)));
      }
    });

    it('GET /api/order?withTpSL=yes carries each order\'s TpSl from the read model; other users never show', { skip: !available }, async () => {
      const page = await okGet('/api/order?withTpSL=yes&limit=500&sort=created-at-asc');
      const mine = new Map<string, string[]>();
      for (const t of history.ref.tpsl.values()) if (t.userId === ME && t.orderId) mine.set(t.orderId, [...(mine.get(t.orderId) ?? []), t.id]);
      let withAny = 0;
      for (const o of page.list) {
        assert.equal(o.user, String(ME));
        assert.deepEqual(o.tpslList.map((t: any) => t.id).sort(), (mine.get(o.id) ?? []).sort(), o.id);
        if (o.tpslList.length) withAny++;
      }
      assert.ok(withAny > 0, 'the fixture attaches TpSl to some orders');
      const other = [...history.ref.orders.values()].find((o) => o.userId === OTHER)!;
      assert.equal((await okGet(`/api/order?id=${other.id}`)).count, 0);
    });

    it('GET /api/fill and /api/user/funding-transfer match the oracle across pages', { skip: !available }, async () => {
      const tMax = history.batches.at(-1)!.ts;
      const mid = T0 + Math.floor((tMax - T0) / 3);
      const fills = await walk(`/api/fill?after=${mid}&before=${tMax}&instrument=BTCUSDT&limit=100`);
      const expFills = refFills(history.ref, ME, { instrument: 'BTCUSDT', after: mid, before: tMax + 1 });
      assert.deepEqual(fills.map((f) => [f.id, f.order]), expFills.map((f) => [f.executionId, f.orderId]));
      const offsetPage = await okGet(`/api/fill?after=${mid}&before=${tMax}&instrument=BTCUSDT&limit=10&offset=20`);
      assert.deepEqual(offsetPage.list.map((f: any) => f.id), expFills.slice(20, 30).map((f) => f.executionId));

      const moves = await walk(`/api/user/funding-transfer?after=${mid}&limit=200`);
      const expMoves = refFunding(history.ref, ME, { after: mid });
      assert.deepEqual(moves.map((m) => [m.type, m.quantity, m.balance]), expMoves.map((m) => [m.reason, Number(m.quantity) / 1e8, Number(m.balance) / 1e8]));
    });

    it('GET /api/position/history: filters, closeType, side, time windows and every sort', { skip: !available }, async () => {
      const ref = positions.ref;
      const r = mulberry32(5);
      const mid = ref[Math.floor(ref.length / 2)]!.openAt;
      const cases: Array<Record<string, unknown>> = [
        {}, { instrument: 'ETHUSDT' }, { closeType: 'liquidation' }, { closeType: ['adl', 'tpsl'] }, { side: 'SELL', instrument: ['BTCUSDT', 'SOLUSDT'] },
        { openAfter: mid }, { openBefore: new Date(mid).toISOString() }, { closeAfter: mid, closeBefore: mid + 200 },
      ];
      for (const c of cases) {
        const sort = ['open-at-asc', 'open-at-desc', 'close-at-asc', 'close-at-desc'][Math.floor(r() * 4)]!;
        const many = (v: unknown) => (v === undefined ? undefined : Array.isArray(v) ? v : [v]);
        const within = (x: number, a: unknown, b: unknown) =>
          (a === undefined || x >= Date.parse(String(a)) || x >= Number(a)) && (b === undefined || x <= (typeof b === 'string' ? Date.parse(b) : Number(b)));
        const expected = ref
          .filter((p) => (!many(c.instrument) || many(c.instrument)!.includes(p.instrument)) && (!many(c.closeType) || many(c.closeType)!.includes(p.closeType)) &&
            (!c.side || p.side === c.side) && within(p.openAt, c.openAfter, c.openBefore) && within(p.closeAt, c.closeAfter, c.closeBefore))
          .sort((a, b) => {
            const k = sort.startsWith('open') ? 'openAt' : 'closeAt';
            return (sort.endsWith('asc') ? 1 : -1) * (a[k] - b[k]);
          })
          .map((p) => [p.instrument, p.side, new Date(p.openAt).toISOString(), new Date(p.closeAt).toISOString(), p.closeType]);
        const got = (await walk(`/api/position/history?${qs({ ...c, sort, limit: 37 })}`)).map((p) => [p.instrument, p.side, p.openAt, p.closeAt, p.closeType]);
        assert.deepEqual(got, expected, JSON.stringify(c));
      }
      assert.equal((await get('/api/position/history?closeType=bogus')).status, 400);
      assert.equal((await get('/api/position/history?sort=open')).status, 400);
    });

    it('GET /api/user/balance/chart: last balance of every period, for every group and sort', { skip: !available }, async () => {
      const moves = history.ref.funding.filter((f) => f.userId === ME); // already in journal order
      const balanceBefore = (t: number) => {
        let b = 0n;
        for (const m of moves) if (m.updatedAt < t) b = m.balance;
        return b;
      };
      const first = moves[0]!.updatedAt;
      const last = moves.at(-1)!.updatedAt;
      for (const group of ['hour', 'day', 'week', 'month', 'year'] as ChartGroup[]) {
        const after = group === 'hour' ? last - 30 * 3_600_000 : first - 86_400_000;
        const chart = await okGet(`/api/user/balance/chart?group=${group}&after=${after}&before=${now}&sort=date-asc`);
        // Periods from a fixed calendar (test/store/calendar.ts), not the store's own period functions.
        const starts = periodsCovering(group, after, now);
        assert.deepEqual(chart.list.map((p: any) => p.date), starts.map((s) => new Date(s).toISOString()), group);
        assert.deepEqual(chart.list.map((p: any) => p.balance), starts.map((s) => Number(balanceBefore(periodAfter(group, s))) / 1e8), group);
        assert.deepEqual(chart.list.map((p: any) => p.change), starts.map((s) => Number(balanceBefore(periodAfter(group, s)) - balanceBefore(s)) / 1e8));
        const desc = await okGet(`/api/user/balance/chart?group=${group}&after=${after}&before=${now}`);
        assert.deepEqual(desc.list, [...chart.list].reverse(), 'date-desc is the default');
      }
      const byDefault = await okGet('/api/user/balance/chart');
      assert.equal(byDefault.group, 'month');
      assert.equal(byDefault.list.length, 12);
      assert.equal((await get('/api/user/balance/chart?group=hour&after=0')).status, 400, 'too many buckets');
      assert.equal((await get('/api/user/balance/chart?group=fortnight')).status, 400);
      assert.equal((await get(`/api/user/balance/chart?after=${now}&before=${now - 1}`)).status, 400);
    });

    it('GET /api/user/statistics: exact fills, volume, fees and realized PnL per period and in total', { skip: !available }, async () => {
      const fills = history.ref.fills.filter((f) => f.userId === ME);
      const after = T0 - 86_400_000;
      const stats = await okGet(`/api/user/statistics?group=day&after=${after}&before=${now}`);
      const starts = periodsCovering('day', after, now);
      assert.deepEqual(stats.list.map((p: any) => p.date), starts.map((s) => new Date(s).toISOString()).reverse());
      const expect = (from: number, to: number) => {
        const xs = fills.filter((f) => f.createdAt >= from && f.createdAt < to);
        const volume = xs.reduce((s, f) => s + BigInt(f.quantity) * BigInt(f.price), 0n) / 100_000_000n;
        return {
          fills: xs.length, volume: Number(volume) / 1e8, fee: Number(xs.reduce((s, f) => s + f.fee, 0n)) / 1e8,
          realizedPnL: Number(xs.reduce((s, f) => s + f.realizedPnL, 0n)) / 1e8,
        };
      };
      for (const p of stats.list) {
        const s = Date.parse(p.date);
        assert.deepEqual({ fills: p.fills, volume: p.volume, fee: p.fee, realizedPnL: p.realizedPnL }, expect(s, periodAfter('day', s)), p.date);
      }
      assert.ok(stats.total.fills === fills.length && stats.total.fills > 1000, `total fills ${stats.total.fills}`);
      assert.deepEqual(stats.total, expect(after, now));
      assert.equal((await get('/api/user/statistics?group=hour')).status, 400, 'hour is not a statistics group');
    });

    it('bad paging input is a 400, not a 500', { skip: !available }, async () => {
      assert.equal((await get('/api/order?next=garbage')).status, 400);
      const first = await okGet('/api/order?sort=created-at-asc&limit=5');
      assert.equal((await get(`/api/order?sort=updated-at-desc&next=${encodeURIComponent(first.next)}`)).status, 400, 'cursor of another sort');
      assert.equal((await get('/api/user/funding-transfer?after=yesterday')).status, 400);
      assert.equal((await get('/api/position/history?next=%7B%7D')).status, 400);
    });
  });
}
