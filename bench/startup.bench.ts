// Start-up benchmark (`npm run bench:startup`). Not a test: prints a markdown table.
//
// 1. Builds a data directory with BENCH_COMMANDS (default 1,000,000) commands of history through the real
//    Sequencer + SQLite journal + snapshots + read-model projector (bench/startup/history.ts: 1,000 users,
//    limit / cancel / IOC / market orders with fills, index ticks), periodic snapshots every
//    SNAPSHOT_EVERY_COMMANDS (100,000, the server default) and a clean stop (final snapshot at the tip).
//    Built once per BENCH_DIR and reused while its journal still has that many commands (delete it to rebuild).
// 2. Measures, each start in its own process (`bench/startup/child.ts start`, the exchange as `npm start`
//    wires it, without bots or feeds; SIGNATURE_THREADS as configured, default 2):
//    (a) start after a clean stop: snapshot at the tip, read model current — median of BENCH_REPS;
//    (b) start after SIGKILL with a tail of BENCH_TAIL (default 50,000) commands after the last snapshot
//        (written by a process that kills itself once the last one is acknowledged, read model as left);
//    (c) ceiling: the full replay from zero (snapshots moved aside; read model current).
//    Reported per start: process wall time (spawn → listening, includes Node + tsx module loading), time
//    inside startExchange, its breakdown (snapshot read+parse, restore, journal replay, read-model
//    catch-up, wiring + HTTP listen) and peak RSS of the process.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { StartupStatus } from '../src/api/ports.js';
import { envInt } from './env-int.js';


const COMMANDS = envInt('BENCH_COMMANDS', 1_000_000);
const TAIL = envInt('BENCH_TAIL', 50_000);
const REPS = Math.max(1, envInt('BENCH_REPS', 3));
const SNAPSHOT_EVERY = envInt('SNAPSHOT_EVERY_COMMANDS', 100_000);
const DIR = process.env.BENCH_DIR ?? join(tmpdir(), `perpx-startup-bench-${COMMANDS}`);
const CHILD = fileURLToPath(new URL('./startup/child.ts', import.meta.url));

interface StartResult {
  seq: number;
  /** Since the child process started (its performance.timeOrigin). */
  loadedMs: number;
  readyMs: number;
  startup: StartupStatus;
  maxRssKb: number;
  closeMs: number;
  wallMs: number;
}

function child(args: string[]): { out: Record<string, unknown> | undefined; wallMs: number; status: number | null; signal: string | null } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--import', 'tsx', CHILD, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 26 });
  const wallMs = performance.now() - t0;
  const line = r.stdout.split('\n').find((l) => l.startsWith('{'));
  return { out: line ? (JSON.parse(line) as Record<string, unknown>) : undefined, wallMs, status: r.status, signal: r.signal };
}

function journalLength(dir: string): number {
  const file = join(dir, 'journal.db');
  if (!existsSync(file)) return 0;
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare('SELECT max(seq) AS seq FROM commands').get() as { seq: number | null }).seq ?? 0;
  } finally {
    db.close();
  }
}

function start(label: string): StartResult {
  const r = child(['start', DIR]);
  if (r.status !== 0 || !r.out) throw new Error(`${label}: start failed (status ${r.status})`);
  const res = r.out as unknown as StartResult;
  // Wall time to listening = process wall time minus the clean stop after it (close + exit).
  res.wallMs = res.readyMs;
  return res;
}

const fmt = (ms: number) => (ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`);

function row(label: string, r: StartResult): string {
  const s = r.startup;
  return `| ${label} | ${fmt(r.wallMs)} | ${fmt(s.totalMs)} | ${s.snapshotSeq.toLocaleString('en')} | ${s.replayed.toLocaleString('en')} | ${fmt(s.snapshotReadMs)} | ${fmt(s.snapshotRestoreMs)} | ${fmt(s.replayMs)} | ${s.readModel.projected.toLocaleString('en')} / ${fmt(s.readModel.catchUpMs)} | ${fmt(s.listenMs)} | ${fmt(r.loadedMs)} | ${Math.round(r.maxRssKb / 1024)} MB |`;
}

function median(rs: StartResult[]): StartResult {
  return [...rs].sort((a, b) => a.wallMs - b.wallMs)[Math.floor(rs.length / 2)];
}

// ---------------------------------------------------------------- 1. history

mkdirSync(DIR, { recursive: true });
let have = journalLength(DIR);
if (have !== COMMANDS) {
  if (have !== 0) {
    console.error(`${DIR} holds ${have} commands, not ${COMMANDS}: rebuilding`);
    rmSync(DIR, { recursive: true, force: true });
    mkdirSync(DIR, { recursive: true });
  }
  console.error(`building ${COMMANDS.toLocaleString('en')} commands of history in ${DIR} …`);
  const r = child(['write', DIR, '0', String(COMMANDS), String(SNAPSHOT_EVERY), 'clean']);
  if (r.status !== 0 || !r.out) throw new Error(`history build failed (status ${r.status})`);
  console.error(`  built in ${fmt(r.wallMs)}: ${JSON.stringify(r.out)}`);
  have = COMMANDS;
} else {
  console.error(`reusing ${DIR} (${have.toLocaleString('en')} commands)`);
}

// ---------------------------------------------------------------- 2. measurements

console.error('(a) start after a clean stop …');
const clean: StartResult[] = [];
for (let i = 0; i < REPS; i++) clean.push(start('clean'));

console.error('(c) full replay from zero …');
const snapDir = join(DIR, 'snapshots');
const aside = join(DIR, 'snapshots.aside');
renameSync(snapDir, aside);
let full: StartResult;
try {
  full = start('full replay');
} finally {
  rmSync(snapDir, { recursive: true, force: true });
  renameSync(aside, snapDir);
}

console.error(`(b) SIGKILL with a tail of ${TAIL.toLocaleString('en')} commands …`);
// The tail goes to a copy, so the reused directory keeps exactly COMMANDS commands.
const crashDir = `${DIR}-crash`;
rmSync(crashDir, { recursive: true, force: true });
spawnSync('cp', ['-a', DIR, crashDir]);
const w = spawnSync(process.execPath, ['--import', 'tsx', CHILD, 'write', crashDir, String(COMMANDS), String(COMMANDS + TAIL), '0', 'crash'], { stdio: ['ignore', 'ignore', 'inherit'] });
if (w.signal !== 'SIGKILL') throw new Error(`tail writer should have killed itself, got status ${w.status} signal ${w.signal}`);
const crashStart = (() => {
  const r = child(['start', crashDir]);
  if (r.status !== 0 || !r.out) throw new Error(`crash start failed (status ${r.status})`);
  const res = r.out as unknown as StartResult;
  res.wallMs = res.readyMs;
  return res;
})();
rmSync(crashDir, { recursive: true, force: true });

// ---------------------------------------------------------------- 3. report

const lines = [
  `Start-up with ${COMMANDS.toLocaleString('en')} commands of history (${process.platform}, Node ${process.version}, SIGNATURE_THREADS=${process.env.SIGNATURE_THREADS ?? '2'}, snapshot every ${SNAPSHOT_EVERY.toLocaleString('en')} commands)`,
  '',
  '| start | wall to listening | in startExchange | from snapshot seq | replayed | snapshot read+parse | restore | replay | read model projected / wait | wiring + listen | Node + modules | peak RSS |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|',
  row(`(a) clean stop (median of ${REPS})`, median(clean)),
  row(`(b) SIGKILL, tail ${TAIL.toLocaleString('en')}`, crashStart),
  row('(c) full replay from zero', full),
  '',
  `(a) all runs, wall: ${clean.map((r) => fmt(r.wallMs)).join(', ')}; clean stop after start: ${clean.map((r) => fmt(r.closeMs)).join(', ')}`,
];
console.log(lines.join('\n'));
