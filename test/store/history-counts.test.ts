/**
 * Exact `count` of GET /api/order pages (trigger-kept counters, version-keyed cache, count carried in the
 * cursor) and of GET /api/fill pages (per-fill ordinals), on SQLite and PostgreSQL:
 * - the counter tables equal a GROUP BY over the rows, and the fills' ordinals their row_number(), after
 *   every projected chunk of a generated history;
 * - walking pages while orders are created, change status and fills arrive between pages, every page's
 *   count equals the oracle's at that moment, and no row is skipped or repeated;
 * - a cursor's carried count is not trusted for another filter or when edited.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { FillView, OrderView } from '../../src/engine/records.js';
import type { FillFilter, OrderFilter, Page, ReadStore } from '../../src/store/index.js';
import type { ProjectionBatch } from '../../src/store/projector.js';
import { DIALECTS, type TestStore } from './dialects.js';
import { assertOrdinalsMatchRows } from './ordinal-ranks.js';
import { generateHistory, INSTRUMENTS, T0, type History } from './history-fixture.js';
import { mulberry32 } from '../../src/simulation/seeded-random.js';
import { refFills, refOrders } from './reference-queries.js';

const USER = 2;

async function assertCountersMatchRows(store: ReadStore, label: string): Promise<void> {
  const db = store.db;
  const norm = (rows: Record<string, unknown>[]) =>
    rows.map((r) => Object.values(r).map((v) => String(v)).join('|')).sort();
  const orderCounts = await sql<Record<string, unknown>>`
    select user_id, instrument, status, side, type, order_group, triggered, n from order_counts where n <> 0`.execute(db);
  const orderRows = await sql<Record<string, unknown>>`
    select user_id, instrument, status, side, type, order_group,
      case when triggered_at is null then 0 else 1 end as triggered, count(*) as n
    from orders group by user_id, instrument, status, side, type, order_group, case when triggered_at is null then 0 else 1 end`.execute(db);
  assert.deepEqual(norm(orderCounts.rows), norm(orderRows.rows), `order counters (${label})`);
  await assertOrdinalsMatchRows(store, label);
  // min/max of order combinations only widen: they bound every row of the combination.
  const outside = await sql<{ n: unknown }>`
    select count(*) as n from orders o join order_counts c on c.user_id = o.user_id and c.instrument = o.instrument
      and c.status = o.status and c.side = o.side and c.type = o.type and c.order_group = o.order_group
      and c.triggered = case when o.triggered_at is null then 0 else 1 end
    where o.created_at < c.min_created or o.created_at > c.max_created`.execute(db);
  assert.equal(Number(outside.rows[0]!.n), 0, `order counter bounds (${label})`);
}

/** Mutations between pages: a new order (at the head or inside the history), a status change, a new fill. */
class Churn {
  private n = 0;
  private seq: number;
  private t: number;
  private readonly r = mulberry32(99);

  constructor(private readonly store: ReadStore, private readonly history: History) {
    this.seq = history.batches.at(-1)!.seq;
    this.t = history.batches.at(-1)!.ts;
  }

  async step(): Promise<void> {
    const ref = this.history.ref;
    const mine = [...ref.orders.values()].filter((o) => o.userId === USER);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(this.r() * xs.length)]!;
    this.t += 5;
    this.n++;
    const template = pick(mine);
    // Every other new row lands in the middle of the history (inside every window the tests use).
    const inside = this.n % 2 === 0;
    const middle = Math.floor((T0 + this.history.batches.at(-1)!.ts) / 2) + this.n;
    const created: OrderView = {
      ...template, id: `00072:${this.n.toString(16).padStart(26, '0')}`, instrument: INSTRUMENTS[this.n % 3]!,
      status: (['NEW', 'FILLED', 'CANCELLED'] as const)[Math.floor(this.n / 3) % 3]!, createdAt: inside ? middle : this.t, updatedAt: this.t,
    };
    const moved = pick(mine);
    const changed: OrderView = {
      ...moved, status: moved.status === 'FILLED' ? 'CANCELLED' : 'FILLED',
      triggeredAt: moved.triggeredAt === null ? this.t : moved.triggeredAt, updatedAt: this.t,
    };
    const fillTemplate = pick(ref.fills.filter((f) => f.userId === USER));
    const fill: FillView = {
      ...({ ...fillTemplate, seq: undefined, ev: undefined } as unknown as FillView),
      executionId: `churn-${this.n}`, instrument: INSTRUMENTS[Math.floor(this.n / 2) % 3]!,
      createdAt: inside ? middle : this.t,
    };
    delete (fill as Partial<{ seq: number; ev: number }>).seq;
    delete (fill as Partial<{ seq: number; ev: number }>).ev;
    const batch: ProjectionBatch = {
      seq: ++this.seq, ts: this.t,
      events: [{ type: 'order', order: created }, { type: 'order', order: changed }, { type: 'fill', fill }],
    };
    await this.store.projector.project([batch]);
    ref.orders.set(`${USER}|${created.id}`, created);
    ref.orders.set(`${USER}|${changed.id}`, changed);
    ref.fills.push({ ...fill, seq: batch.seq, ev: 2 });
  }
}

async function walkChurning<T extends { id?: string; executionId?: string }>(
  page: (next?: string) => Promise<Page<T>>,
  expectedCount: () => number,
  churn: Churn,
  label: string,
): Promise<string[]> {
  const seen: string[] = [];
  let next: string | undefined;
  let pages = 0;
  do {
    const p = await page(next);
    assert.equal(p.count, expectedCount(), `${label}: count of page ${pages}`);
    // Asked again with no write in between (served from the cache or the cursor): the same.
    assert.equal((await page(next)).count, p.count, `${label}: repeated page ${pages}`);
    for (const x of p.list) seen.push((x.id ?? x.executionId)!);
    next = p.next;
    await churn.step();
    assert.ok(++pages < 1000, 'paging does not end');
  } while (next);
  return seen;
}

for (const dialect of DIALECTS) {
  describe(`history counts (${dialect.name})`, async () => {
    const available = await dialect.available();
    const history = generateHistory({ seed: 11, orders: 1500 });
    let ts: TestStore;
    let store: ReadStore;
    let churn: Churn;

    before(async () => {
      if (!available) return;
      ts = await dialect.open();
      store = ts.store;
      for (let i = 0; i < history.batches.length; i += 500) await store.projector.project(history.batches.slice(i, i + 500));
      churn = new Churn(store, history);
    });
    after(async () => {
      if (ts) await ts.dispose();
    });

    it('trigger-kept counters and fill ranks match the rows after every projected chunk', { skip: !available }, async () => {
      const own = await dialect.open();
      try {
        const h = generateHistory({ seed: 12, orders: 1000 });
        for (let i = 0; i < h.batches.length; i += 150) {
          await own.store.projector.project(h.batches.slice(i, i + 150));
          await assertCountersMatchRows(own.store, `after batch ${i + 150}`);
        }
        // Re-projecting (skipped as already applied) changes nothing.
        await own.store.projector.project(h.batches.slice(0, 300));
        await assertCountersMatchRows(own.store, 'after re-projecting');
      } finally {
        await own.dispose();
      }
    });

    const tMax = history.batches.at(-1)!.ts;
    const mid = Math.floor((T0 + tMax) / 2);
    const orderFilters: Array<[string, OrderFilter]> = [
      ['no filter', {}],
      ['status FILLED', { status: 'FILLED' }],
      ['groupStatus CANCELLED, updated-at-asc', { groupStatus: 'CANCELLED', sort: 'updated-at-asc' }],
      ['instrument + status, window', { instrument: INSTRUMENTS[1], status: ['FILLED', 'CANCELLED'], after: mid, limit: 11 }],
      ['window only', { after: T0 + 1000, before: tMax - 1000 }],
      ['triggered yes', { triggered: 'yes' }],
    ];
    for (const [label, filter] of orderFilters) {
      it(`orders (${label}): count stays exact while rows change between pages; no row skipped or repeated`, { skip: !available }, async () => {
        const f = { limit: 97, ...filter };
        const before = new Set(refOrders(history.ref, USER, f).map((o) => o.id));
        const seen = await walkChurning(
          (next) => store.queries.listOrders(USER, { ...f, next }),
          () => refOrders(history.ref, USER, f).length,
          churn,
          label,
        );
        assert.equal(new Set(seen).size, seen.length, `${label}: a row was repeated`);
        const after = new Set(refOrders(history.ref, USER, f).map((o) => o.id));
        const seenSet = new Set(seen);
        // Rows matching from start to end whose sort key did not move must all have been visited.
        const sortKeyMoves = (f.sort ?? '').startsWith('updated');
        for (const id of before) {
          if (!after.has(id)) continue;
          const o = history.ref.orders.get(`${USER}|${id}`)!;
          if (sortKeyMoves && o.updatedAt > tMax) continue;
          assert.ok(seenSet.has(id), `${label}: row ${id} was skipped`);
        }
        await assertCountersMatchRows(store, label);
      });
    }

    const fillFilters: Array<[string, FillFilter]> = [
      ['no filter', {}],
      ['instrument + window', { instrument: INSTRUMENTS[0], after: mid, before: tMax + 1_000_000, limit: 7 }],
      ['window covering everything', { after: 0, before: tMax + 1_000_000 }],
    ];
    for (const [label, filter] of fillFilters) {
      it(`fills (${label}): count stays exact while fills arrive between pages; no row skipped or repeated`, { skip: !available }, async () => {
        const f = { limit: 61, ...filter };
        const before = refFills(history.ref, USER, f).map((x) => x.executionId);
        const seen = await walkChurning(
          (next) => store.queries.listFills(USER, { ...f, next }),
          () => refFills(history.ref, USER, f).length,
          churn,
          `fills ${label}`,
        );
        assert.equal(new Set(seen).size, seen.length, `fills ${label}: a row was repeated`);
        const seenSet = new Set(seen);
        for (const id of before) assert.ok(seenSet.has(id), `fills ${label}: ${id} was skipped`);
      });
    }

    it('a carried count is not trusted when edited or replayed with another filter', { skip: !available }, async () => {
      const windowed: OrderFilter = { after: T0 + 500, limit: 20 };
      const first = await store.queries.listOrders(USER, windowed);
      assert.ok(first.next);
      const body = JSON.parse(Buffer.from(first.next!, 'base64url').toString('utf8')) as { c?: number; v?: string };
      assert.equal(body.c, first.count, 'the cursor carries the count');
      const forged = Buffer.from(JSON.stringify({ ...body, c: 123_456 }), 'utf8').toString('base64url');
      assert.equal((await store.queries.listOrders(USER, { ...windowed, next: forged })).count, first.count);
      const other: OrderFilter = { after: T0 + 500, status: 'FILLED', limit: 20 };
      assert.equal((await store.queries.listOrders(USER, { ...other, next: first.next })).count, refOrders(history.ref, USER, other).length);
    });
  });
}
