/**
 * The read store against an in-memory oracle, on SQLite and PostgreSQL (same body): every order filter,
 * sort and paging mode; keyset paging visits each row once; users never see each other's rows; the other
 * lists; re-projecting changes nothing.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { OrderView } from '../../src/engine/records.js';
import { ORDER_GROUPS, ORDER_STATUSES, ORDER_TYPES } from '../../src/domain/enums.js';
import type { OrderFilter, OrderGroupStatus, OrderSort, Page, ReadStore } from '../../src/store/index.js';
import { StoreQueryError } from '../../src/store/index.js';
import { DIALECTS, type TestStore } from './dialects.js';
import { generateHistory, INSTRUMENTS, T0, USERS, type History } from './history-fixture.js';
import { mulberry32 } from '../../src/simulation/seeded-random.js';
import { refFills, refFunding, refOrders, refTpsl, refTransfers } from './reference-queries.js';

// Each dialect's suite gets its own copy (tests add rows to the store and to its oracle).
const newHistory = (): History => generateHistory({ seed: 42, orders: 3000 });
const tMax = newHistory().batches.at(-1)!.ts;

function randomOrderFilter(r: () => number, ids: string[]): OrderFilter {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const some = <T>(xs: readonly T[]): T | T[] => (r() < 0.5 ? pick(xs) : xs.filter(() => r() < 0.4));
  const f: OrderFilter = {};
  if (r() < 0.1) f.id = r() < 0.5 ? pick(ids) : ids.filter(() => r() < 0.01);
  if (r() < 0.3) f.instrument = some(INSTRUMENTS);
  if (r() < 0.2) f.status = some(ORDER_STATUSES);
  if (r() < 0.2) f.side = pick(['BUY', 'SELL'] as const);
  if (r() < 0.25) f.groupStatus = pick<OrderGroupStatus>(['OPENED', 'CLOSED', 'CANCELLED', 'INACTIVE']);
  if (r() < 0.2) f.group = some(ORDER_GROUPS);
  if (r() < 0.2) f.type = some(ORDER_TYPES);
  if (r() < 0.15) f.triggered = pick(['yes', 'no'] as const);
  const span = tMax - T0;
  const a = T0 + Math.floor(r() * span);
  if (r() < 0.25) f.after = r() < 0.5 ? new Date(a).toISOString() : a;
  if (r() < 0.25) f.before = r() < 0.5 ? new Date(a + Math.floor(r() * span)).toISOString() : String(a + Math.floor(r() * span));
  f.sort = pick<OrderSort>(['created-at-asc', 'created-at-desc', 'updated-at-asc', 'updated-at-desc']);
  if (r() < 0.2) delete f.sort;
  return f;
}

async function walk<T>(first: (next?: string) => Promise<Page<T>>): Promise<T[]> {
  const out: T[] = [];
  let next: string | undefined;
  let pages = 0;
  do {
    const page = await first(next);
    out.push(...page.list);
    next = page.next;
    assert.ok(++pages < 10_000, 'paging does not end');
  } while (next);
  return out;
}

for (const dialect of DIALECTS) {
  describe(`read store queries (${dialect.name})`, async () => {
    const available = await dialect.available();
    const history = newHistory();
    let ts: TestStore;
    let store: ReadStore;

    before(async () => {
      if (!available) return;
      ts = await dialect.open();
      store = ts.store;
      for (let i = 0; i < history.batches.length; i += 500) {
        await store.projector.project(history.batches.slice(i, i + 500));
      }
    });
    after(async () => {
      if (ts) await ts.dispose();
    });

    it('projects every batch', { skip: !available }, async () => {
      assert.equal(await store.projector.lastSeq(), history.batches[history.batches.length - 1]!.seq);
    });

    it('listOrders matches the oracle for random filters, sorts, limits and offsets', { skip: !available }, async () => {
      const r = mulberry32(7);
      for (const userId of USERS) {
        const ids = [...history.ref.orders.values()].filter((o) => o.userId === userId).map((o) => o.id);
        for (let i = 0; i < 80; i++) {
          const f = randomOrderFilter(r, ids);
          const expected = refOrders(history.ref, userId, f);
          const limit = [undefined, 1, 7, 50, 500, 10_000][Math.floor(r() * 6)];
          const offset = r() < 0.3 ? Math.floor(r() * 60) : undefined;
          const page = await store.queries.listOrders(userId, { ...f, limit, offset });
          const effLimit = limit === undefined ? 50 : Math.min(limit, 500);
          const from = offset ?? 0;
          const label = JSON.stringify({ userId, f, limit, offset });
          assert.equal(page.count, expected.length, label);
          assert.deepEqual(page.list, expected.slice(from, from + effLimit), label);
          assert.equal(page.next !== undefined, expected.length > from + effLimit, label);
        }
      }
    });

    it('next-cursor paging visits every row exactly once, in order', { skip: !available }, async () => {
      const r = mulberry32(11);
      for (const userId of USERS) {
        const ids = [...history.ref.orders.values()].filter((o) => o.userId === userId).map((o) => o.id);
        for (let i = 0; i < 6; i++) {
          const f = i === 0 ? {} : randomOrderFilter(r, ids);
          const limit = [13, 50, 200][i % 3];
          const got = await walk((next) => store.queries.listOrders(userId, { ...f, limit, next }));
          assert.deepEqual(got.map((o) => o.id), refOrders(history.ref, userId, f).map((o) => o.id), JSON.stringify(f));
          assert.equal(new Set(got.map((o) => o.id)).size, got.length);
        }
        // Every sort, unfiltered.
        for (const sort of ['created-at-asc', 'created-at-desc', 'updated-at-asc', 'updated-at-desc'] as const) {
          const got = await walk((next) => store.queries.listOrders(userId, { sort, limit: 97, next }));
          assert.deepEqual(got, refOrders(history.ref, userId, { sort }));
        }
      }
    });

    it('a cursor from one sort is refused by another; garbage cursors are refused', { skip: !available }, async () => {
      const page = await store.queries.listOrders(1, { sort: 'created-at-asc', limit: 5 });
      assert.ok(page.next);
      await assert.rejects(store.queries.listOrders(1, { sort: 'updated-at-asc', next: page.next }), StoreQueryError);
      await assert.rejects(store.queries.listOrders(1, { next: 'not-a-cursor' }), StoreQueryError);
      await assert.rejects(store.queries.listOrders(1, { after: 'yesterday-ish' }), StoreQueryError);
    });

    it('keyset pages are stable when new orders arrive between pages', { skip: !available }, async () => {
      const snapshot = refOrders(history.ref, 2, {});
      const first = await store.queries.listOrders(2, { limit: 100 });
      const late: OrderView = { ...snapshot[0]!, id: '00072:' + 'a'.repeat(26), createdAt: tMax + 10, updatedAt: tMax + 10 };
      const lastSeq = await store.projector.lastSeq();
      await store.projector.project([{ seq: lastSeq + 1, ts: tMax + 10, events: [{ type: 'order', order: late }] }]);
      const rest = await walk((next) => store.queries.listOrders(2, { limit: 100, next: next ?? first.next }));
      assert.deepEqual([...first.list, ...rest].map((o) => o.id), snapshot.map((o) => o.id));
      history.ref.orders.set(`2|${late.id}`, late);
    });

    it('a user never sees another user\'s rows', { skip: !available }, async () => {
      for (const userId of USERS) {
        const all = await walk((next) => store.queries.listOrders(userId, { limit: 500, next }));
        assert.ok(all.every((o) => o.userId === userId));
        const others = [...history.ref.orders.values()].filter((o) => o.userId !== userId).slice(0, 40).map((o) => o.id);
        assert.equal((await store.queries.listOrders(userId, { id: others })).count, 0);
        for (const id of others.slice(0, 5)) assert.deepEqual(await store.queries.orderFills(userId, id), []);
        const fills = await walk((next) => store.queries.listFills(userId, { limit: 500, next }));
        assert.ok(fills.every((x) => x.userId === userId));
        assert.ok((await store.queries.listTransfers(userId, { limit: 500 })).list.every((x) => x.userId === userId));
        assert.ok((await store.queries.listTpsl(userId, { limit: 500 })).list.every((x) => x.userId === userId));
      }
      assert.equal((await store.queries.listOrders(999)).count, 0);
    });

    it('v1 (UUID) spelling of an id finds the same order', { skip: !available }, async () => {
      const o = [...history.ref.orders.values()].find((x) => x.userId === 3)!;
      const hex = o.id.slice(6) + '000000';
      const v1 = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
      const page = await store.queries.listOrders(3, { id: v1 });
      assert.deepEqual(page.list.map((x) => x.id), [o.id]);
    });

    it('fills, order fills, recent trades match the oracle', { skip: !available }, async () => {
      const r = mulberry32(3);
      for (const userId of USERS) {
        for (let i = 0; i < 15; i++) {
          const f = {
            instrument: r() < 0.5 ? INSTRUMENTS[i % 3] : undefined,
            after: r() < 0.5 ? T0 + Math.floor(r() * (tMax - T0)) : undefined,
            before: r() < 0.5 ? new Date(T0 + Math.floor(r() * (tMax - T0))).toISOString() : undefined,
          };
          const expected = refFills(history.ref, userId, f);
          const page = await store.queries.listFills(userId, { ...f, limit: 20, offset: i });
          assert.equal(page.count, expected.length);
          assert.deepEqual(page.list, expected.slice(i, i + 20));
          assert.deepEqual(await walk((next) => store.queries.listFills(userId, { ...f, limit: 111, next })), expected);
        }
      }
      const someFill = history.ref.fills[17]!;
      const expectedOrderFills = history.ref.fills
        .filter((x) => x.userId === someFill.userId && x.orderId === someFill.orderId)
        .map(({ seq: _s, ev: _e, ...v }) => v);
      assert.deepEqual(await store.queries.orderFills(someFill.userId, someFill.orderId), expectedOrderFills);
      const trades = history.ref.trades
        .filter((x) => x.instrument === 'ETHUSDT')
        .sort((a, b) => b.createdAt - a.createdAt || b.seq - a.seq || b.ev - a.ev)
        .slice(0, 30)
        .map(({ seq: _s, ev: _e, ...v }) => v);
      assert.deepEqual(await store.queries.recentTrades('ETHUSDT', 30), trades);
    });

    it('funding changes, balances, transfers, tpsl match the oracle', { skip: !available }, async () => {
      for (const userId of USERS) {
        const mid = T0 + Math.floor((tMax - T0) / 2);
        for (const f of [{}, { after: mid }, { before: new Date(mid).toISOString() }]) {
          const expected = refFunding(history.ref, userId, f);
          const page = await store.queries.fundingTransfer(userId, { ...f, limit: 25, offset: 3 });
          assert.equal(page.count, expected.length);
          assert.deepEqual(page.list, expected.slice(3, 28));
          assert.deepEqual(await walk((next) => store.queries.listFundingChanges(userId, { ...f, limit: 77, next })), expected);
        }
        const latest = refFunding(history.ref, userId, {})[0];
        assert.deepEqual(await store.queries.fundingBalances(userId), latest ? [{ coin: 'usdt', balance: latest.balance, updatedAt: latest.updatedAt }] : []);

        for (const f of [{}, { status: 'pending' as const }, { type: ['deposit' as const] }, { status: ['done' as const, 'error' as const], after: T0 + 1000 }]) {
          const expected = refTransfers(history.ref, userId, f);
          assert.deepEqual(await walk((next) => store.queries.listTransfers(userId, { ...f, limit: 9, next })), expected);
          assert.equal((await store.queries.listTransfers(userId, f)).count, expected.length);
        }
        const triggered = [...history.ref.tpsl.values()].find((x) => x.userId === userId && x.triggerOrder)?.triggerOrder ?? 'none';
        for (const f of [{}, { status: 'cancelled' as const }, { instrument: ['BTCUSDT'], type: 'take-profit' as const }, { triggeredOrder: triggered }]) {
          const expected = refTpsl(history.ref, userId, f);
          assert.deepEqual(await walk((next) => store.queries.listTpsl(userId, { ...f, limit: 8, next })), expected);
          assert.equal((await store.queries.listTpsl(userId, { ...f, offset: 2, limit: 3 })).list.length, Math.max(0, Math.min(3, expected.length - 2)));
        }
        const ordersWithTpsl = [...history.ref.tpsl.values()].filter((x) => x.userId === userId).map((x) => x.orderId!);
        const someIds = [...ordersWithTpsl.slice(0, 10), 'nope'];
        const map = await store.queries.tpslForOrders(userId, someIds);
        for (const id of someIds) {
          const expected = [...history.ref.tpsl.values()]
            .filter((x) => x.userId === userId && x.orderId === id)
            .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
          assert.deepEqual(map.get(id), expected);
        }
      }
    });

    it('re-projecting the same batches changes nothing', { skip: !available }, async () => {
      const dump = async () => {
        const out: Record<string, unknown[]> = {};
        for (const table of ['orders', 'fills', 'trades', 'funding_changes', 'order_fees', 'transfers', 'tpsl', 'position_history', 'projector_meta'] as const) {
          const rows = await store.db.selectFrom(table).selectAll().execute();
          out[table] = rows.map((x) => JSON.stringify(x, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))).sort();
        }
        return out;
      };
      const beforeDump = await dump();
      const res = await store.projector.project(history.batches);
      assert.equal(res.applied, 0);
      assert.equal(res.skipped, history.batches.length);
      assert.deepEqual(await dump(), beforeDump);
      // Reopening runs the migrations again: a no-op.
      const again = await ts.reopen();
      assert.equal(await again.projector.lastSeq(), await store.projector.lastSeq());
      await again.close();
    });
  });
}
