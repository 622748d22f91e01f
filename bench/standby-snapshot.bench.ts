// Standby snapshot benchmark (`npm run bench:standby-snapshot`). Not a test: prints a markdown table.
//
// The leader as the cluster runs it: the Sequencer on the JetStream command log (real NATS, a fresh cluster
// name, deleted after) with snapshots in the cluster's object store, first filled with BENCH_RESTING (default
// 50,000) resting limit orders, then BENCH_OPS (default 150,000) commands of bench:engine's mixed workload
// submitted BENCH_INFLIGHT per turn at BENCH_RATE commands/s (default 20,000; 0 = as fast as acknowledged), a snapshot due every
// SNAPSHOT_EVERY_COMMANDS (default 25,000). Three runs, in one invocation: snapshots captured on the leader's
// event loop (inline), by the leader's replica thread (replica), and by a hot standby in another process
// (standby: src/cluster/standby-snapshots.ts; the leader only checks the bucket). Reported for the mixed
// phase: leader throughput, acknowledgement latency percentiles, the leader's longest event-loop stall.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pino from 'pino';
import { createEngine } from '../src/engine/engine.js';
import type { Command } from '../src/engine/commands.js';
import { openJetStreamJournal } from '../src/journal/jetstream-journal.js';
import { NO_NATS_AUTH } from '../src/journal/nats-connection.js';
import { openObjectStoreSnapshots } from '../src/journal/object-store-snapshots.js';
import { Sequencer } from '../src/sequencer/sequencer.js';
import { ThreadedSnapshotReplica } from '../src/sequencer/snapshot-replica.js';
import { StandbyFirstReplica } from '../src/sequencer/standby-first-replica.js';
import { deleteClusterStreams } from '../scripts/cluster/cluster-resources.js';
import { engineCommands, setupCommands } from './engine/runs.js';
import { BASE_TS, generateWorkload } from './engine/workload.js';
import { envInt } from './env-int.js';
import { restingCommands, submitInTurns, type SnapshotBenchRow } from './snapshot-workload.js';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const RESTING = envInt('BENCH_RESTING', 50_000);
const OPS = envInt('BENCH_OPS', 150_000);
const EVERY = envInt('SNAPSHOT_EVERY_COMMANDS', 25_000);
const INFLIGHT = envInt('BENCH_INFLIGHT', 256);
/** Mixed phase pace, commands/s (0 = as fast as acknowledged): a standby must be able to follow the leader. */
const RATE = envInt('BENCH_RATE', 20_000);
const USERS = 1000;

type Mode = 'inline' | 'replica' | 'standby';

interface Row extends SnapshotBenchRow<Mode> {
  leftToStandby: number;
}


/** The standby process, following the log from the start; resolves once it follows. */
async function startStandby(cluster: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/standby-snapshot-follower.ts', cluster, String(EVERY)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  await new Promise<void>((resolve, reject) => {
    lines.once('line', () => resolve());
    child.once('exit', (code) => reject(new Error(`standby exited with ${code}`)));
  });
  return child;
}

async function stopStandby(child: ChildProcess): Promise<string> {
  const lines = createInterface({ input: child.stdout! });
  const stats = new Promise<string>((resolve) => lines.once('line', resolve));
  child.kill('SIGTERM');
  return stats;
}

async function run(nc: NatsConnection, mode: Mode, resting: Command[], mixed: Command[]): Promise<Row> {
  const cluster = `bench_snap_${randomBytes(4).toString('hex')}`;
  const journal = await openJetStreamJournal({ nc, cluster, replicas: 1 });
  const snapshots = await openObjectStoreSnapshots({ nc, cluster });
  const threaded = mode === 'inline' ? undefined : new ThreadedSnapshotReplica({ location: { kind: 'jetstream', natsUrl: NATS_URL, cluster, replicas: 1, auth: NO_NATS_AUTH }, keep: 3 });
  const replica = mode === 'standby' && threaded
    ? new StandbyFirstReplica({ store: snapshots, fallback: threaded, everyCommands: EVERY, everyMs: 0 })
    : threaded;
  const standby = mode === 'standby' ? await startStandby(cluster) : undefined;
  let now = BASE_TS;
  const seq = new Sequencer({
    engine: createEngine(), journal, snapshots, replica, snapshotEveryCommands: EVERY, snapshotOnStop: false,
    clock: () => now, logger: pino({ level: 'silent' }),
  });
  const submitAll = (cmds: Command[], lat?: Float64Array, rate = 0) => submitInTurns(seq, (ts) => { now = ts; }, cmds, INFLIGHT, { lat, rate });
  await submitAll(setupCommands(USERS));
  await submitAll(resting);
  // Every mode pauses the same before the measured phase: the standby catches up with the preload, as it is at any steady state.
  await new Promise((r) => setTimeout(r, 5000));

  const lat = new Float64Array(mixed.length);
  const taken0 = seq.stats.snapshotsTaken;
  const saved0 = seq.stats.snapshotsSaved;
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const t0 = performance.now();
  await submitAll(mixed, lat, RATE);
  const sec = (performance.now() - t0) / 1000;
  loop.disable();
  const taken = seq.stats.snapshotsTaken - taken0;
  await seq.stop();
  const saved = seq.stats.snapshotsSaved - saved0;
  await replica?.close();
  const standbyStats = standby ? await stopStandby(standby) : undefined;
  if (standbyStats) console.log(`standby: ${standbyStats}`);
  await snapshots.close();
  await journal.close();
  await deleteClusterStreams(NATS_URL, cluster).catch(() => undefined);
  lat.sort();
  const pct = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))];
  return {
    mode, opsPerSec: mixed.length / sec, p50: pct(0.5), p99: pct(0.99), p999: pct(0.999), max: lat[lat.length - 1],
    loopMaxMs: loop.max / 1e6, snapshots: taken, saved, failures: seq.stats.snapshotFailures,
    leftToStandby: seq.stats.snapshotsLeftToStandby,
  };
}

const fmt = (n: number, d = 1) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

const LABELS: Record<Mode, string> = { inline: 'leader event loop (inline)', replica: 'leader replica thread', standby: 'standby process' };

async function main(): Promise<void> {
  console.log(`standby snapshot bench (JetStream log, object store): ${RESTING.toLocaleString('en-US')} resting orders, then ${OPS.toLocaleString('en-US')} mixed commands, a snapshot every ${EVERY.toLocaleString('en-US')} commands, ${INFLIGHT} per turn, paced at ${RATE ? `${RATE.toLocaleString('en-US')} commands/s` : 'full speed'}, node ${process.version}\n`);
  const resting = restingCommands(RESTING, USERS);
  const w = generateWorkload({ ops: OPS, seed: 20261122, users: USERS, tsStart: BASE_TS + 10_000_000, idBase: 0 });
  const mixed = engineCommands(w);
  const nc = await connect({ servers: NATS_URL, name: 'bench standby-snapshot' });
  const rows: Row[] = [];
  for (const mode of ['inline', 'replica', 'standby'] as const) rows.push(await run(nc, mode, resting, mixed));
  await nc.close();
  console.log('| snapshots taken by | cmds/s | ack p50 ms | p99 ms | p99.9 ms | max ms | longest event-loop stall ms | due / saved by the leader / left to the standby |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---|');
  for (const r of rows) {
    console.log(`| ${LABELS[r.mode]} | ${fmt(r.opsPerSec, 0)} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} | ${fmt(r.p999, 2)} | ${fmt(r.max, 1)} | ${fmt(r.loopMaxMs, 1)} | ${r.snapshots} / ${r.saved} / ${r.leftToStandby}${r.failures ? ` (${r.failures} failed)` : ''} |`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
