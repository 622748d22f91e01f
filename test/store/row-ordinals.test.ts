/**
 * Per-row ordinals (row-ordinals.ts) of fills and collateral movements, and the exact window counts of
 * GET /api/fill and GET /api/user/funding-transfer they give, on SQLite and PostgreSQL: ranks equal
 * row_number() after every projected chunk (the journal replay of a rebuild), for rows projected out of
 * time order or twice, and for rows already there when the migration runs; counts equal a count(*) of the
 * rows for windows whose bounds fall on row times, between and on ties, with and without instrument filters.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { EngineEvent, FillView } from '../../src/engine/records.js';
import { insertRows } from '../../src/store/bulk-write.js';
import { fillRow, fundingRow } from '../../src/store/codec.js';
import { FILL_ORDINALS, fillPartitions, FUNDING_ORDINALS, FUNDING_PARTITIONS, windowedCount } from '../../src/store/row-ordinals.js';
import { openReadStore, type ReadStore, type StoreConfig } from '../../src/store/index.js';
import { storeMigrations } from '../../src/store/migrations.js';
import type { ProjectionBatch } from '../../src/store/projector.js';
import { mulberry32 } from '../../src/simulation/seeded-random.js';
import { createPostgresTestDatabase, DIALECTS, type TestStore } from './dialects.js';
import { assertOrdinalsMatchRows } from './ordinal-ranks.js';
import { generateHistory, INSTRUMENTS, type History } from './history-fixture.js';

const USER = 2;

/** count(*) of the user's fills in [a, b) on the instruments in the roles: the oracle. */
async function countRows(
  store: ReadStore, instruments: string[] | undefined, a: number | undefined, b: number | undefined, roles?: string[],
): Promise<number> {
  let q = store.db.selectFrom('fills').select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', USER);
  if (instruments) q = q.where('instrument', 'in', instruments);
  if (roles) q = q.where('role', 'in', roles);
  if (a !== undefined) q = q.where('created_at', '>=', a);
  if (b !== undefined) q = q.where('created_at', '<', b);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

/** count(*) of the user's collateral movements in [a, b): the oracle. */
async function countFunding(store: ReadStore, a: number | undefined, b: number | undefined): Promise<number> {
  let q = store.db.selectFrom('funding_changes').select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', USER);
  if (a !== undefined) q = q.where('updated_at', '>=', a);
  if (b !== undefined) q = q.where('updated_at', '<', b);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

/** A batch of several fills of USER at one time (ties on created_at and seq; ev orders them). */
function tiedFills(seq: number, ts: number, tag: string, instruments: string[]): ProjectionBatch {
  const fill = (i: number, instrument: string): FillView => ({
    executionId: `${tag}-${i}`, userId: USER, orderId: `00073:${tag.padStart(26, '0')}`, instrument, side: 'BUY', role: i % 3 === 2 ? 'NONE' : 'TAKER',
    quantity: 1_000_000, price: 10_000_000_000, fee: 100n, realizedPnL: 0n, createdAt: ts,
  });
  const events: EngineEvent[] = instruments.map((instrument, i) => ({ type: 'fill' as const, fill: fill(i, instrument) }));
  // Each fill moves collateral (its fee), as in the engine.
  events.push(...instruments.map((): EngineEvent => ({ type: 'funding', funding: { userId: USER, coin: 'usdt', quantity: -100n, balance: 0n, reason: 'fee', updatedAt: ts } })));
  return { seq, ts, events };
}

async function projectInChunks(store: ReadStore, batches: readonly ProjectionBatch[], sizes: readonly number[], check?: (label: string) => Promise<void>) {
  let k = 0;
  for (let i = 0; i < batches.length; ) {
    const n = sizes[k++ % sizes.length]!;
    await store.projector.project(batches.slice(i, i + n));
    i += n;
    if (check) await check(`after batch ${i}`);
  }
}

/** Opens a store of `kind` migrated only up to 0005 (before the ordinals), returns a config to reopen it at the latest. */
async function openBeforeOrdinals(kind: 'sqlite' | 'postgres'): Promise<{ db: Kysely<any>; config: StoreConfig; dispose: () => Promise<void> }> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'store-test-'));
    const file = join(dir, 'read.db');
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new Database(file) }) });
    return { db, config: { kind, file }, dispose: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const database = await createPostgresTestDatabase();
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.connectionString, max: 2 }) }) });
  return { db, config: { kind, connectionString: database.connectionString }, dispose: () => database.drop() };
}

for (const dialect of DIALECTS) {
  describe(`fill ordinals (${dialect.name})`, async () => {
    const available = await dialect.available();
    let ts: TestStore;
    let store: ReadStore;
    let history: History;
    let fillTimes: number[];

    before(async () => {
      if (!available) return;
      ts = await dialect.open();
      store = ts.store;
      history = generateHistory({ seed: 21, orders: 900 });
      // Several fills of one batch share created_at and seq (ties broken by ev), across instruments.
      const last = history.batches.at(-1)!;
      history.batches.push(tiedFills(last.seq + 1, last.ts + 3, 'tie1', ['BTCUSDT', 'ETHUSDT', 'BTCUSDT', 'BTCUSDT']));
      history.batches.push(tiedFills(last.seq + 2, last.ts + 3, 'tie2', ['ETHUSDT', 'BTCUSDT']));
      history.batches.push(tiedFills(last.seq + 3, last.ts + 9, 'tie3', ['SOLUSDT']));
      for (const b of history.batches.slice(-3)) b.events.forEach((e, ev) => { if (e.type === 'fill') history.ref.fills.push({ ...e.fill, seq: b.seq, ev }); });
      await projectInChunks(store, history.batches, [1, 7, 150, 3, 400]);
      const rows = await sql<{ t: unknown }>`select created_at as t from fills where user_id = ${USER} order by created_at`.execute(store.db);
      fillTimes = rows.rows.map((r) => Number(r.t));
    });
    after(async () => {
      if (ts) await ts.dispose();
    });

    it('ranks equal row_number() of the rows after every projected chunk, and replaying changes nothing', { skip: !available }, async () => {
      const own = await dialect.open();
      try {
        const h = generateHistory({ seed: 22, orders: 600 });
        await projectInChunks(own.store, h.batches, [1, 40, 2, 250], (label) => assertOrdinalsMatchRows(own.store, label));
        await own.store.projector.project(h.batches.slice(0, 200)); // already applied: skipped
        await assertOrdinalsMatchRows(own.store, 'after replaying');
        // A rebuild (the same journal projected in other chunks) gives every fill the same ranks.
        const rebuilt = await dialect.open();
        try {
          await rebuilt.store.projector.project(h.batches);
          const ranks = async (s: ReadStore) => (await sql<Record<string, unknown>>`
            select execution_id, order_id, user_seq, user_inst_seq from fills order by execution_id, order_id`.execute(s.db)).rows.map((r) => Object.values(r).map(String).join('|'));
          assert.deepEqual(await ranks(rebuilt.store), await ranks(own.store));
        } finally {
          await rebuilt.dispose();
        }
      } finally {
        await own.dispose();
      }
    });

    it('the history has ties on created_at across batches and within one', { skip: !available }, async () => {
      await assertOrdinalsMatchRows(store, 'projected history');
      const ties = fillTimes.filter((t, i) => i > 0 && fillTimes[i - 1] === t).length;
      assert.ok(ties > 10, `ties: ${ties}`);
    });

    it('window counts equal count(*) for bounds on, between and around fill times, by instrument and role', { skip: !available }, async () => {
      const r = mulberry32(5);
      const lo = fillTimes[0]!;
      const hi = fillTimes.at(-1)!;
      const onFill = () => fillTimes[Math.floor(r() * fillTimes.length)]!;
      const bound = (): number | undefined => {
        const x = r();
        if (x < 0.08) return undefined;
        if (x < 0.6) return onFill(); // exactly on a fill (often a tied one)
        if (x < 0.8) return onFill() + (r() < 0.5 ? 1 : -1);
        return Math.floor(lo - 50 + r() * (hi - lo + 100));
      };
      const instrumentSets: Array<string[] | undefined> = [
        undefined, ['BTCUSDT'], ['ETHUSDT'], ['SOLUSDT'], ['BTCUSDT', 'SOLUSDT'], [...INSTRUMENTS], ['ETHUSDT', 'ETHUSDT'], ['DOGEUSDT'],
      ];
      const cases: Array<[string[] | undefined, number | undefined, number | undefined]> = [
        [undefined, undefined, undefined], [undefined, lo, hi + 1], [undefined, lo, hi], [undefined, lo + 1, undefined],
        [['BTCUSDT'], hi, hi + 1], // only the last tied batch's fills on BTCUSDT
        [undefined, hi - 6, hi - 5], [undefined, hi, hi], [undefined, hi + 1, hi], [undefined, hi + 1, undefined], [undefined, undefined, lo],
      ];
      const roleSets: Array<string[] | undefined> = [undefined, undefined, ['MAKER'], ['TAKER'], ['NONE'], ['MAKER', 'NONE'], ['TAKER', 'TAKER', 'MAKER']];
      const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
      const withRoles = cases.map(([i, a, b]) => [i, a, b, undefined] as [string[] | undefined, number | undefined, number | undefined, string[] | undefined]);
      withRoles.push([undefined, hi - 6, hi - 5, ['NONE']], [['BTCUSDT'], hi - 6, hi - 5, ['NONE']], [['BTCUSDT'], hi - 6, hi - 5, ['TAKER']]);
      for (let i = 0; i < 400; i++) withRoles.push([pick(instrumentSets), bound(), bound(), pick(roleSets)]);
      let nonEmpty = 0;
      for (const [instruments, a, b, roles] of withRoles) {
        const want = await countRows(store, instruments, a, b, roles);
        if (want > 0) nonEmpty++;
        const label = `instruments ${instruments?.join(',') ?? 'all'}, roles ${roles?.join(',') ?? 'all'}, [${a}, ${b})`;
        assert.equal(await windowedCount(store.db, FILL_ORDINALS, USER, fillPartitions(instruments, roles), a, b), want, label);
        const page = await store.queries.listFills(USER, { instrument: instruments, role: roles, after: a, before: b, limit: 5 });
        assert.equal(page.count, want, `page count, ${label}`);
      }
      assert.ok(nonEmpty > 150, `windows that select fills: ${nonEmpty}`);
      assert.equal(await countRows(store, ['BTCUSDT'], hi, hi + 1), 0, 'the last batch has no BTCUSDT fill');
      assert.equal(await countRows(store, ['BTCUSDT'], hi - 6, hi - 5), 4, 'the tied batches: 4 BTCUSDT fills at one time');
      assert.equal(await countRows(store, ['BTCUSDT'], hi - 6, hi - 5, ['NONE']), 1, 'one of them in role NONE');
    });

    it('a role-filtered walk over next cursors visits every matching fill once, newest first', { skip: !available }, async () => {
      for (const [instruments, roles] of [[undefined, ['MAKER']], [['ETHUSDT'], ['TAKER', 'NONE']], [undefined, ['NONE']]] as const) {
        const want = history.ref.fills
          .filter((x) => x.userId === USER && (!instruments || (instruments as readonly string[]).includes(x.instrument)) && (roles as readonly string[]).includes(x.role))
          .sort((x, y) => y.createdAt - x.createdAt || y.seq - x.seq || y.ev - x.ev)
          .map((x) => x.executionId);
        const seen: string[] = [];
        let next: string | undefined;
        do {
          const page = await store.queries.listFills(USER, { instrument: instruments as string[] | undefined, role: roles as readonly string[] as string[], limit: 37, next });
          assert.equal(page.count, want.length);
          seen.push(...page.list.map((x) => x.executionId));
          next = page.next;
        } while (next);
        assert.deepEqual(seen, want, `${instruments ?? 'all'} ${roles.join(',')}`);
      }
    });

    it('collateral movement counts equal count(*) for windows on, between and around their times', { skip: !available }, async () => {
      const times = (await sql<{ t: unknown }>`select updated_at as t from funding_changes where user_id = ${USER} order by updated_at`.execute(store.db)).rows.map((x) => Number(x.t));
      assert.ok(times.filter((t, i) => i > 0 && times[i - 1] === t).length > 10, 'ties on updated_at');
      const r = mulberry32(6);
      const bound = (): number | undefined => {
        const x = r();
        if (x < 0.08) return undefined;
        const t = times[Math.floor(r() * times.length)]!;
        return x < 0.7 ? t : t + (r() < 0.5 ? 1 : -1);
      };
      let nonEmpty = 0;
      for (let i = 0; i < 200; i++) {
        const [a, b] = [bound(), bound()];
        const want = await countFunding(store, a, b);
        if (want > 0) nonEmpty++;
        assert.equal(await windowedCount(store.db, FUNDING_ORDINALS, USER, FUNDING_PARTITIONS, a, b), want, `[${a}, ${b})`);
        assert.equal((await store.queries.listFundingChanges(USER, { after: a, before: b, limit: 3 })).count, want, `page, [${a}, ${b})`);
      }
      assert.ok(nonEmpty > 80, `windows that select movements: ${nonEmpty}`);
    });

    it('a row projected out of time order, or twice, is ranked by renumbering its user', { skip: !available }, async () => {
      const own = await dialect.open();
      try {
        const h = generateHistory({ seed: 23, orders: 300 });
        await own.store.projector.project(h.batches);
        let seq = h.batches.at(-1)!.seq;
        const ts0 = h.batches.at(-1)!.ts;
        const middle = h.batches[Math.floor(h.batches.length / 2)]!.ts;
        // A later batch whose fill is stamped in the middle of the history (never so from the sequencer).
        const early = tiedFills(++seq, ts0 + 1, 'early', ['ETHUSDT', 'BTCUSDT']);
        for (const e of early.events) {
          if (e.type === 'fill') e.fill.createdAt = middle;
          if (e.type === 'funding') e.funding.updatedAt = middle;
        }
        await own.store.projector.project([early]);
        await assertOrdinalsMatchRows(own.store, 'after an out-of-order fill');
        // A fill already there (same execution and order) next to a new one in a later batch.
        const again = tiedFills(++seq, ts0 + 2, 'early', ['ETHUSDT']);
        const fresh = tiedFills(++seq, ts0 + 3, 'fresh', ['ETHUSDT', 'SOLUSDT']);
        await own.store.projector.project([again, fresh]);
        await assertOrdinalsMatchRows(own.store, 'after a fill projected twice');
        for (const [instruments, a, b] of [[undefined, middle, undefined], [['ETHUSDT'], middle, ts0 + 4], [['ETHUSDT'], undefined, middle + 1]] as const) {
          const store = own.store;
          const want = await countRows(store, instruments as string[] | undefined, a, b);
          assert.equal((await store.queries.listFills(USER, { instrument: instruments as string[] | undefined, after: a, before: b })).count, want);
          assert.equal((await store.queries.listFundingChanges(USER, { after: a, before: b })).count, await countFunding(store, a, b));
        }
      } finally {
        await own.dispose();
      }
    });

    it('the migration ranks rows written before it, and drops the fill counters it replaces', { skip: !available }, async () => {
      const kind = dialect.name;
      const old = await openBeforeOrdinals(kind);
      let migrated: ReadStore | undefined;
      try {
        const migrator = new Migrator({ db: old.db, provider: { getMigrations: async () => storeMigrations(kind) } });
        const { error } = await migrator.migrateTo('0005_fill_hour_counts');
        assert.equal(error, undefined);
        const h = generateHistory({ seed: 24, orders: 500 });
        // Written in a shuffled order: ranks follow (created_at, seq, ev), not insertion order.
        const rows = h.ref.fills.map((f) => fillRow(f, f.seq, f.ev));
        const r = mulberry32(3);
        for (let i = rows.length - 1; i > 0; i--) {
          const j = Math.floor(r() * (i + 1));
          [rows[i], rows[j]] = [rows[j]!, rows[i]!];
        }
        await insertRows(old.db, kind, 'fills', rows, { keys: ['execution_id', 'order_id'], update: 'none' });
        const funding = h.ref.funding.map((f) => fundingRow(f, f.seq, f.ev)).reverse();
        await insertRows(old.db, kind, 'funding_changes', funding, { keys: ['seq', 'ev'], update: 'none' });
        // As the projector would have left it: the next batch must follow the last one written.
        await (old.db as Kysely<any>).updateTable('projector_meta').set({ last_seq: h.batches.at(-1)!.seq }).where('id', '=', 1).execute();
        await old.db.destroy();
        migrated = await openReadStore(old.config);
        await assertOrdinalsMatchRows(migrated, 'after the migration');
        const tables = (await sql<{ name: string }>`${sql.raw(kind === 'sqlite'
          ? "select name from sqlite_master where type = 'table'"
          : "select tablename as name from pg_tables where schemaname = 'public'")}`.execute(migrated.db)).rows.map((t) => t.name);
        assert.ok(tables.includes('fills') && !tables.includes('fill_counts') && !tables.includes('fill_hour_counts'), tables.join(','));
        // New fills continue the ranks.
        const lastSeq = h.batches.at(-1)!;
        await migrated.projector.project([tiedFills(lastSeq.seq + 1, lastSeq.ts + 1, 'after', ['BTCUSDT', 'SOLUSDT'])]);
        await assertOrdinalsMatchRows(migrated, 'a fill projected after the migration');
      } finally {
        if (migrated) await migrated.close();
        await old.dispose();
      }
    });
  });
}
