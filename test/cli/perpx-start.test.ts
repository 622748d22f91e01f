/**
 * What a supervisor starts must stop when it sends SIGTERM: `npm start` (npm passes the signal to its script,
 * which execs node) and `perpx start` (bin/perpx.mjs passes it to the exchange it runs). Each is started on a
 * temp DATA_DIR, sent SIGTERM once it serves, and must exit 0 after a graceful stop, with no exchange process
 * left behind and its port closed.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT } from '../app/server-process.js';
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

interface Started {
  proc: ChildProcess;
  url: string;
  logs: Array<{ msg?: string }>;
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
  const logs: Array<{ msg?: string }> = [];
  return new Promise((resolve, reject) => {
    void exited.then(({ code }) => reject(new Error(`${command} exited (${code}) before it served:\n${output}`)));
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      output += line + '\n';
      if (line.startsWith('{')) logs.push(JSON.parse(line) as { msg?: string });
      const rest = /^\s+REST API\s+(\S+)\/api\b/.exec(line);
      if (rest) resolve({ proc, url: rest[1], logs, exited });
    });
  });
}

async function stopsOnSigterm(command: string, args: string[]): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'perpx-start-'));
  try {
    const s = await start(command, args, dataDir);
    const res = await fetch(`${s.url}/api/market/instrument`);
    assert.equal(res.status, 200);
    assert.ok(processesOn(dataDir).length >= 1, 'the exchange runs');
    s.proc.kill('SIGTERM');
    assert.deepEqual(await s.exited, { code: 0, signal: null }, `${command} ${args.join(' ')} exits 0 after SIGTERM`);
    // The exchange itself stopped gracefully and nothing outlives the entry that was signalled.
    await waitFor(() => s.logs.some((l) => l.msg === 'stopped'), 10_000, 'graceful stop logged');
    await waitFor(() => processesOn(dataDir).length === 0, 10_000, `no exchange process left (${processesOn(dataDir).join(', ')})`);
    assert.ok(await refused(s.url), 'the port is closed');
  } finally {
    for (const pid of processesOn(dataDir)) process.kill(pid, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('start entries stop on SIGTERM from whatever started them', () => {
  test('npm start', () => stopsOnSigterm('npm', ['start', '--silent']));
  test('perpx start (bin/perpx.mjs)', () => stopsOnSigterm(process.execPath, [join(ROOT, 'bin/perpx.mjs'), 'start']));
});
