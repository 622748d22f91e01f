// READ_STORE_URL: the running exchange keeps its history read model in PostgreSQL; it survives a restart,
// and an empty database is rebuilt from the journal to the same history.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { loadConfig } from '../../src/app/config.js';
import { startExchange, type RunningExchange } from '../../src/app/exchange.js';
import { createPostgresTestDatabase, postgresAvailable } from '../store/dialects.js';
import { Bot, ok } from './client.js';

const skip = !(await postgresAvailable());

describe('history read model on PostgreSQL (READ_STORE_URL)', { skip: skip && 'PostgreSQL is not reachable' }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'perpx-pg-read-'));
  const databases: Array<{ connectionString: string; drop(): Promise<void> }> = [];
  let ex: RunningExchange | undefined;

  const start = async (readStoreUrl: string) => {
    ex = await startExchange(loadConfig({
      PORT: '0', DATA_DIR: dir, SIGNATURE_THREADS: '0', LOG_LEVEL: 'silent', MARKET_MAKERS: '0', DEMO_WALLET: 'false',
      INDEX_FEED: 'off', FUNDING_INTERVAL_MS: '0', READ_STORE_URL: readStoreUrl,
    }));
    return ex;
  };
  const history = async (bot: Bot) => ({
    orders: ok(await bot.get('/api/order?limit=100')) as { list: Array<{ id: string; status: string }>; count: number },
    fills: ok(await bot.get(`/api/fill?after=0&before=${Date.now() + 60_000}&limit=100`)) as { list: unknown[]; count: number },
  });

  const rowCount = async (connectionString: string, table: string): Promise<number> => {
    const c = new pg.Client({ connectionString });
    await c.connect();
    try {
      return Number((await c.query(`select count(*) as n from ${table}`)).rows[0].n);
    } finally {
      await c.end();
    }
  };

  before(async () => {
    databases.push(await createPostgresTestDatabase(), await createPostgresTestDatabase());
  });
  after(async () => {
    await ex?.close();
    for (const d of databases) await d.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('orders and fills are served from PostgreSQL, kept across a restart, and rebuilt into an empty database', async () => {
    let running = await start(databases[0].connectionString);
    const seller = await new Bot(running.url).signIn();
    const buyer = await new Bot(running.url).signIn();
    await seller.faucet();
    await buyer.faucet();
    ok(await seller.limit({ side: 'SELL', quantity: '0.02', limitPrice: '100000' }), 'sell');
    ok(await buyer.limit({ side: 'BUY', quantity: '0.01', limitPrice: '100000' }), 'buy');
    const first = await history(seller);
    assert.equal(first.orders.count, 1);
    assert.equal(first.orders.list[0].status, 'PARTIALLY_FILLED');
    assert.equal(first.fills.count, 1);
    const buyerFirst = await history(buyer);
    assert.equal(buyerFirst.fills.count, 1);
    // The rows really are in PostgreSQL, and no SQLite read model was made.
    assert.equal(await rowCount(databases[0].connectionString, 'orders'), 2);
    assert.equal(existsSync(join(dir, 'read.db')), false);

    // Same database after a restart: the same history, nothing projected twice.
    await running.close();
    running = await start(databases[0].connectionString);
    assert.deepEqual(await history(await new Bot(running.url, seller.wallet).signIn()), first);

    // A new, empty database: the read model is rebuilt from the journal to the same rows.
    await running.close();
    running = await start(databases[1].connectionString);
    assert.deepEqual(await history(await new Bot(running.url, seller.wallet).signIn()), first);
    assert.deepEqual(await history(await new Bot(running.url, buyer.wallet).signIn()), buyerFirst);
    assert.equal(await rowCount(databases[1].connectionString, 'orders'), 2);
  });
});
