/**
 * The TradeSignalStore contract on both adapters: SQLite (in memory) and PostgreSQL (a fresh database per case,
 * dropped after; skipped outside CI when PostgreSQL does not answer). Expected values are the signals the cases write.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { migrateAccountTables } from '../../src/accounts/pg-schema.js';
import { PgTradeSignalStore } from '../../src/accounts/pg-trade-signals.js';
import { SqliteTradeSignalStore, TRADE_SIGNAL_SCHEMA, type TradeSignal, type TradeSignalStore } from '../../src/accounts/trade-signals.js';
import { describeOnDialects } from '../store/dialects.js';

interface Opened {
  store: TradeSignalStore;
  /** Another store on the same database (another gateway). */
  another(): TradeSignalStore;
  dispose(): Promise<void>;
}

async function openSqlite(): Promise<Opened> {
  const db = new Database(':memory:');
  db.exec(TRADE_SIGNAL_SCHEMA);
  return { store: new SqliteTradeSignalStore(db), another: () => new SqliteTradeSignalStore(db), dispose: async () => void db.close() };
}

async function openPostgres(connectionString: string): Promise<Opened> {
  const pools = [new pg.Pool({ connectionString, max: 2 }), new pg.Pool({ connectionString, max: 2 })];
  await Promise.all(pools.map(migrateAccountTables));
  return {
    store: new PgTradeSignalStore(pools[0]!),
    another: () => new PgTradeSignalStore(pools[1]!),
    async dispose() {
      for (const p of pools) await p.end();
    },
  };
}

const signal = (over: Partial<TradeSignal>): TradeSignal => ({
  id: 's', userId: 'u1', instrument: 'BTCUSDT', side: 'BUY', entryPrice: 9_500_000_000_000, takeProfit: 9_900_000_000_000, stopLoss: null,
  leverage: 10, comment: 'to the moon', createdAt: 1000, ...over,
});

await describeOnDialects('TradeSignalStore', { sqlite: openSqlite, postgres: openPostgres }, (withStore) => {
  it('keeps a signal exactly (prices above 2^32, nulls) and another store reads it', withStore(async (o) => {
    const s = signal({ id: 'a', stopLoss: 9_000_000_000_001, takeProfit: null, side: 'SELL' });
    assert.deepEqual(await o.store.create(s), s);
    assert.deepEqual(await o.another().get('a'), s);
    assert.equal(await o.store.get('missing'), undefined);
  }));

  it('lists an author\'s signals newest first (ties by id), paged, with the count; others\' stay out', withStore(async (o) => {
    const mine = [signal({ id: 'b', createdAt: 2000 }), signal({ id: 'a', createdAt: 2000 }), signal({ id: 'c', createdAt: 3000 }), signal({ id: 'd', createdAt: 1000 })];
    for (const s of mine) await o.store.create(s);
    await o.another().create(signal({ id: 'e', userId: 'u2', createdAt: 5000 }));
    const ids = async (limit: number, offset: number) => {
      const r = await o.another().listByUser('u1', limit, offset);
      return { ids: r.list.map((s) => s.id), count: r.count };
    };
    assert.deepEqual(await ids(10, 0), { ids: ['c', 'a', 'b', 'd'], count: 4 });
    assert.deepEqual(await ids(2, 1), { ids: ['a', 'b'], count: 4 });
    assert.deepEqual(await o.store.listByUser('nobody', 10, 0), { list: [], count: 0 });
  }));
});
