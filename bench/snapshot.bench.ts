// Snapshot pause benchmark (`npm run bench:snapshot`). Not a test: prints a markdown table.
//
// The engine behind the Sequencer with the threaded SQLite journal (as the app runs it), first filled with
// BENCH_RESTING (default 150,000) resting limit orders, then the seeded mixed workload of bench:engine
// (BENCH_OPS, default 300,000: 55% limit, 35% cancel, 10% market/IOC) submitted as fast as it is
// acknowledged (BENCH_INFLIGHT commands per event-loop turn), with a snapshot every SNAPSHOT_EVERY_COMMANDS
// (default 50,000). Run twice: snapshots captured on the event loop (SNAPSHOT_WRITER=inline) and taken by
// the replica on a worker thread (replica, the app's default). Reported for the mixed phase: throughput,
// acknowledgement latency percentiles and the event loop's longest stall (perf_hooks.monitorEventLoopDelay).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pino from 'pino';
import { createEngine } from '../src/engine/engine.js';
import type { Command } from '../src/engine/commands.js';
import { FileSnapshotStore } from '../src/journal/file-snapshots.js';
import { openThreadedSqliteJournal } from '../src/journal/threaded-sqlite-journal.js';
import { Sequencer } from '../src/sequencer/sequencer.js';
import { ThreadedSnapshotReplica } from '../src/sequencer/snapshot-replica.js';
import { engineCommands, setupCommands } from './engine/runs.js';
import { BASE_TS, generateWorkload } from './engine/workload.js';
import { envInt } from './env-int.js';
import { restingCommands, submitInTurns, type SnapshotBenchRow } from './snapshot-workload.js';

const RESTING = envInt('BENCH_RESTING', 150_000);
const OPS = envInt('BENCH_OPS', 300_000);
const EVERY = envInt('SNAPSHOT_EVERY_COMMANDS', 50_000);
const INFLIGHT = envInt('BENCH_INFLIGHT', 256);
const USERS = 1000;

type Mode = 'inline' | 'replica';

type Row = SnapshotBenchRow<Mode>;


async function run(mode: Mode, resting: Command[], mixed: Command[]): Promise<Row> {
  const dir = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'perpx-snapshot-bench-'));
  const file = join(dir, 'journal.db');
  const snapshotDir = join(dir, 'snapshots');
  const journal = await openThreadedSqliteJournal({ file });
  const snapshots = new FileSnapshotStore({ dir: snapshotDir });
  const replica = mode === 'replica' ? new ThreadedSnapshotReplica({ location: { kind: 'files', journalFile: file, snapshotDir }, keep: 3 }) : undefined;
  let now = BASE_TS;
  const seq = new Sequencer({
    engine: createEngine(), journal, snapshots, replica, snapshotEveryCommands: EVERY, snapshotOnStop: false,
    clock: () => now, logger: pino({ level: 'silent' }),
  });
  const submitAll = (cmds: Command[], lat?: Float64Array) => submitInTurns(seq, (ts) => { now = ts; }, cmds, INFLIGHT, { lat });
  await submitAll(setupCommands(USERS));
  await submitAll(resting);

  const lat = new Float64Array(mixed.length);
  const taken0 = seq.stats.snapshotsTaken;
  const saved0 = seq.stats.snapshotsSaved;
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const t0 = performance.now();
  await submitAll(mixed, lat);
  const sec = (performance.now() - t0) / 1000;
  loop.disable();
  const taken = seq.stats.snapshotsTaken - taken0;
  await seq.stop();
  const saved = seq.stats.snapshotsSaved - saved0;
  await replica?.close();
  await snapshots.close();
  await journal.close();
  rmSync(dir, { recursive: true, force: true });
  lat.sort();
  const pct = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))];
  return {
    mode, opsPerSec: mixed.length / sec, p50: pct(0.5), p99: pct(0.99), p999: pct(0.999), max: lat[lat.length - 1],
    loopMaxMs: loop.max / 1e6, snapshots: taken, saved, failures: seq.stats.snapshotFailures,
  };
}

const fmt = (n: number, d = 1) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

async function main(): Promise<void> {
  console.log(`snapshot bench: ${RESTING.toLocaleString('en-US')} resting orders, then ${OPS.toLocaleString('en-US')} mixed commands, a snapshot every ${EVERY.toLocaleString('en-US')} commands, ${INFLIGHT} per turn, node ${process.version}\n`);
  const resting = restingCommands(RESTING, USERS);
  const w = generateWorkload({ ops: OPS, seed: 20261122, users: USERS, tsStart: BASE_TS + 10_000_000, idBase: 0 });
  const mixed = engineCommands(w);
  const rows: Row[] = [];
  for (const mode of ['inline', 'replica'] as const) rows.push(await run(mode, resting, mixed));
  console.log('| snapshots taken by | cmds/s | ack p50 ms | p99 ms | p99.9 ms | max ms | longest event-loop stall ms | snapshots due / saved in the window |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---|');
  for (const r of rows) {
    console.log(`| ${r.mode === 'inline' ? 'event loop (inline)' : 'replica thread'} | ${fmt(r.opsPerSec, 0)} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} | ${fmt(r.p999, 2)} | ${fmt(r.max, 1)} | ${fmt(r.loopMaxMs, 1)} | ${r.snapshots} / ${r.saved}${r.failures ? ` (${r.failures} failed)` : ''} |`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
