/**
 * Read-store measurements (not part of the test run):
 *   node --import tsx test/store/bench.ts [sqlite|postgres] [orders-for-one-user=200000]
 * 1. projection throughput: 100,000 order events + 50,000 fills (each fill with its trade, fee, funding
 *    and position events, as the engine emits them), 1,000 command batches per project() call;
 * 2. listOrders latency for one user holding N orders: first page, a deep `next` page, filtered pages.
 */
import { performance } from 'node:perf_hooks';
import type { EngineEvent, OrderView } from '../../src/engine/records.js';
import { encodeCursor } from '../../src/store/paging.js';
import type { ProjectionBatch, ReadStore } from '../../src/store/index.js';
import { openPostgresTestStore, openSqliteTestStore, type TestStore } from './dialects.js';

const kind = process.argv[2] ?? 'sqlite';
const N = Number(process.argv[3] ?? 200_000);
const T = Date.UTC(2025, 9, 1);
const open = (): Promise<TestStore> => (kind === 'postgres' ? openPostgresTestStore() : openSqliteTestStore());
const oid = (n: number) => `00070:${n.toString(16).padStart(26, '0')}`;

function order(n: number, userId: number, t: number, status: OrderView['status'], filled: number): OrderView {
  return {
    id: oid(n), userId, instrument: ['BTCUSDT', 'ETHUSDT', 'SOLUSDT'][n % 3]!, type: n % 7 === 0 ? 'STOP_LIMIT' : 'LIMIT',
    side: n % 2 ? 'BUY' : 'SELL', status, rejectedReason: '', timeInForce: 'GTC', postOnly: false, leverage: 10,
    quantity: 100_000_000, limitPrice: 10_000_000_000_000, stopPrice: null, group: 'manually',
    unFilledQuantity: 100_000_000 - filled, cashQuantity: 0, filledQuantity: filled, filledValue: BigInt(filled) * 100_000n,
    realizedPnL: 0n, fee: 1000n, triggeredAt: null, createdAt: T + n, updatedAt: t,
  };
}

async function chunks(store: ReadStore, batches: ProjectionBatch[], per = 1000): Promise<{ ms: number; rows: number }> {
  let rows = 0;
  const t0 = performance.now();
  for (let i = 0; i < batches.length; i += per) rows += (await store.projector.project(batches.slice(i, i + per))).rows;
  return { ms: performance.now() - t0, rows };
}

async function projection(): Promise<void> {
  const ts = await open();
  const batches: ProjectionBatch[] = [];
  let seq = 1;
  let orderEvents = 0;
  let fills = 0;
  // 50,000 orders: placed (1 event), then filled by a fill batch (order + fill + trade + fee + funding + position).
  for (let n = 0; n < 50_000; n++) {
    const userId = 1 + (n % 3);
    const t = T + n;
    batches.push({ seq: seq++, ts: t, events: [{ type: 'order', order: order(n, userId, t, 'NEW', 0) }] });
    orderEvents++;
    const events: EngineEvent[] = [
      { type: 'order', order: order(n, userId, t + 1, 'FILLED', 100_000_000) },
      { type: 'fill', fill: { executionId: `e${n}`, userId, orderId: oid(n), instrument: 'BTCUSDT', side: 'BUY', role: 'TAKER', quantity: 100_000_000, price: 10_000_000_000_000, fee: 1000n, realizedPnL: 0n, createdAt: t + 1 } },
      { type: 'trade', trade: { executionId: `e${n}`, instrument: 'BTCUSDT', side: 'BUY', quantity: 100_000_000, price: 10_000_000_000_000, createdAt: t + 1 } },
      { type: 'orderFee', fee: { id: `f${n}`, userId, orderId: oid(n), executionId: `e${n}`, coin: 'usdt', quantity: 1000n, type: 'order', createdAt: t + 1 } },
      { type: 'funding', funding: { userId, coin: 'usdt', quantity: -1000n, balance: 1_000_000_000n - BigInt(n), reason: 'fee', updatedAt: t + 1 } },
      { type: 'position', position: {
        id: `p${userId}`, userId, instrument: 'BTCUSDT', side: 'BUY', quantity: (n % 10) * 100_000_000, costBasis: BigInt(n % 10) * 10_000_000_000_000n,
        avgPrice: 10_000_000_000_000, leverage: 10, maintenanceMargin: 0n, fundingPaid: 0n, fee: BigInt(n) * 1000n, realizedPnL: 0n,
        unRealizedPnL: 0n, markPrice: 0, bankruptcyPrice: null, adlLevel: 0, createdAt: T, updatedAt: t + 1 } },
    ];
    batches.push({ seq: seq++, ts: t + 1, events });
    orderEvents++;
    fills++;
  }
  const events = batches.reduce((s, b) => s + b.events.length, 0);
  const { ms, rows } = await chunks(ts.store, batches);
  console.log(`[${kind}] projected ${orderEvents} order events + ${fills} fills (${events} events, ${batches.length} batches) in ${ms.toFixed(0)} ms:`
    + ` ${Math.round((events / ms) * 1000)} events/s, ${Math.round((rows / ms) * 1000)} rows written/s (${rows} rows after folding)`);
  await ts.dispose();
}

function stats(samples: number[]): string {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!.toFixed(2);
  return `p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${s[s.length - 1]!.toFixed(2)} ms`;
}

async function time(label: string, runs: number, fn: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 5; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  console.log(`[${kind}] ${label}: ${stats(samples)} (${runs} runs)`);
}

async function deepPaging(): Promise<void> {
  const ts = await open();
  const store = ts.store;
  const batches: ProjectionBatch[] = [];
  for (let n = 0; n < N; n++) {
    const status: OrderView['status'] = n % 5 === 0 ? 'NEW' : n % 5 === 1 ? 'CANCELLED' : 'FILLED';
    batches.push({ seq: n + 1, ts: T + n, events: [{ type: 'order', order: order(n, 7, T + n + (n % 13), status, 0) }] });
  }
  // A second user's orders interleaved in the index, as in real life.
  for (let n = 0; n < N / 4; n++) batches.push({ seq: N + n + 1, ts: T + n, events: [{ type: 'order', order: order(N + n, 8, T + n, 'NEW', 0) }] });
  const { ms, rows } = await chunks(store, batches, 5000);
  console.log(`[${kind}] loaded ${rows} orders in ${ms.toFixed(0)} ms (${Math.round((rows / ms) * 1000)} rows/s)`);
  const q = store.queries;
  const deepRow = (await store.db.selectFrom('orders').select(['created_at', 'updated_at', 'id']).where('user_id', '=', 7)
    .orderBy('created_at', 'desc').orderBy('id', 'desc').offset(Math.floor(N * 0.9)).limit(1).executeTakeFirstOrThrow());
  const deep = encodeCursor('created-at-desc', [Number(deepRow.created_at), deepRow.id]);
  const deepUpdated = encodeCursor('updated-at-asc', [Number(deepRow.updated_at), deepRow.id]);
  await time('listOrders first page (limit 50, with count)', 300, () => q.listOrders(7, { limit: 50 }));
  await time('listOrders deep next page at 90% (limit 50, with count)', 300, () => q.listOrders(7, { limit: 50, next: deep }));
  await time('listOrders deep next page, updated-at-asc', 300, () => q.listOrders(7, { limit: 50, sort: 'updated-at-asc', next: deepUpdated }));
  await time('listOrders groupStatus=OPENED instrument=ETHUSDT first page', 300, () => q.listOrders(7, { limit: 50, groupStatus: 'OPENED', instrument: 'ETHUSDT' }));
  await time('listOrders limit 500 first page', 100, () => q.listOrders(7, { limit: 500 }));
  await time('listOrders deep page with OFFSET 180000 (deprecated path, for contrast)', 30, () => q.listOrders(7, { limit: 50, offset: Math.floor(N * 0.9) }));
  await ts.dispose();
}

await projection();
await deepPaging();
