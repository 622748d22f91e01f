// The example client (examples/trading-bot.ts) runs green against a real exchange started here, with
// market makers providing liquidity and the demo wallet of the data directory — the same as
// `npm start` + `npm run example` on a fresh clone.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { startTestExchange, type TestExchange } from '../app/client.js';

describe('examples/trading-bot.ts', () => {
  let X: TestExchange;
  before(async () => {
    X = await startTestExchange({ MARKET_MAKERS: '2', MM_INTERVAL_MS: '200', DEMO_WALLET: 'true' });
  });
  after(async () => {
    await X?.stop();
  });

  test('signs in, listens, places/replaces/cancels, opens and closes a position', async () => {
    const demo = X.ex.demoWallet!;
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', 'examples/trading-bot.ts'], {
        env: { ...process.env, PERPX_URL: X.url, DATA_DIR: X.ex.dataDir, PRIVATE_KEY: '' }, timeout: 60_000,
      }, (err, out, errOut) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout: out, stderr: errOut }));
    });
    assert.equal(code, 0, `example failed:\n${stdout}\n${stderr}`);
    assert.match(stdout, new RegExp(`signed in as ${demo.address}, exchangeId ${demo.exchangeId}`));
    for (const step of [/placed \S+: BUY/, /replaced \S+: BUY/, /cancelled \S+/, /position opened: BUY/, /position closed/, /done; available balance/]) {
      assert.match(stdout, step);
    }
    // The engine agrees: no open orders and no position left for the demo account.
    assert.deepEqual(X.ex.engine.openOrders(demo.exchangeId), []);
    assert.ok(X.ex.engine.positions(demo.exchangeId).every((p) => p.quantity === 0));
    X.ex.engine.checkInvariants();
  });
});

// The proof for bots that run long: with 5 s access tokens the example keeps trading and listening for
// RUN_SECONDS (15 s here, 10 minutes with SLOW=1) and fails should the order channel miss an order's state.
describe('examples/trading-bot.ts with RUN_SECONDS and ACCESS_TOKEN_TTL_SEC=5', () => {
  const runSeconds = process.env.SLOW === '1' ? 600 : 15;
  let X: TestExchange;
  before(async () => {
    X = await startTestExchange({ MARKET_MAKERS: '2', MM_INTERVAL_MS: '200', DEMO_WALLET: 'true', ACCESS_TOKEN_TTL_SEC: '5' });
  });
  after(async () => {
    await X?.stop();
  });

  test(`trades and listens for ${runSeconds} s through many token lifetimes without losing an order event`, { timeout: runSeconds * 1000 + 180_000 }, async () => {
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', 'examples/trading-bot.ts'], {
        env: { ...process.env, PERPX_URL: X.url, DATA_DIR: X.ex.dataDir, PRIVATE_KEY: '', RUN_SECONDS: String(runSeconds) },
        timeout: runSeconds * 1000 + 120_000,
      }, (err, out, errOut) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout: out, stderr: errOut }));
    });
    assert.equal(code, 0, `example failed:\n${stdout}\n${stderr}`);
    const m = /ran \d+ s: (\d+) rounds, (\d+) orders, every one delivered on the order channel/.exec(stdout);
    assert.ok(m, stdout);
    // The run outlived several access tokens, and did something each round.
    assert.ok(Number(m[1]) >= 3 && Number(m[2]) > Number(m[1]), stdout);
    X.ex.engine.checkInvariants();
  });
});
