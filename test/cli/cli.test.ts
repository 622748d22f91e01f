// The operator CLI against a real exchange started by the test (port 0, temp DATA_DIR). Every CLI call is
// a child process (`node --import tsx src/cli/main.ts …`), as an operator would run it; the server stays in
// this process so the test can check the engine directly.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { loadConfig } from '../../src/app/config.js';
import { startExchange, type RunningExchange } from '../../src/app/exchange.js';
import { parseMoney, parseUnits } from '../../src/domain/fixed.js';
import { Bot, http, ok } from '../app/client.js';
import { rowChecksum } from '../../src/journal/sqlite-journal-table.js';

interface CliResult { code: number; stdout: string; stderr: string }

function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      env: { ...process.env, PERPX_URL: '', PERPX_OPERATOR_TOKEN: '', ...env }, timeout: 60_000,
    }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

describe('operator CLI against a running exchange', () => {
  let dir: string;
  let ex: RunningExchange;
  let stopped = false;
  const run = (...args: string[]) => cli([...args, '--url', ex.url, '--data-dir', dir]);
  const runJson = async <T = any>(...args: string[]): Promise<T> => {
    const r = await run(...args, '--json');
    assert.equal(r.code, 0, `perpx ${args.join(' ')} failed: ${r.stderr}`);
    return JSON.parse(r.stdout) as T;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'perpx-cli-'));
    ex = await startExchange(loadConfig({ PORT: '0', DATA_DIR: dir, SIGNATURE_THREADS: '0', LOG_LEVEL: 'silent', MARKET_MAKERS: '0', INDEX_FEED: 'off', FUNDING_INTERVAL_MS: '0' }));
  });
  after(async () => {
    if (!stopped) await ex.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the operator token is created in the data dir with mode 0600', () => {
    const file = join(dir, 'operator-token');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(readFileSync(file, 'utf8').trim(), ex.operatorToken);
  });

  test('--help works for the CLI and every command', async () => {
    const main = await cli(['--help']);
    assert.equal(main.code, 0);
    const names = [...main.stdout.matchAll(/^ {2}([a-z-]+) {2,}/gm)].map((m) => m[1]);
    assert.ok(names.length >= 11, `commands listed: ${names.join(', ')}`);
    // One child per core at a time: a dozen tsx start-ups at once overran the timeout on a loaded machine.
    const helps: CliResult[] = [];
    const lanes = Math.max(1, availableParallelism());
    for (let i = 0; i < names.length; i += lanes) {
      helps.push(...await Promise.all(names.slice(i, i + lanes).map((n) => cli([n, '--help']))));
    }
    helps.forEach((h, i) => {
      assert.equal(h.code, 0, `${names[i]} --help`);
      assert.match(h.stdout, new RegExp(`^Usage: perpx ${names[i]}`), names[i]);
    });
    const unknown = await cli(['frobnicate']);
    assert.equal(unknown.code, 2);
  });

  test('credentials: a wrong token and a non-admin JWT are refused; no state changes', async () => {
    const seq = ex.engine.seq;
    const bad = await cli(['matcher', 'me-dead', '--url', ex.url, '--token', 'nope']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /UNAUTHORIZED/);
    const none = await http(ex.url, 'POST', '/api/admin/matcher', { state: 'me-dead' });
    assert.equal(none.status, 401);
    const user = await new Bot(ex.url).signIn();
    const forbidden = await user.post('/api/admin/matcher', { state: 'me-dead' });
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body.error.code, 'FORBIDDEN');
    assert.equal(ex.engine.seq, seq);
    assert.equal(ex.engine.matcher().state, 'active');
  });

  test('status shows the seeded instruments and engine seq', async () => {
    const s = await runJson('status');
    assert.equal(s.seq, ex.engine.seq);
    assert.equal(s.matcher, 'active');
    assert.deepEqual(s.instruments.map((i: { id: string }) => i.id).sort(), ['BTCUSDT', 'ETHUSDT']);
    assert.equal(s.instruments.find((i: { id: string }) => i.id === 'BTCUSDT').indexPrice, '100000');
    const text = await run('status');
    assert.equal(text.code, 0);
    assert.match(text.stdout, /BTCUSDT\s+all\s+100000/);
  });

  test('cluster status: a single process is not a cluster (exit 1); an unknown subcommand is a usage error', async () => {
    const r = await run('cluster', 'status');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /NOT_A_CLUSTER/);
    assert.equal((await run('cluster', 'bogus')).code, 2);
  });

  test('status: the money identity checks out from its ledger terms alone, open positions included', async () => {
    const [a, b, c] = await Promise.all([new Bot(ex.url).signIn(), new Bot(ex.url).signIn(), new Bot(ex.url).signIn()]);
    for (const bot of [a, b, c]) await bot.faucet();
    // a buys 0.05 from b at 100000; b buys it back from c at 100100: a long and c short at different costs.
    ok(await b.limit({ side: 'SELL', quantity: '0.05', limitPrice: '100000' }), 'b sells');
    ok(await a.limit({ side: 'BUY', quantity: '0.05', limitPrice: '100000', timeInForce: 'IOC' }), 'a buys');
    ok(await c.limit({ side: 'SELL', quantity: '0.05', limitPrice: '100100' }), 'c sells');
    ok(await b.limit({ side: 'BUY', quantity: '0.05', limitPrice: '100100', timeInForce: 'IOC' }), 'b buys back');
    const s = await runJson<{ ledger: Record<string, string> }>('status');
    assert.deepEqual(Object.keys(s.ledger).sort(), ['balances', 'deposits', 'fees', 'openCost', 'reserveFund', 'withdrawals']);
    const money = (k: string) => parseMoney(s.ledger[k]!);
    // balances + fees + reserveFund − openCost = deposits − withdrawals, from the status output only.
    assert.equal(
      money('balances') + money('fees') + money('reserveFund') - money('openCost'),
      money('deposits') - money('withdrawals'),
      `identity from ${JSON.stringify(s.ledger)}`,
    );
    // The open-cost term matters here (the long's and the short's costs differ): without it the sum is off.
    assert.notEqual(s.ledger.openCost, '0', 'positions are open');
    assert.notEqual(money('balances') + money('fees') + money('reserveFund'), money('deposits') - money('withdrawals'));
    const l = ex.engine.ledger!();
    assert.equal(money('openCost'), l.openCost, 'the status shows the engine\'s open cost');
    const text = await run('status');
    assert.match(text.stdout, /openCost -?[\d.]+/);
    assert.match(text.stdout, /money identity \(balances \+ fees \+ reserveFund − openCost = deposits − withdrawals\): holds/);
  });

  test('deposit credits a user; grant-role makes their JWT an operator credential', async () => {
    const user = await new Bot(ex.url).signIn();
    const d = await runJson('deposit', String(user.exchangeId), '1234.5');
    assert.match(d.transferId, /^[0-9a-f-]{36}$/);
    assert.equal(ex.engine.account(user.exchangeId).balance, 123_450_000_000n);
    assert.equal((await user.get('/api/admin/status')).status, 403);
    const g = await runJson('grant-role', String(user.exchangeId), 'admin');
    assert.equal(g.role, 'admin');
    ok(await user.get('/api/admin/status'), 'admin status with a JWT');
    const bad = await run('deposit', '999999', '10');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /USER_NOT_FOUND/);
    const neg = await run('deposit', String(user.exchangeId), '0');
    assert.equal(neg.code, 1);
    assert.match(neg.stderr, /VALIDATION_ERROR|INVALID_AMOUNT/);
  });

  test('add-instrument copies another one; trading and matcher states change through commands', async () => {
    const r = await run('add-instrument', '--like', 'ETHUSDT', '--id', 'SOLUSDT', '--from', 'SOL', '--set', 'priceIncrement=0.001', '--index-price', '150');
    assert.equal(r.code, 0, r.stderr);
    const cfg = ex.engine.instrumentConfig('SOLUSDT');
    assert.equal(cfg?.from, 'SOL');
    assert.equal(cfg?.priceIncrement, '0.001');
    assert.equal(ex.engine.instrumentState('SOLUSDT')?.indexPrice, parseUnits('150'));
    const list = await runJson<Array<{ config: { id: string } }>>('instruments');
    assert.ok(list.some((i) => i.config.id === 'SOLUSDT'));

    const badField = await run('add-instrument', '--like', 'ETHUSDT', '--id', 'XUSDT', '--from', 'X', '--set', 'maxLeverage=0');
    assert.equal(badField.code, 1);
    assert.equal(ex.engine.instrumentConfig('XUSDT'), undefined);

    assert.equal((await run('trading', 'SOLUSDT', 'onlyClose')).code, 0);
    assert.equal(ex.engine.instrumentState('SOLUSDT')?.trading, 'onlyClose');
    const badState = await run('trading', 'SOLUSDT', 'sometimes');
    assert.equal(badState.code, 1);
    assert.equal(ex.engine.instrumentState('SOLUSDT')?.trading, 'onlyClose');
    assert.equal((await run('trading', 'NOPEUSDT', 'all')).code, 1);

    assert.equal((await run('matcher', 'me-dead')).code, 0);
    assert.equal(ex.engine.matcher().state, 'me-dead');
    assert.equal((await run('matcher', 'active')).code, 0);
    assert.equal(ex.engine.matcher().state, 'active');
  });

  test('index-price pushes a price.tick', async () => {
    assert.equal((await run('index-price', 'BTCUSDT', '101000')).code, 0);
    assert.equal(ex.engine.instrumentState('BTCUSDT')?.indexPrice, parseUnits('101000'));
    assert.equal((await run('index-price', 'BTCUSDT', 'abc')).code, 1);
    assert.equal(ex.engine.instrumentState('BTCUSDT')?.indexPrice, parseUnits('101000'));
  });

  test('oauth-register registers an integration the consent screen then shows; bad input registers nothing', async () => {
    const r = await runJson<{ integration: { id: string; scopes: string[] }; clientSecret: string }>(
      'oauth-register', '--name', 'Tracker', '--redirect-uri', 'https://tracker.example.com/cb', '--scope', 'read',
    );
    assert.deepEqual(r.integration.scopes, ['read']);
    assert.ok(r.clientSecret.length >= 32);
    const consent = await fetch(`${ex.url}/api/oauth?integrationId=${r.integration.id}&scopes=read&state=s1`);
    assert.equal(consent.status, 200);
    assert.equal(((await consent.json()) as { client: { name: string } }).client.name, 'Tracker');
    const bad = await run('oauth-register', '--name', 'X', '--redirect-uri', 'http://evil.example.com/cb', '--scope', 'read');
    assert.equal(bad.code, 1);
    assert.equal((await run('oauth-register', '--name', 'X')).code, 2);
    const list = await fetch(`${ex.url}/api/admin/oauth/integrations`, { headers: { 'x-operator-token': ex.operatorToken } });
    assert.equal(((await list.json()) as { list: unknown[] }).list.length, 1);
  });

  test('export-history writes a user\'s fills and orders as CSV', async () => {
    const a = await new Bot(ex.url).signIn();
    const b = await new Bot(ex.url).signIn();
    await a.faucet();
    await b.faucet();
    ok(await a.limit({ side: 'SELL', quantity: '0.01', limitPrice: '101000' }), 'sell');
    ok(await b.limit({ side: 'BUY', quantity: '0.01', limitPrice: '101000' }), 'buy');
    ok(await a.limit({ side: 'SELL', quantity: '0.02', limitPrice: '101500' }), 'resting sell');
    const file = join(dir, 'fills.csv');
    // The read model is projected asynchronously behind the sequencer: wait until the fill is there.
    let lines: string[] = [];
    for (let i = 0; i < 50 && lines.length < 2; i++) {
      const r = await run('export-history', String(a.exchangeId), '--kind', 'fills', '--out', file);
      assert.equal(r.code, 0, r.stderr);
      lines = readFileSync(file, 'utf8').trim().split('\n');
      if (lines.length < 2) await new Promise((res) => setTimeout(res, 100));
    }
    assert.equal(lines.length, 2, lines.join('\n'));
    const header = lines[0].split(',');
    const row = lines[1].split(',');
    assert.equal(row[header.indexOf('fillPrice')], '101000');
    assert.equal(row[header.indexOf('fillQuantity')], '0.01');
    assert.equal(row[header.indexOf('instrument')], 'BTCUSDT');

    const orders = await run('export-history', String(a.exchangeId), '--kind', 'orders');
    assert.equal(orders.code, 0, orders.stderr);
    const orderLines = orders.stdout.trim().split('\n');
    assert.equal(orderLines.length, 3, orders.stdout);
    assert.match(orderLines[0], /(^|,)status(,|$)/);
  });

  test('snapshot writes a snapshot file; verify-journal --online matches the live state', async () => {
    const s = await runJson<{ seq: number }>('snapshot');
    assert.equal(s.seq, ex.engine.seq);
    const files = readdirSync(join(dir, 'snapshots'));
    assert.ok(files.includes(`snapshot-${String(s.seq).padStart(16, '0')}.json`), files.join(','));
    const v = await run('verify-journal', '--online');
    assert.equal(v.code, 0, v.stderr + v.stdout);
    assert.match(v.stdout, /^OK: replayed \d+ commands/);
    assert.match(v.stderr, /replaying/);
  });

  test('offline verify-journal after a clean stop; a tampered journal is a mismatch', async () => {
    await ex.close();
    stopped = true;
    const good = await cli(['verify-journal', '--data-dir', dir, '--json']);
    assert.equal(good.code, 0, good.stderr);
    const report = JSON.parse(good.stdout);
    assert.equal(report.ok, true);
    assert.equal(report.expectedHash, report.replayedHash);
    assert.match(report.expectedFrom, /^snapshot \d+/);

    // Change the amount of the first deposit in the journal: the replay no longer reaches the snapshot's state.
    assert.ok(existsSync(join(dir, 'journal.db')));
    const db = new Database(join(dir, 'journal.db'));
    const row = db.prepare(`SELECT seq, body FROM commands WHERE body LIKE '%"funds.deposit"%' ORDER BY seq LIMIT 1`).get() as { seq: number; body: string };
    const cmd = JSON.parse(row.body);
    cmd.amount = (BigInt(cmd.amount) + 1n).toString();
    db.prepare('UPDATE commands SET body = ? WHERE seq = ?').run(JSON.stringify(cmd), row.seq);
    // The row's checksum no longer matches: the damaged command is refused, never replayed.
    const damaged = await cli(['verify-journal', '--data-dir', dir]);
    assert.equal(damaged.code, 1);
    assert.match(damaged.stderr + damaged.stdout, new RegExp(`seq ${row.seq} fails its checksum`));
    // Rewritten with a matching checksum, the replay runs and no longer reaches the snapshot's state.
    const { ts } = db.prepare('SELECT ts FROM commands WHERE seq = ?').get(row.seq) as { ts: number };
    db.prepare('UPDATE commands SET crc = ? WHERE seq = ?').run(rowChecksum(row.seq, ts, JSON.stringify(cmd)), row.seq);
    db.close();
    const bad = await cli(['verify-journal', '--data-dir', dir]);
    assert.equal(bad.code, 1);
    assert.match(bad.stdout, /MISMATCH/);
  });
});
