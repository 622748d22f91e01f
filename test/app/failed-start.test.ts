/**
 * A start that fails halfway closes everything it opened, through the same shutdown registry as a graceful
 * stop: no file of the data directory stays open, no worker thread of the exchange keeps running, a port it
 * already listened on is free again, and the next start on the same data directory works.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../../src/app/config.js';
import { startExchange } from '../../src/app/exchange.js';
import { waitFor } from '../realtime/helpers.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function newDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'perpx-failed-start-'));
  dirs.push(dir);
  return dir;
}

/** Every thread runs its own worker, journal writer, projector and snapshot replica, and one signature thread. */
function configFor(dataDir: string, env: Record<string, string> = {}) {
  return loadConfig({
    PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', SEED_DEMO: 'true', MARKET_MAKERS: '1', DEMO_WALLET: 'true',
    INDEX_FEED: 'random', INDEX_FEED_INTERVAL_MS: '50', FUNDING_INTERVAL_MS: '60000',
    JOURNAL_WRITER: 'thread', READ_MODEL_WRITER: 'thread', SNAPSHOT_WRITER: 'replica', SIGNATURE_THREADS: '1', ...env,
  });
}

/** Files of `dataDir` this process holds open (every thread's descriptors are the process's). */
function openFilesUnder(dataDir: string): string[] {
  const open: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(join('/proc/self/fd', fd));
      if (target.startsWith(dataDir)) open.push(target);
    } catch {
      // closed while listing
    }
  }
  return open;
}

/** Threads of this process the exchange named (perpx-journal, perpx-projector, perpx-signature, …). */
function exchangeThreads(): string[] {
  const names: string[] = [];
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const name = readFileSync(join('/proc/self/task', tid, 'comm'), 'utf8').trim();
      if (name.startsWith('perpx-')) names.push(name);
    } catch {
      // exited while listing
    }
  }
  return names;
}

function listen(port = 0): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
}

const portOf = (s: Server) => (s.address() as { port: number }).port;
const closeServer = (s: Server) => new Promise<void>((r) => s.close(() => r()));

/** Log lines at info and above, to see the shutdown path run. */
function capturedLogger() {
  const lines: Array<{ msg: string; step?: string }> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

async function assertReleased(dataDir: string): Promise<void> {
  await waitFor(() => openFilesUnder(dataDir).length === 0, 10_000, `files closed: ${openFilesUnder(dataDir).join(', ')}`);
  await waitFor(() => exchangeThreads().length === 0, 10_000, `threads ended: ${exchangeThreads().join(', ')}`);
}

/** The next start on the same data directory works and finds what the failed one journaled. */
async function startsAgain(dataDir: string): Promise<void> {
  const ex = await startExchange(configFor(dataDir, { MARKET_MAKERS: '0', INDEX_FEED: 'off' }));
  try {
    assert.deepEqual(ex.engine.instrumentConfigs().map((i) => i.id).sort(), ['BTCUSDT', 'ETHUSDT']);
    const res = await fetch(`${ex.url}/api/market/instrument`);
    assert.equal(res.status, 200);
  } finally {
    await ex.close();
  }
  await assertReleased(dataDir);
}

describe('a failed start closes what it opened', () => {
  test('port in use: the start rejects, every file and thread is released, the next start works', async () => {
    assert.deepEqual(exchangeThreads(), [], 'no exchange threads before');
    const dataDir = newDataDir();
    const taken = await listen();
    const { logger, lines } = capturedLogger();
    try {
      await assert.rejects(startExchange(configFor(dataDir, { PORT: String(portOf(taken)) }), { logger }), /EADDRINUSE/);
    } finally {
      await closeServer(taken);
    }
    await assertReleased(dataDir);
    assert.ok(lines.some((l) => l.msg === 'stopped'), 'the shutdown path ran');
    assert.deepEqual(lines.filter((l) => l.msg === 'shutdown step failed'), [], 'every step stopped cleanly');
    await startsAgain(dataDir);
  });

  test('auth port in use: the main port, already listening, is free again', async () => {
    const dataDir = newDataDir();
    const main = await listen();
    const mainPort = portOf(main);
    await closeServer(main);
    const taken = await listen();
    try {
      await assert.rejects(startExchange(configFor(dataDir, { PORT: String(mainPort), AUTH_PORT: String(portOf(taken)) })), /EADDRINUSE/);
    } finally {
      await closeServer(taken);
    }
    await assertReleased(dataDir);
    // Nothing listens on the main port any more: it can be bound again.
    await closeServer(await listen(mainPort));
    await startsAgain(dataDir);
  });

  test('a builder that fails halfway (auth.db cannot be opened): journal, read model and projection are closed', async () => {
    const dataDir = newDataDir();
    mkdirSync(join(dataDir, 'auth.db'));
    await assert.rejects(startExchange(configFor(dataDir)));
    await assertReleased(dataDir);
    rmSync(join(dataDir, 'auth.db'), { recursive: true });
    await startsAgain(dataDir);
  });
});
