/**
 * The read model never loses a batch (issue 26, point 7). A real exchange (threaded projector) runs with
 * faults injected into the projector's transactions (ProjectionFaults: the transaction writes its rows,
 * then fails and rolls back). A batch fails once, three times, and always:
 *   - trading goes on (orders and trades acknowledged);
 *   - while the projection fails, history routes answer 503 READ_MODEL_BEHIND (with Retry-After), never
 *     stale rows, and the operator status says `retrying`;
 *   - the failed batches are retried until they apply: afterwards history shows every command, and the
 *     read model equals a clean rebuild from the journal, row for row, in every table.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/app/config.js';
import { startExchange, type RunningExchange } from '../../src/app/exchange.js';
import { ProjectionFaults } from '../../src/store/index.js';
import { ALL_TIME, Bot, http, ok, type Res } from './client.js';
import { assertSameReadModel, rebuildReadModel } from './read-model-rebuild.js';

async function getWithHeaders(bot: Bot, path: string): Promise<Res & { retryAfter: string | null }> {
  const res = await fetch(bot.base + path, { headers: { authorization: `Bearer ${bot.accessToken}`, accept: 'application/json' } });
  return { status: res.status, body: await res.json(), retryAfter: res.headers.get('retry-after') };
}

async function waitFor(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Order ids acknowledged to each bot. */
type Acked = Map<Bot, string[]>;

/** b rests a sell, a buys it with an IOC: two orders, a trade, fills, fees, positions. */
async function trade(a: Bot, b: Bot, price: string, acked: Acked): Promise<{ buy: string }> {
  const sell = ok(await b.limit({ side: 'SELL', quantity: '0.01', limitPrice: price }), 'sell') as { id: string };
  const buy = ok(await a.limit({ side: 'BUY', quantity: '0.01', limitPrice: price, timeInForce: 'IOC' }), 'buy') as { id: string; status: string };
  assert.equal(buy.status, 'FILLED');
  acked.set(b, [...(acked.get(b) ?? []), sell.id]);
  acked.set(a, [...(acked.get(a) ?? []), buy.id]);
  return { buy: buy.id };
}

/** Whether every acknowledged order is in its owner's history (false while history answers 503). */
async function historyComplete(acked: Acked): Promise<boolean> {
  for (const [bot, ids] of acked) {
    const res = await bot.get('/api/order?limit=500');
    if (res.status === 503) return false;
    const listed = new Set((ok(res, 'order history') as { list: Array<{ id: string }> }).list.map((o) => o.id));
    if (!ids.every((id) => listed.has(id))) return false;
  }
  return true;
}

const readModelState = async (ex: RunningExchange) =>
  (ok(await http(ex.url, 'GET', '/api/admin/status', undefined, { 'x-operator-token': ex.operatorToken })) as { readModel: { state: string } }).readModel.state;

test('read model: a batch failing once, three times and always is retried; history answers 503 meanwhile; the result equals a clean rebuild', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'perpx-rm-retry-'));
  const faults = new ProjectionFaults();
  const config = loadConfig({
    PORT: '0', DATA_DIR: dir, SIGNATURE_THREADS: '0', LOG_LEVEL: 'silent', INDEX_FEED: 'off', FUNDING_INTERVAL_MS: '0',
    MARKET_MAKERS: '0', DEMO_WALLET: 'false',
  });
  let ex: RunningExchange | undefined = await startExchange(config, { readModelFaults: faults });
  try {
    const [a, b] = [await new Bot(ex.url).signIn(), await new Bot(ex.url).signIn()];
    await a.faucet();
    await b.faucet();
    const acked: Acked = new Map();
    await trade(a, b, '100000', acked);
    await waitFor(() => historyComplete(acked), 'history before any fault');

    // ---- fails once, then three times: retried without anyone's help ----
    for (const [n, price] of [[1, '100010'], [3, '100020']] as const) {
      const before = faults.injected;
      faults.failNext(n);
      await trade(a, b, price, acked);
      await waitFor(() => historyComplete(acked), `history after ${n} failure(s)`);
      assert.equal(faults.injected - before, n, `exactly ${n} injected failure(s), each retried`);
      assert.equal(await readModelState(ex), 'current');
    }

    // ---- fails always: trading goes on, history refuses with 503, until the fault clears ----
    const before = faults.injected;
    faults.failAlways();
    const { buy } = await trade(a, b, '100030', acked);
    await waitFor(() => faults.injected > before, 'the projection of the new trade failed');
    for (const path of ['/api/order?limit=50', `/api/fill?${ALL_TIME}`, '/api/position/history', `/api/order/${buy}/fill`]) {
      const res = await getWithHeaders(a, path);
      assert.equal(res.status, 503, `${path} while the read model fails: ${JSON.stringify(res.body)}`);
      assert.equal((res.body as { error: { code: string } }).error.code, 'READ_MODEL_BEHIND', path);
      assert.match((res.body as { error: { message: string } }).error.message, /injected read-model fault/);
      assert.equal(res.retryAfter, '1', `${path} Retry-After`);
    }
    assert.equal(await readModelState(ex), 'retrying');
    // Live state is the engine's: still served, and trading continues.
    ok(await a.get('/api/order/opened'), 'open orders');
    assert.equal((await a.positions()).length, 1);
    await trade(a, b, '100040', acked);
    await waitFor(() => faults.injected >= before + 3, 'several retries while the fault lasts');
    assert.equal((await a.get('/api/order?limit=50')).status, 503, 'still refused after several retries');

    faults.clear();
    await waitFor(() => historyComplete(acked), 'history after the fault cleared');
    assert.equal(await readModelState(ex), 'current');

    const seq = ex.engine.seq;
    await ex.close();
    ex = undefined;
    const rebuilt = join(dir, 'rebuilt.db');
    assert.equal(await rebuildReadModel(dir, rebuilt), seq);
    const rows = assertSameReadModel(join(dir, 'read.db'), rebuilt);
    assert.ok(rows > 20, `compared ${rows} rows`);
  } finally {
    await ex?.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
