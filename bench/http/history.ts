/**
 * bench:http history — GET /api/order (first page, a deep page), GET /api/fill (windows, instrument and
 * role filters) and GET /api/user/funding-transfer over a large history, on SQLite and PostgreSQL. Run: `HTTP_BENCH=history npm run bench:http` (or `npm run bench:http -- history`).
 *
 * The history is written straight into the read store (bulk multi-row inserts, no engine): HISTORY_ORDERS
 * orders (default 1,000,000) of one user, every other one with a fill and its collateral movement (ranked
 * as the projector ranks them, row-ordinals.ts), plus a few other users' rows. The
 * real gateway (buildServer + the store adapter) answers on 127.0.0.1; a stub auth accepts one bearer token
 * so the numbers measure the history path, not sign-in. Load: closed loop, HISTORY_CONNECTIONS (default 8)
 * keep-alive connections, HISTORY_DURATION_MS (default 5000) per case after a 1 s warm-up.
 * Env: HISTORY_DIALECTS=sqlite,postgres  HISTORY_PG_URL=postgres://postgres@127.0.0.1:5432/postgres
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import pg from 'pg';
import type { ApiDeps } from '../../src/api/ports.js';
import { buildServer } from '../../src/api/server.js';
import { historyReader } from '../../src/app/history-reader.js';
import type { AuthService, UserRecord } from '../../src/auth/types.js';
import { createEngine } from '../../src/engine/engine.js';
import { insertRows } from '../../src/store/bulk-write.js';
import { recountOrders } from '../../src/store/count-triggers.js';
import { openReadStore, type ReadStore } from '../../src/store/index.js';
import { encodeCursor } from '../../src/store/paging.js';
import { getRequest, runLoad, type LoadResult } from './load.js';
import { RAISED_RATE_LIMITS } from '../raised-budgets.js';

const env = process.env;
const N = Number(env.HISTORY_ORDERS ?? 1_000_000);
const CONNECTIONS = Number(env.HISTORY_CONNECTIONS ?? 8);
const DURATION_MS = Number(env.HISTORY_DURATION_MS ?? 5000);
const DIALECTS = (env.HISTORY_DIALECTS ?? 'sqlite,postgres').split(',').map((s) => s.trim()).filter(Boolean);
const PG_URL = env.HISTORY_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const HOST = '127.0.0.1';
const TOKEN = 'bench-token';
const USER_ID = 1;
const T0 = Date.UTC(2025, 9, 1);
const INSTRUMENTS = ['BTCUSDT', 'ETHUSDT', 'SOLUSDT'];
const oid = (n: number) => `00070:${n.toString(16).padStart(26, '0')}`;

const user: UserRecord = {
  id: '00000000-0000-4000-8000-000000000001', authId: '00000000-0000-4000-8000-000000000002', exchangeId: USER_ID,
  wallet: '0x' + '11'.repeat(20), role: 'user', name: null, email: null, avatar: null, level: 1, locale: 'en', dateTimeFormat: 'YYYY-MM-DD',
  favoriteInstruments: [], social: [], smartAccountAddress: '0x' + '22'.repeat(20), createdAt: T0, updatedAt: T0,
};
const stubAuth = {
  authenticate: async (h: { authorization?: string }) => (h.authorization === `Bearer ${TOKEN}` ? { user, via: 'access-token' as const } : null),
} as unknown as AuthService;

function orderRow(n: number, userId: number) {
  const filled = n % 2 === 0;
  return {
    user_id: userId, id: oid(n), order_key: oid(n).toLowerCase(), instrument: INSTRUMENTS[n % 3]!, type: n % 7 === 0 ? 'STOP_LIMIT' : 'LIMIT',
    side: n % 2 ? 'BUY' : 'SELL', status: filled ? 'FILLED' : n % 5 === 0 ? 'NEW' : 'CANCELLED', rejected_reason: '', time_in_force: 'GTC',
    post_only: 0, leverage: 10, quantity: 100_000_000, limit_price: 10_000_000_000_000, stop_price: null, order_group: 'manually',
    unfilled_quantity: filled ? 0 : 100_000_000, cash_quantity: 0, filled_quantity: filled ? 100_000_000 : 0, filled_value: filled ? 10_000_000_000_000 : 0,
    realized_pnl: 0, fee: filled ? 5_000_000 : 0, triggered_at: null, created_at: T0 + n * 10, updated_at: T0 + n * 10 + 5, seq: n + 1,
  };
}

/** `ranks`: the user's fills so far per partition (the ordinals the projector assigns, row-ordinals.ts). */
function fillRow(n: number, userId: number, ranks: Map<string, number>) {
  const instrument = INSTRUMENTS[n % 3]!;
  const role = n % 4 === 0 ? 'MAKER' : 'TAKER';
  const rank = (partition: string) => {
    const r = (ranks.get(partition) ?? 0) + 1;
    ranks.set(partition, r);
    return r;
  };
  return {
    execution_id: `x${userId}-${n}`, order_id: oid(n), order_key: oid(n).toLowerCase(), user_id: userId, instrument: INSTRUMENTS[n % 3]!,
    side: n % 2 ? 'BUY' : 'SELL', role, quantity: 100_000_000, price: 10_000_000_000_000, fee: 5_000_000,
    realized_pnl: 0, created_at: T0 + n * 10 + 5, seq: n + 1, ev: 0,
    user_seq: rank(''), user_inst_seq: rank(instrument), user_role_seq: rank(`|${role}`), user_inst_role_seq: rank(`${instrument}|${role}`),
  };
}

/** The collateral movement of fill n (its fee), ranked among the user's movements. */
function fundingRow(n: number, userId: number, userSeq: number) {
  return {
    seq: n + 1, ev: 1, user_id: userId, coin: 'usdt', quantity: -5_000_000, balance: 1_000_000_000_000 - userSeq * 5_000_000, reason: 'fee',
    updated_at: T0 + n * 10 + 5, user_seq: userSeq,
  };
}

async function seed(store: ReadStore): Promise<void> {
  const t0 = performance.now();
  const CHUNK = 20_000;
  const ranks = new Map<string, number>();
  for (let i = 0; i < N; i += CHUNK) {
    const orders: Array<Record<string, unknown>> = [];
    const fills: Array<Record<string, unknown>> = [];
    const funding: Array<Record<string, unknown>> = [];
    for (let n = i; n < Math.min(N, i + CHUNK); n++) {
      orders.push(orderRow(n, USER_ID));
      if (n % 2 === 0) {
        fills.push(fillRow(n, USER_ID, ranks));
        funding.push(fundingRow(n, USER_ID, n / 2 + 1));
      }
      if (n % 100 === 0) orders.push(orderRow(n, USER_ID + 1 + (n % 7))); // other users' rows share the tables
    }
    await store.db.transaction().execute(async (trx) => {
      await insertRows(trx as never, store.kind, 'orders', orders, { keys: ['user_id', 'id'], update: 'none' });
      await insertRows(trx as never, store.kind, 'fills', fills, { keys: ['execution_id', 'order_id'], update: 'none' });
      await insertRows(trx as never, store.kind, 'funding_changes', funding, { keys: ['seq', 'ev'], update: 'none' });
    });
  }
  // SQLite's order counters are the projector's to keep (count-triggers.ts): count the bulk-written rows.
  if (store.kind === 'sqlite') await recountOrders(store.db, 'sqlite');
  // vacuum as autovacuum would on a long-lived table: sets the visibility map, so counts can scan the index only.
  if (store.kind === 'postgres') await sql`vacuum analyze`.execute(store.db);
  console.log(`  seeded ${N.toLocaleString('en-US')} orders + ${Math.ceil(N / 2).toLocaleString('en-US')} fills (each with a collateral movement) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

async function openStore(kind: string): Promise<{ store: ReadStore; dispose: () => Promise<void> }> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'bench-history-'));
    const store = await openReadStore({ kind: 'sqlite', file: join(dir, 'read.db') });
    return { store, dispose: async () => { await store.close(); rmSync(dir, { recursive: true, force: true }); } };
  }
  const name = `bench_history_${process.pid}_${Date.now().toString(36)}`;
  const admin = async (q: string) => {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    try { await c.query(q); } finally { await c.end(); }
  };
  await admin(`create database ${name}`);
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  const store = await openReadStore({ kind: 'postgres', connectionString: url.toString(), poolSize: CONNECTIONS });
  return { store, dispose: async () => { await store.close(); await admin(`drop database if exists ${name} with (force)`); } };
}

const row = (name: string, r: LoadResult) =>
  `  ${name.padEnd(46)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${r.p50.toFixed(2).padStart(6)} ms   p99 ${r.p99.toFixed(2).padStart(6)} ms   max ${r.max.toFixed(1).padStart(6)} ms   ${JSON.stringify(r.status)}`;

export async function runHistoryBench(): Promise<void> {
  console.log(`bench:http history — ${N.toLocaleString('en-US')} orders, ${CONNECTIONS} connections, ${DURATION_MS} ms per case (noisy on a shared 2-core machine)`);
  for (const kind of DIALECTS) {
    console.log(`\n[${kind}]`);
    const { store, dispose } = await openStore(kind);
    try {
      await seed(store);
      const deps: ApiDeps = {
        engine: createEngine(), submit: async () => { throw new Error('read-only bench'); }, auth: stubAuth,
        verifier: {} as ApiDeps['verifier'], chainId: '16182', readStore: historyReader(store.queries, { stats: store.statistics }), clock: Date.now,
        config: { rateLimits: RAISED_RATE_LIMITS },
      };
      const app = await buildServer(deps, { logger: false });
      await app.listen({ port: 0, host: HOST });
      const port = (app.server.address() as AddressInfo).port;
      const deep = Math.floor(N * 0.1); // created-at-desc: 90% of the history lies before this row
      const cases: Array<[string, string]> = [
        ['GET /api/order first page', '/api/order?limit=50'],
        ['GET /api/order deep page (next)', `/api/order?limit=50&next=${encodeURIComponent(encodeCursor('created-at-desc', [T0 + deep * 10, oid(deep)]))}`],
        ['GET /api/order filtered first page', '/api/order?limit=50&instrument=BTCUSDT&status=FILLED'],
        ['GET /api/fill first page', `/api/fill?after=0&before=${T0 + N * 10 + 10}&limit=50`],
        ['GET /api/fill (instrument, window)', `/api/fill?after=${T0 + N * 5}&before=${T0 + N * 10 + 10}&instrument=ETHUSDT&limit=50`],
      ];
      // A window that moves on every request: no cache can answer its count (fills count from their
      // ordinals, fill-ordinals.ts; this case measured O(fills in the window) before them).
      let shift = 0;
      const uncached = () => `/api/fill?after=${T0 + N * 5 + ++shift}&before=${T0 + N * 10 + 10}&instrument=ETHUSDT&limit=50`;
      const byRole = () => `/api/fill?after=${T0 + N * 5 + ++shift}&before=${T0 + N * 10 + 10}&fillRole=MAKER&limit=50`;
      const allCases: Array<[string, () => string]> = [
        ...cases.map(([name, path]): [string, () => string] => [name, () => path]),
        ['GET /api/fill (window, uncached count)', uncached],
        ['GET /api/fill (role, moving window)', byRole],
        ['GET /api/user/funding-transfer first page', () => '/api/user/funding-transfer?limit=50'],
        ['GET /api/user/funding-transfer (moving window)', () => `/api/user/funding-transfer?after=${T0 + N * 2 + ++shift}&limit=50`],
      ];
      for (const [name, path] of allCases) {
        const fixed = getRequest(HOST, port, path(), { authorization: `Bearer ${TOKEN}` });
        const varies = path() !== path();
        const next = varies ? () => getRequest(HOST, port, path(), { authorization: `Bearer ${TOKEN}` }) : () => fixed;
        const r = await runLoad({ host: HOST, port, connections: CONNECTIONS, mode: 'closed', warmupMs: 1000, durationMs: DURATION_MS, next });
        console.log(row(name, r));
        if (r.errorBodies.length) console.log(`    errors: ${r.errorBodies.slice(0, 2).join(' | ')}`);
      }
      await app.close();
    } finally {
      await dispose();
    }
  }
}
