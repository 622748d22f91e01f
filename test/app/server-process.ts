/**
 * The real `npm start` entry (src/app/main.ts) as a child process on a given DATA_DIR, and a load of
 * signed orders that runs until the server is gone (graceful-stop and disk-full tests).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { Wallet } from 'ethers';
import { randomWallet } from '../auth/helpers.js';
import { Bot, newOrderId } from './client.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAIN = join(ROOT, 'src/app/main.ts');

export interface StartupLog {
  totalMs: number;
  snapshotSeq: number;
  replayed: number;
  readModel: { fromSeq: number; projected: number };
}

/** `npm start` as a child: its banner gives the URLs, its pino JSON lines the start-up report. */
export class ServerProcess {
  readonly proc: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly ready: Promise<{ url: string; wsUrl: string; prefix: string; startup: StartupLog }>;
  readonly logs: Array<Record<string, unknown>> = [];
  private output = '';

  constructor(dataDir: string, env: Record<string, string> = {}) {
    this.proc = spawn(process.execPath, ['--import', 'tsx', MAIN], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info', SIGNATURE_THREADS: '0', INDEX_FEED: 'off', FUNDING_INTERVAL_MS: '0',
        DEMO_WALLET: 'false', MARKET_MAKERS: '0', HEARTBEAT_MS: '1000', SHUTDOWN_GRACE_MS: '5000', ...env,
      },
    });
    this.exited = new Promise((resolve) => this.proc.once('exit', (code, signal) => resolve({ code, signal })));
    this.proc.stderr!.on('data', (d: Buffer) => (this.output += d.toString()));
    let url = '';
    let wsUrl = '';
    let prefix = '';
    this.ready = new Promise((resolve, reject) => {
      void this.exited.then(({ code }) => reject(new Error(`server exited (${code}) before it was ready:\n${this.output}`)));
      createInterface({ input: this.proc.stdout! }).on('line', (line) => {
        this.output += line + '\n';
        const rest = /^\s+REST API\s+(\S+)\/api\b/.exec(line);
        if (rest) url = rest[1];
        const ws = /^\s+WebSocket\s+(\S+)\s+channels "([^"]*)</.exec(line);
        if (ws) [wsUrl, prefix] = [ws[1], ws[2]];
        if (line.startsWith('{')) {
          const entry = JSON.parse(line) as Record<string, unknown>;
          this.logs.push(entry);
          if (entry.msg === 'started') this.startup = entry.startup as StartupLog;
        }
        // The banner is printed after the "started" log line; the WebSocket line comes after REST API.
        if (url && wsUrl && this.startup) resolve({ url, wsUrl, prefix, startup: this.startup });
      });
    });
  }

  private startup: StartupLog | undefined;

  get text(): string {
    return this.output;
  }
}

export type Outcome = { kind: 'ack'; id: string; status: string } | { kind: 'refused'; id: string; status: number; code?: string } | { kind: 'network'; id: string };

/** Places resting buy orders (well under the mid, so they stay open) from `workers` loops until the server is gone. */
export function submitUntilGone(bot: Bot, workers: number, outcomes: Outcome[]): Promise<void> {
  const loop = async (w: number) => {
    for (let i = 0; ; i++) {
      const id = newOrderId();
      const limitPrice = (90_000 + w * 100 + (i % 50)).toFixed(1);
      let res;
      try {
        res = await bot.limit({ id, side: 'BUY', quantity: '0.001', limitPrice, leverage: 10 });
      } catch {
        outcomes.push({ kind: 'network', id });
        return; // connection refused / reset: the server is gone
      }
      if (res.status === 200) outcomes.push({ kind: 'ack', id, status: (res.body as { status: string }).status });
      else outcomes.push({ kind: 'refused', id, status: res.status, code: (res.body as { error?: { code?: string } } | undefined)?.error?.code });
    }
  };
  return Promise.all(Array.from({ length: workers }, (_, w) => loop(w))).then(() => undefined);
}

/**
 * Starts the entry (pushed onto `servers`, for the caller's cleanup), signs a fresh wallet in, funds it
 * from the faucet and starts `submitUntilGone` with 4 loops.
 */
export async function startUnderLoad(dataDir: string, env: Record<string, string>, servers: ServerProcess[]) {
  const server = new ServerProcess(dataDir, env);
  servers.push(server);
  const { url } = await server.ready;
  const wallet: Wallet = randomWallet();
  const bot = await new Bot(url, wallet).signIn();
  await bot.faucet();
  const outcomes: Outcome[] = [];
  const load = submitUntilGone(bot, 4, outcomes);
  const acked = () => outcomes.filter((o): o is Extract<Outcome, { kind: 'ack' }> => o.kind === 'ack');
  return { server, wallet, outcomes, load, acked };
}

export function lastJournalSeq(dataDir: string): number {
  const db = new Database(join(dataDir, 'journal.db'), { readonly: true });
  try {
    return (db.prepare('SELECT max(seq) AS seq FROM commands').get() as { seq: number }).seq;
  } finally {
    db.close();
  }
}

/** The operator's offline `verify-journal --json` on `dataDir` (with `env` on top of this process's): exit code and report. */
export function verifyJournalOffline(dataDir: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'verify-journal', '--data-dir', dataDir, '--json'],
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout) => resolve({ code: err ? 1 : 0, stdout }));
  });
}
