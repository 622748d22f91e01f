/**
 * What a supervisor starts must stop when it sends SIGTERM: `npm start` (npm passes the signal to its script,
 * which execs node) and `perpx start` (bin/perpx.mjs passes it to the exchange it runs). Each is started on a
 * temp DATA_DIR, a wallet takes a faucet deposit (journaled commands), then the entry gets SIGTERM: it must exit
 * 0 after a graceful stop, with no exchange process left behind and its port closed, and the journal must be
 * whole: the final snapshot is at its last seq, and a restart through the same entry replays nothing and shows
 * the deposit.
 * `npx perpx start` is not a supervisor's entry (npm exits as soon as its `sh -c` dies, before the exchange has
 * stopped, and reports the signal): it is only checked to leave nothing running.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Bot } from '../app/client.js';
import { lastJournalSeq, ROOT, type StartupLog } from '../app/server-process.js';
import { waitFor } from '../realtime/helpers.js';

/** Processes (other than this one) whose environment carries DATA_DIR=dataDir: the exchange and its parents. */
function processesOn(dataDir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(`DATA_DIR=${dataDir}`)) pids.push(Number(name));
    } catch {
      // gone, or not ours
    }
  }
  return pids;
}

async function refused(url: string): Promise<boolean> {
  try {
    await fetch(`${url}/api/market/instrument`, { signal: AbortSignal.timeout(1000) });
    return false;
  } catch {
    return true;
  }
}

interface Log {
  msg?: string;
  startup?: StartupLog;
}

interface Started {
  proc: ChildProcess;
  url: string;
  logs: Log[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(command: string, args: string[], dataDir: string): Promise<Started> {
  const proc = spawn(command, args, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env, PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info', SIGNATURE_THREADS: '0', INDEX_FEED: 'off', FUNDING_INTERVAL_MS: '0',
      DEMO_WALLET: 'false', MARKET_MAKERS: '0',
    },
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
  let output = '';
  proc.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const logs: Log[] = [];
  return new Promise((resolve, reject) => {
    void exited.then(({ code }) => reject(new Error(`${command} exited (${code}) before it served:\n${output}`)));
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      output += line + '\n';
      if (line.startsWith('{')) logs.push(JSON.parse(line) as Log);
      const rest = /^\s+REST API\s+(\S+)\/api\b/.exec(line);
      if (rest) resolve({ proc, url: rest[1], logs, exited });
    });
  });
}

/** Sends SIGTERM to the entry; the exchange behind it must stop gracefully and leave nothing behind. */
async function stop(s: Started, dataDir: string): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  s.proc.kill('SIGTERM');
  const exit = await s.exited;
  await waitFor(() => s.logs.some((l) => l.msg === 'stopped'), 10_000, 'graceful stop logged');
  await waitFor(() => processesOn(dataDir).length === 0, 10_000, `no exchange process left (${processesOn(dataDir).join(', ')})`);
  assert.ok(await refused(s.url), 'the port is closed');
  return exit;
}

async function stopsOnSigterm(command: string, args: string[]): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'perpx-start-'));
  try {
    const s = await start(command, args, dataDir);
    const bot = await new Bot(s.url).signIn();
    await bot.faucet();
    const deposited = (await bot.balance()).funding.balance;
    assert.ok(deposited > 0);
    assert.ok(processesOn(dataDir).length >= 1, 'the exchange runs');
    assert.deepEqual(await stop(s, dataDir), { code: 0, signal: null }, `${command} ${args.join(' ')} exits 0 after SIGTERM`);

    // The journal is whole: the final snapshot is at its last seq, and the next start replays nothing.
    const lastSeq = lastJournalSeq(dataDir);
    const again = await start(command, args, dataDir);
    await waitFor(() => again.logs.some((l) => l.startup), 10_000, 'start-up report');
    const startup = again.logs.find((l) => l.startup)!.startup!;
    assert.deepEqual([startup.snapshotSeq, startup.replayed], [lastSeq, 0], 'restored from the final snapshot, nothing to replay');
    const back = await new Bot(again.url, bot.wallet).signIn();
    assert.equal((await back.balance()).funding.balance, deposited, 'the deposit survived the stop');
    assert.deepEqual(await stop(again, dataDir), { code: 0, signal: null }, 'the restarted exchange stops the same way');
  } finally {
    for (const pid of processesOn(dataDir)) process.kill(pid, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('start entries stop on SIGTERM from whatever started them', () => {
  test('npm start', () => stopsOnSigterm('npm', ['start', '--silent']));
  test('perpx start (bin/perpx.mjs)', () => stopsOnSigterm(process.execPath, [join(ROOT, 'bin/perpx.mjs'), 'start']));
  test('npx perpx start leaves nothing running (the exchange sees its parent die)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'perpx-start-'));
    try {
      const s = await start('npx', ['--no-install', 'perpx', 'start'], dataDir);
      assert.equal((await fetch(`${s.url}/api/market/instrument`)).status, 200);
      const exit = await stop(s, dataDir);
      assert.notDeepEqual(exit, { code: 0, signal: null }, 'npm reports the signal, not the exchange\'s status');
    } finally {
      for (const pid of processesOn(dataDir)) process.kill(pid, 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
