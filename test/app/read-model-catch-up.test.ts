/**
 * Start-up when the read model is behind the newest snapshot (here: an older copy of read.db put back):
 * recovery starts from the newest snapshot the read model is not behind, and the one journal replay both
 * rebuilds the engine and projects what the read model lacks. A clean restart after that replays nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/app/config.js';
import { startExchange, type RunningExchange } from '../../src/app/exchange.js';
import { randomWallet } from '../auth/helpers.js';
import { Bot, ok } from './client.js';

test('read model behind the newest snapshot: caught up from an older snapshot in the same replay', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'perpx-catchup-'));
  const config = loadConfig({
    PORT: '0', DATA_DIR: dir, SIGNATURE_THREADS: '0', LOG_LEVEL: 'silent', INDEX_FEED: 'off', FUNDING_INTERVAL_MS: '0',
    MARKET_MAKERS: '0', DEMO_WALLET: 'false',
  });
  const wallet = randomWallet();
  const place = async (ex: RunningExchange, price: string): Promise<string> => {
    const bot = await new Bot(ex.url, wallet).signIn();
    if (price === '90000') await bot.faucet();
    return (ok(await bot.limit({ side: 'BUY', quantity: '0.001', limitPrice: price }), 'limit') as { id: string }).id;
  };
  try {
    // Run 1: an order; clean stop (snapshot + read model at seq1). Keep a copy of that read model.
    let ex = await startExchange(config);
    const first = await place(ex, '90000');
    await ex.close();
    const seq1 = ex.engine.seq;
    const files = ['read.db', 'read.db-wal', 'read.db-shm'].filter((f) => existsSync(join(dir, f)));
    for (const f of files) copyFileSync(join(dir, f), join(dir, `${f}.old`));

    // Run 2: another order; clean stop (snapshot at seq2).
    ex = await startExchange(config);
    const second = await place(ex, '90001');
    await ex.close();
    const seq2 = ex.engine.seq;
    assert.ok(seq2 > seq1);

    // Put the old read model back: it lacks everything after seq1.
    for (const f of ['read.db', 'read.db-wal', 'read.db-shm']) rmSync(join(dir, f), { force: true });
    for (const f of files) copyFileSync(join(dir, `${f}.old`), join(dir, f));

    ex = await startExchange(config);
    try {
      assert.deepEqual(
        { snapshotSeq: ex.startup.snapshotSeq, replayed: ex.startup.replayed, fromSeq: ex.startup.readModel.fromSeq, projected: ex.startup.readModel.projected },
        { snapshotSeq: seq1, replayed: seq2 - seq1, fromSeq: seq1, projected: seq2 - seq1 },
      );
      assert.equal(ex.engine.seq, seq2);
      // The read model has both orders (history list comes from it).
      const bot = await new Bot(ex.url, wallet).signIn();
      const list = ok(await bot.get('/api/order?limit=50'), 'order list') as { list: Array<{ id: string }> };
      const ids = list.list.map((o) => o.id);
      assert.ok(ids.includes(first) && ids.includes(second), `orders in the read model: ${ids.join(',')}`);
    } finally {
      await ex.close();
    }

    ex = await startExchange(config);
    try {
      assert.equal(ex.startup.replayed, 0, 'current again: nothing to replay');
      assert.equal(ex.startup.readModel.projected, 0);
    } finally {
      await ex.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
