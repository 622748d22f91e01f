// Journal benchmark (`npm run bench:journal`). Not a test: prints a markdown table.
//
// The same seeded order commands (bench:engine's workload: limits, cancels, IOC and market orders) appended
// to each journal in groups of BENCH_GROUPS commands (default 1,10,100,1000), each group flushed and its
// flush awaited before the next (a serial writer), then once with BENCH_PIPELINE (default 8) flushes of 100
// in flight as the sequencer overlaps them. A row is at most 2,000 flushes (so groups of 1 stay short). Journals: SQLite on its writer thread (the default; WAL +
// synchronous=FULL: one fsync per group) and JetStream (one message per group on a fresh 1-replica file
// stream on NATS_URL, default nats://127.0.0.1:4222; the stream is deleted after). Reported: commands/s
// durable, p50 and p99 of a flush. BENCH_COMMANDS (default 100,000) per row, BENCH_DIR for SQLite's file,
// BENCH_JOURNALS (default sqlite,jetstream) which journals.
//
// A 1-replica JetStream server acknowledges before it fsyncs unless started with `sync_interval: always`
// (nats-server ≥ 2.10): the last row measures what one fsync of a group-sized write costs on BENCH_DIR's
// disk. To measure sync-every-write on 2.9, point NATS_URL at a server whose store is on a file system
// mounted `-o sync` (docs/performance.md, "JetStream journal").
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import type { Command } from '../src/engine/commands.js';
import { AppendBuffer } from '../src/journal/append-buffer.js';
import { encodeGroups } from '../src/journal/command-group-codec.js';
import { connectNats, NO_NATS_AUTH } from '../src/journal/nats-connection.js';
import { openJetStreamJournal } from '../src/journal/jetstream-journal.js';
import { clusterNames } from '../src/journal/jetstream-names.js';
import type { CommandJournal } from '../src/journal/ports.js';
import { openThreadedSqliteJournal } from '../src/journal/threaded-sqlite-journal.js';
import { engineCommands } from './engine/runs.js';
import { BASE_TS, generateWorkload } from './engine/workload.js';
import { envInt } from './env-int.js';

const COMMANDS = envInt('BENCH_COMMANDS', 100_000);
const GROUPS = (process.env.BENCH_GROUPS ?? '1,10,100,1000').split(',').map(Number);
const PIPELINE = envInt('BENCH_PIPELINE', 8);
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const JOURNALS = (process.env.BENCH_JOURNALS ?? 'sqlite,jetstream').split(',');

interface Row {
  journal: string;
  group: string;
  perSec: number;
  p50: number;
  p99: number;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

/** Appends `commands` from seq 1 in groups of `group`, `depth` flushes in flight; times every flush. */
async function drive(journal: CommandJournal, all: Command[], group: number, depth: number): Promise<Omit<Row, 'journal'>> {
  const latencies: number[] = [];
  const inFlight: Array<Promise<void>> = [];
  let seq = journal.lastSeq();
  const commands = all.slice(0, Math.min(all.length, group * 2000));
  const t0 = performance.now();
  for (let i = 0; i < commands.length; i += group) {
    for (let k = i; k < Math.min(i + group, commands.length); k++) journal.append(++seq, commands[k]);
    const started = performance.now();
    inFlight.push(journal.flush().then(() => void latencies.push(performance.now() - started)));
    if (inFlight.length >= depth) await inFlight.shift();
  }
  await Promise.all(inFlight);
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  return { group: depth > 1 ? `${group} ×${depth} in flight` : String(group), perSec: commands.length / seconds, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
}

type Runs = Array<{ group: number; depth: number }>;

async function sqliteRows(commands: Command[], runs: Runs): Promise<Row[]> {
  const rows: Row[] = [];
  for (const { group, depth } of runs) {
    const dir = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'perpx-journal-bench-'));
    try {
      const journal = await openThreadedSqliteJournal({ file: join(dir, 'journal.db') });
      rows.push({ journal: 'SQLite (writer thread, fsync per group)', ...(await drive(journal, commands, group, depth)) });
      await journal.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return rows;
}

async function jetstreamRows(commands: Command[], runs: Runs): Promise<Row[]> {
  const nc = await connectNats(NATS_URL, 'perpx journal bench', NO_NATS_AUTH);
  const jsm = await jetstreamManager(nc);
  const rows: Row[] = [];
  try {
    for (const { group, depth } of runs) {
      const cluster = `bench_${process.pid}_${group}_${depth}`;
      try {
        const journal = await openJetStreamJournal({ nc, cluster });
        rows.push({ journal: 'JetStream (R1, file, message per group)', ...(await drive(journal, commands, group, depth)) });
        await journal.close();
      } finally {
        await jsm.streams.delete(clusterNames(cluster).commandStream).catch(() => undefined);
      }
    }
  } finally {
    await nc.close();
  }
  return rows;
}

/** Bytes of one JetStream message holding `n` of these commands. */
function groupBytes(commands: Command[], n: number): number {
  const buffer = new AppendBuffer(0, 0);
  for (let i = 0; i < n; i++) buffer.append(i + 1, commands[i]);
  return encodeGroups(buffer.take(), 1 << 20)[0].payload.length;
}

/** What `sync_interval: always` would add per append: a write of one group's bytes plus its fsync. */
function fsyncRow(bytes: number): Row {
  const dir = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'perpx-fsync-bench-'));
  const latencies: number[] = [];
  try {
    const fd = openSync(join(dir, 'f'), 'w');
    const chunk = Buffer.alloc(bytes, 7);
    for (let i = 0; i < 300; i++) {
      const t = performance.now();
      writeSync(fd, chunk);
      fsyncSync(fd);
      latencies.push(performance.now() - t);
    }
    closeSync(fd);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  latencies.sort((a, b) => a - b);
  return { journal: `write + fsync of ${bytes} bytes (BENCH_DIR's disk)`, group: '-', perSec: 1000 / percentile(latencies, 0.5), p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
}

async function main(): Promise<void> {
  const w = generateWorkload({ ops: COMMANDS, seed: 20261128, users: 1000, tsStart: BASE_TS + 100_000, idBase: 0 });
  const commands = engineCommands(w);
  const runs: Runs = [...GROUPS.map((group) => ({ group, depth: 1 })), { group: 100, depth: PIPELINE }];
  const rows = [
    ...(JOURNALS.includes('sqlite') ? await sqliteRows(commands, runs) : []),
    ...(JOURNALS.includes('jetstream') ? await jetstreamRows(commands, runs) : []),
    fsyncRow(groupBytes(commands, 100)),
  ];
  const f = (n: number) => n.toFixed(2);
  console.log(`\n${COMMANDS.toLocaleString('en-US')} commands per row; flush latency in ms\n`);
  console.log('| journal | group | commands/s | flush p50 | flush p99 |');
  console.log('| --- | --- | ---: | ---: | ---: |');
  for (const r of rows) console.log(`| ${r.journal} | ${r.group} | ${Math.round(r.perSec).toLocaleString('en-US')} | ${f(r.p50)} | ${f(r.p99)} |`);
}

await main();
