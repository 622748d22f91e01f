// Read-model projection cost of the HTTP bench's order stream, without HTTP (not a test):
//   node --import tsx bench/projector-cost.ts
// The engine applies signed-limit-order commands like bench:http (3a) sends (128 users, BTCUSDT, qty 0.0001,
// resting buys below / sells above the mid) and the event batches are projected into a fresh SQLite read
// model through Projector.project in groups of PROJ_GROUP commands (the live feed's group at ~7k orders/s),
// on this thread. Prints CPU µs per projected command (this thread only), median of PROJ_REPS timed runs.
// Env: PROJ_ORDERS (60000 per run), PROJ_PREFILL (orders projected before timing, 60000), PROJ_GROUP (30),
// PROJ_REPS (3), PROJ_DROP_INDEXES (comma list of index names to drop first, to price each index).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine } from '../src/engine/engine.js';
import type { Command } from '../src/engine/commands.js';
import { DEMO_INSTRUMENTS, DEMO_START_PRICES } from '../src/domain/instrument.js';
import { parseUnits } from '../src/domain/fixed.js';
import { orderIdPrefix } from '../src/domain/order-id.js';
import { openReadStore } from '../src/store/index.js';
import type { ProjectionBatch } from '../src/store/projector.js';
import { mulberry32 } from '../src/simulation/seeded-random.js';
import { sql } from 'kysely';

const env = process.env;
const ORDERS = Number(env.PROJ_ORDERS ?? 60_000);
const PREFILL = Number(env.PROJ_PREFILL ?? 60_000);
const GROUP = Number(env.PROJ_GROUP ?? 30);
const REPS = Number(env.PROJ_REPS ?? 3);
const USERS = 128;
const DROP = (env.PROJ_DROP_INDEXES ?? '').split(',').map((s) => s.trim()).filter(Boolean);

function threadCpuMs(): number {
  const stat = readFileSync(`/proc/thread-self/stat`, 'latin1');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

/** CPU ms of every kernel thread (children of kthreadd: writeback, kworkers), where I/O work deferred by the kernel shows up. */
function kernelThreadsCpuMs(): number {
  let total = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (f[1] !== '2') continue;
      total += (Number(f[11]) + Number(f[12])) * 10;
    } catch {
      // gone
    }
  }
  return total;
}

function makeBatches(total: number): ProjectionBatch[] {
  const engine = createEngine();
  let ts = Date.now();
  const out: ProjectionBatch[] = [];
  const apply = (c: Record<string, unknown>) => {
    const cmd = { ...c, ts: ts++ } as unknown as Command;
    const r = engine.apply(cmd);
    return { seq: engine.seq, ts: cmd.ts, events: r.events } as ProjectionBatch;
  };
  for (const inst of DEMO_INSTRUMENTS) out.push(apply({ kind: 'instrument.upsert', config: inst }));
  for (const inst of DEMO_INSTRUMENTS) {
    const p = DEMO_START_PRICES[inst.id];
    if (p) out.push(apply({ kind: 'price.tick', instrument: inst.id, indexPrice: parseUnits(p) }));
  }
  for (let u = 1; u <= USERS; u++) out.push(apply({ kind: 'funds.deposit', userId: u, amount: String(10_000_000n * 100_000_000n), transferId: `t${u}` }));
  const rnd = mulberry32(3);
  let n = 0;
  for (let i = 0; i < total; i++) {
    const side = i % 2 === 0 ? 'BUY' : 'SELL';
    const off = 1 + Math.floor(rnd() * 20_000);
    const tenths = side === 'BUY' ? 1_000_000 - off : 1_000_000 + off;
    const id = `${orderIdPrefix(ts)}:${(n++).toString(16).padStart(26, '0')}`;
    const b = apply({
      kind: 'order.place', userId: 1 + (i % USERS),
      order: { id, instrument: 'BTCUSDT', side, type: 'LIMIT', timeInForce: 'GTC', leverage: 10, quantity: 10_000, limitPrice: tenths * 10_000_000, postOnly: false, group: 'manually' },
    });
    out.push(b);
  }
  return out;
}

async function run(batches: ProjectionBatch[], setup: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'proj-cost-'));
  const store = await openReadStore({ kind: 'sqlite', file: join(dir, 'read.db') });
  try {
    for (const name of DROP) await sql.raw(`drop ${name.startsWith('trigger:') ? 'trigger' : 'index'} if exists ${name.replace(/^trigger:/, '')}`).execute(store.db);
    for (let i = 0; i < setup; i += 1000) await store.projector.project(batches.slice(i, Math.min(setup, i + 1000)));
    const perf = env.PROJ_PERF ? spawn('perf', ['record', '-e', 'cpu-clock', '-F', '999', '-g', '-p', String(process.pid), '-o', env.PROJ_PERF], { stdio: 'ignore' }) : undefined;
    if (perf) await new Promise((r) => setTimeout(r, 1000));
    // WAL frames written per command (a contention-free proxy of the cost): autocheckpoint off while timed.
    const wal = join(dir, 'read.db-wal');
    const frames = () => { try { return Math.max(0, (statSync(wal).size - 32) / (4096 + 24)); } catch { return 0; } };
    if (env.PROJ_FRAMES === '1') await sql.raw('pragma wal_checkpoint(truncate)').execute(store.db);
    if (env.PROJ_FRAMES === '1') await sql.raw('pragma wal_autocheckpoint = 0').execute(store.db);
    const f0 = frames();
    // Under `valgrind --tool=callgrind --instr-atstart=no`: count instructions of the timed part only.
    if (env.PROJ_CALLGRIND === '1') spawnSync('callgrind_control', ['-i', 'on', String(process.pid)], { stdio: 'ignore' });
    const k0 = kernelThreadsCpuMs();
    const c0 = threadCpuMs();
    const t0 = performance.now();
    for (let i = setup; i < batches.length; i += GROUP) await store.projector.project(batches.slice(i, i + GROUP));
    const cpu = threadCpuMs() - c0;
    const wall = performance.now() - t0;
    const f1 = frames();
    if (env.PROJ_CALLGRIND === '1') spawnSync('callgrind_control', ['-i', 'off', String(process.pid)], { stdio: 'ignore' });
    // Writeback the kernel does later for this run's writes (synchronous=OFF defers it there).
    await store.close();
    await new Promise((r) => setTimeout(r, 200));
    const kernel = kernelThreadsCpuMs() - k0;
    if (perf) {
      perf.kill('SIGINT');
      await new Promise((r) => perf.once('exit', r));
    }
    const n = batches.length - setup;
    console.log(`  ${n} commands: ${((cpu * 1000) / n).toFixed(1)} µs CPU/cmd, ${((wall * 1000) / n).toFixed(1)} µs wall/cmd${env.PROJ_FRAMES === '1' ? `, ${((f1 - f0) / n).toFixed(2)} WAL frames/cmd` : ''}, kernel threads ${((kernel * 1000) / n).toFixed(1)} µs/cmd`);
    return (cpu * 1000) / n;
  } finally {
    await store.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

const batches = makeBatches(PREFILL + ORDERS);
const setup = batches.length - ORDERS;
const kinds = new Map<string, number>();
for (const b of batches.slice(setup)) for (const e of b.events) kinds.set(e.type, (kinds.get(e.type) ?? 0) + 1);
console.log(`projector-cost: ${ORDERS} order commands after ${setup} set-up ones, groups of ${GROUP}; events per command: ${[...kinds].map(([k, v]) => `${k} ${(v / ORDERS).toFixed(2)}`).join(', ')}${DROP.length ? `; dropped ${DROP.join(', ')}` : ''}`);
const results: number[] = [];
for (let r = 0; r < REPS; r++) results.push(await run(batches, setup));
results.sort((a, b) => a - b);
console.log(`median ${results[Math.floor(results.length / 2)]!.toFixed(1)} µs CPU/cmd (min ${results[0]!.toFixed(1)})`);
