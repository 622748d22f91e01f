/**
 * One setup under the signed-order load: sign the wallets in and fund them from the faucet, then a closed
 * loop of pre-signed POST /api/v2/order/limit over CONNECTIONS keep-alive connections spread over the
 * setup's gateways. At the window's edges it reads every measured process's CPU (by thread kind), the NATS
 * server's and the setup's PostgreSQL backends', the machine's, and the latency histograms.
 */
import type { Wallet } from 'ethers';
import { Bot } from '../../test/app/client.js';
import { postJsonRequest, runLoad, type LoadResult } from '../http/load.js';
import { EMPTY, fromLeader, fromPrometheus, minus, plus, type Hist } from './histograms.js';
import { machineBusyMs, postgresBackendPids, processCpuMs, threadCpuMs } from './proc-cpu.js';
import type { RunningSetup } from './setups.js';

export interface LoadSpec {
  wallets: Wallet[];
  /** Signed order bodies; order i belongs to wallet i % wallets.length. */
  bodies: string[];
  connections: number;
  /** Quiet time before the load: each process's idle CPU, subtracted from the window's (marginal cost). */
  idleMs: number;
  warmupMs: number;
  durationMs: number;
  /** Pid of the NATS server (undefined: not measured). */
  natsPid: number | undefined;
}

/** CPU ms in the window per measured thing: "<role>" (whole process) and "<role>/<thread kind>". */
export type CpuWindow = Map<string, number>;

export interface SetupResult {
  load: LoadResult;
  ok: number;
  rate: number;
  /** CPU ms in the window less what the same thing used idle over as long (its timers, heartbeats, GC). */
  cpu: CpuWindow;
  /** Idle CPU, ms per second, by the same keys. */
  idle: CpuWindow;
  /** Busy CPU of the whole machine in the window, ms; steal ms. */
  machine: { busy: number; steal: number };
  wallMs: number;
  /** Histograms over the window by name (summed over gateways). */
  hist: Map<string, Hist>;
  /** The window on the monotonic clock, µs. */
  windowUs: [number, number];
  /** Journal group commits in the window and the commands they carried. */
  flushes: number;
  flushed: number;
}

const HISTOGRAMS = [
  'perpx_gateway_leader_roundtrip_seconds', 'perpx_gateway_follower_wait_seconds',
  'perpx_command_apply_seconds', 'perpx_command_latency_seconds', 'perpx_journal_fsync_seconds',
];

interface Snapshot {
  cpu: CpuWindow;
  machine: { busy: number; steal: number };
  at: number;
  /** Monotonic clock, µs (the clock of V8's CPU profiles). */
  hrUs: number;
  stats: Promise<{ hist: Map<string, Hist>; flushes: number; flushed: number }>;
}

function readCpu(setup: RunningSetup, natsPid: number | undefined): CpuWindow {
  const cpu: CpuWindow = new Map();
  for (const p of setup.processes) {
    cpu.set(p.role, processCpuMs(p.pid));
    for (const [kind, ms] of threadCpuMs(p.pid)) cpu.set(`${p.role}/${kind}`, ms);
  }
  if (natsPid !== undefined) cpu.set('nats-server', processCpuMs(natsPid));
  for (const pid of postgresBackendPids(setup.databases)) cpu.set(`postgres/${pid}`, processCpuMs(pid));
  return cpu;
}

async function readStats(setup: RunningSetup): Promise<{ hist: Map<string, Hist>; flushes: number; flushed: number }> {
  const hist = new Map<string, Hist>();
  let flushes = 0;
  let flushed = 0;
  for (const text of await setup.metrics()) {
    for (const name of HISTOGRAMS) hist.set(name, plus(hist.get(name) ?? EMPTY, fromPrometheus(text, name)));
    flushes += Number(/^perpx_journal_flushes_total (\S+)$/m.exec(text)?.[1] ?? 0);
    flushed += Number(/^perpx_journal_flushed_commands_total (\S+)$/m.exec(text)?.[1] ?? 0);
  }
  if (setup.leaderStats) {
    // A cluster gateway's own sequencer histograms are empty: the leader's come over NATS.
    const s = await setup.leaderStats();
    hist.set('perpx_command_apply_seconds', fromLeader(s.applyLatency));
    hist.set('perpx_command_latency_seconds', fromLeader(s.ackLatency));
    hist.set('perpx_journal_fsync_seconds', fromLeader(s.flushLatency));
    flushes = s.flushes;
    flushed = s.flushedCommands;
  }
  return { hist, flushes, flushed };
}

function snapshot(setup: RunningSetup, natsPid: number | undefined): Snapshot {
  return { cpu: readCpu(setup, natsPid), machine: machineBusyMs(), at: performance.now(), hrUs: Number(process.hrtime.bigint() / 1000n), stats: readStats(setup) };
}

async function mapLimit<T, R>(items: T[], limit: number, fn: (t: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  }));
  return out;
}

export async function measureSetup(setup: RunningSetup, spec: LoadSpec): Promise<SetupResult> {
  const bots = await mapLimit(spec.wallets, 8, async (w, i) => {
    const bot = await new Bot(setup.urls[i % setup.urls.length], w).signIn();
    await bot.faucet();
    return bot;
  });
  const idle0 = readCpu(setup, spec.natsPid);
  const tIdle = performance.now();
  await new Promise((r) => setTimeout(r, spec.idleMs));
  const idle1 = readCpu(setup, spec.natsPid);
  const idle: CpuWindow = new Map();
  for (const [k, v] of idle1) idle.set(k, ((v - (idle0.get(k) ?? 0)) * 1000) / (performance.now() - tIdle));
  const first = new URL(setup.urls[0]);
  const targets = setup.urls.map((u) => ({ host: new URL(u).hostname, port: Number(new URL(u).port) }));
  const headers = bots.map((b) => ({ Authorization: `Bearer ${b.accessToken}` }));
  const requests = spec.bodies.map((body, i) => postJsonRequest(first.hostname, Number(first.port), '/api/v2/order/limit', body, headers[i % headers.length]));
  let next = 0;
  let start: Snapshot | undefined;
  let end: Snapshot | undefined;
  const load = await runLoad({
    host: targets[0].host, port: targets[0].port, targets, connections: spec.connections, mode: 'closed',
    warmupMs: spec.warmupMs, durationMs: spec.durationMs,
    next: () => (next < requests.length ? requests[next++] : null),
    onWindow: (phase) => {
      if (phase === 'start') start = snapshot(setup, spec.natsPid);
      else end = snapshot(setup, spec.natsPid);
    },
  });
  if (!start || !end) throw new Error('the load generator reported no measurement window');
  const cpu: CpuWindow = new Map();
  for (const [k, v] of end.cpu) {
    const before = start.cpu.get(k) ?? (k.startsWith('postgres/') ? 0 : NaN); // a backend opened in the window
    cpu.set(k, v - before - ((idle.get(k) ?? 0) * (end.at - start.at)) / 1000);
  }
  const [s0, s1] = [await start.stats, await end.stats];
  const hist = new Map<string, Hist>();
  for (const [name, h] of s1.hist) hist.set(name, minus(h, s0.hist.get(name) ?? EMPTY));
  const ok = Object.entries(load.status).reduce((s, [k, v]) => (k.startsWith('2') ? s + v : s), 0);
  return {
    load, ok, rate: (ok / load.windowMs) * 1000, cpu, idle,
    machine: { busy: end.machine.busy - start.machine.busy, steal: end.machine.steal - start.machine.steal },
    wallMs: end.at - start.at, windowUs: [start.hrUs, end.hrUs], hist, flushes: s1.flushes - s0.flushes, flushed: s1.flushed - s0.flushed,
  };
}
