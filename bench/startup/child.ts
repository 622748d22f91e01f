/**
 * One process of the start-up benchmark (bench/startup.bench.ts runs each step in its own process so that
 * peak RSS and module loading are measured per step). Prints one JSON line on stdout.
 *
 *   write <dataDir> <from> <to> <snapshotEveryCommands> clean|crash
 *       append stream commands [from, to) through the sequencer; `clean` stops with a final snapshot,
 *       `crash` SIGKILLs itself once the last command is acknowledged.
 *   start <dataDir>
 *       start the exchange as `npm start` does (no bots, no feeds), report where the time went, stop cleanly.
 */
import { performance } from 'node:perf_hooks';

const [mode, dataDir, ...rest] = process.argv.slice(2);

if (mode === 'write') {
  const { writeHistory } = await import('./history.js');
  const [from, to, every, how] = rest;
  const t0 = performance.now();
  const r = await writeHistory({
    dataDir, from: Number(from), to: Number(to), snapshotEveryCommands: Number(every), snapshotOnStop: how === 'clean',
    crashAtEnd: how === 'crash',
    onProgress: (done) => {
      if (done % 100_000 < 2048) process.stderr.write(`  written ${done}\n`);
    },
  });
  console.log(JSON.stringify({ ...r, ms: Math.round(performance.now() - t0), maxRssKb: process.resourceUsage().maxRSS }));
} else if (mode === 'start') {
  // performance.now() counts from process start, so this includes Node + tsx + module loading.
  const { loadConfig } = await import('../../src/app/config.js');
  const { startExchange } = await import('../../src/app/exchange.js');
  const loadedMs = performance.now();
  const config = loadConfig({
    ...process.env, PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent', SEED_DEMO: 'false', MARKET_MAKERS: '0',
    DEMO_WALLET: 'false', INDEX_FEED: 'off', FUNDING_INTERVAL_MS: '0',
  });
  const ex = await startExchange(config);
  const readyMs = performance.now();
  const maxRssKb = process.resourceUsage().maxRSS;
  const seq = ex.engine.seq;
  const t1 = performance.now();
  await ex.close();
  console.log(JSON.stringify({ seq, loadedMs: Math.round(loadedMs), readyMs: Math.round(readyMs), startup: ex.startup, maxRssKb, closeMs: Math.round(performance.now() - t1) }));
} else {
  console.error('usage: child.ts write <dir> <from> <to> <every> clean|crash | start <dir>');
  process.exit(2);
}
