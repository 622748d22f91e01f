// HTTP benchmark (`npm run bench:http`). Not a test: prints a markdown table.
//
// (1) ceiling: EIP-712 digest + native secp256k1 recovery on every core, no HTTP (worker threads);
// (2) a hello-world Fastify route; (3) signed limit-order creation, POST /api/v2/order/limit, with many
// connections: (3a) closed loop = max rate, (3b) open loop at the target rate = latency at that load;
// (4) GET /api/market/BTCUSDT/deep on the book (3) left behind.
//
// The servers (hello-world Fastify, then the whole exchange via startExchange, with its signature
// worker threads) run in this process; the load generator (bench/http/load.ts, raw keep-alive sockets)
// runs in a forked child. On a 2-core machine they share the cores: the numbers include that.
//
// Environment knobs (all optional): DURATION_MS (10000 per measured stage), CONNECTIONS (100),
// OPEN_CONNECTIONS (256, stage 3b), TARGET_RATE (max(8000, 60 % of (1))), WALLETS (128),
// SIGNATURE_THREADS (2), PRICE_LEVELS (20000 per side = ±2 %), AUTH (jwt | apikey: how orders
// authenticate, default the Bearer access JWT), CPU_PROF=1 (profile the server's main
// thread during (3a) and (4), write .cpuprofile files to the temp dir and print self-time summaries;
// profiling costs some throughput, so compare numbers from runs without it), ALLOC_PROF=1 (instead: bytes
// allocated per request by function on the main thread, garbage included: where the GC work comes from).
// Stage notes split the server's CPU per request by thread: main, the exchange's worker threads (journal
// writer, read-model projector, signature workers) and Node/V8's own helpers (GC, compiler).
//
// Orders are pre-signed in the load-generator process before the stage that sends them: a first batch
// for a short calibration run (which also warms up the server), then top-ups sized from the measured rate.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import Fastify from 'fastify';
import { Wallet, verifyTypedData } from 'ethers';
import { SiweMessage } from 'siwe';
import { runClientProcess, type FromClient, type Target, type ToClient } from './http/client.js';
import { percentile, type LoadResult } from './http/load.js';
import { orderMessage, orderSpec, signOrder, checkWithEthers } from './http/orders.js';
import { mulberry32 } from '../src/simulation/seeded-random.js';
import { firstMessage, startTsWorker } from './http/worker-boot.js';
import { AllocationSampler, CpuProfiler, summarize, type Profile } from './http/cpu-profile.js';
import type { CeilingWorkerData, CeilingWorkerResult } from './http/ceiling-worker.js';
import { eip712Domain, types } from '../src/signing/eip712.js';
import { secp256k1Backend } from '../src/signing/secp256k1-backend.js';
import { keccakBackend } from '../src/signing/keccak.js';
import type { SequencerStats } from '../src/sequencer/stats.js';
import { RAISED_BUDGET_ENV } from './raised-budgets.js';

const env = process.env;
const DURATION_MS = Number(env.DURATION_MS ?? 10_000);
const CONNECTIONS = Number(env.CONNECTIONS ?? 100);
const OPEN_CONNECTIONS = Number(env.OPEN_CONNECTIONS ?? 256);
const WALLETS = Number(env.WALLETS ?? 128);
const SIGNATURE_THREADS = env.SIGNATURE_THREADS ?? '2';
const PRICE_LEVELS = Number(env.PRICE_LEVELS ?? 20_000);
const CPU_PROF = env.CPU_PROF === '1';
const ALLOC_PROF = env.ALLOC_PROF === '1';
const AUTH: 'jwt' | 'apikey' = env.AUTH === 'apikey' ? 'apikey' : 'jwt';
const CHAIN_ID = '16182';
const HOST = '127.0.0.1';
const DEPTH_PATH = '/api/market/BTCUSDT/deep?maxLevel=20&roundPrice=0.1';
const WARMUP = { ceiling: 1000, hello: 2000, orders: 2000, ordersOpen: 2000, depth: 2000 };

// ------------------------------------------------------------------ formatting

const fmt = (n: number, d = 0) =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }) : 'n/a';
const ms = (n: number) => (Number.isFinite(n) ? (n < 1 ? n.toFixed(3) : n < 10 ? n.toFixed(2) : n.toFixed(1)) : 'n/a');
const log = (s: string) => console.log(s);

// ------------------------------------------------------------------ machine CPU (other processes)

interface MachineCpu {
  /** user + nice + system of every process, ms */
  proc: number;
  /** interrupt + softirq time (loopback TCP is mostly softirq), ms */
  irq: number;
  /** time the hypervisor gave to someone else, ms */
  steal: number;
}

/** Busy CPU time of the whole machine so far (Linux /proc/stat, USER_HZ = 100); NaN elsewhere. */
function machineCpu(): MachineCpu {
  try {
    const f = readFileSync('/proc/stat', 'latin1').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = f;
    return { proc: (user + nice + system) * 10, irq: (irq + softirq) * 10, steal: (steal ?? 0) * 10 };
  } catch {
    return { proc: NaN, irq: NaN, steal: NaN };
  }
}

/** CPU ms used so far by this process's main thread (Linux /proc/self/task/<pid>/stat); NaN elsewhere. */
function mainThreadCpuMs(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'latin1');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10; // utime + stime, USER_HZ = 100
  } catch {
    return NaN;
  }
}

/** CPU ms used so far by every thread of this process, by OS thread id (Linux); empty elsewhere. */
function threadCpuMs(): Map<number, number> {
  const out = new Map<number, number>();
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      try {
        const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        out.set(Number(tid), (Number(f[11]) + Number(f[12])) * 10);
      } catch {
        // the thread ended between readdir and read
      }
    }
  } catch {
    // not Linux
  }
  return out;
}

/** The thread's name: the exchange's workers name themselves (src/workers/thread-name.ts). */
function threadName(tid: number): string {
  try {
    const comm = readFileSync(`/proc/self/task/${tid}/comm`, 'latin1').trim();
    if (comm.startsWith('perpx-')) return comm.slice('perpx-'.length);
  } catch {
    // the thread ended
  }
  return 'Node/V8 helpers (GC, compiler, libuv pool)';
}

/** "projector 40, signature 80, … µs CPU/req": each kind of thread except the main one (same names summed). */
function threadNote(a: Map<number, number>, b: Map<number, number>, requests: number): string {
  const perReq = new Map<string, number>();
  for (const [tid, ms] of b) {
    if (tid === process.pid) continue;
    const d = ms - (a.get(tid) ?? 0);
    const name = threadName(tid);
    perReq.set(name, (perReq.get(name) ?? 0) + (d * 1000) / Math.max(1, requests));
  }
  return [...perReq]
    .filter(([, us]) => us >= 0.5)
    .sort((x, y) => y[1] - x[1])
    .map(([name, us]) => `${name} ${fmt(us)}`)
    .join(', ');
}

function machineDelta(a: MachineCpu, b: MachineCpu): MachineCpu {
  return { proc: b.proc - a.proc, irq: b.irq - a.irq, steal: b.steal - a.steal };
}

/** Stages during which other processes took a notable share of the CPU (the numbers are then low). */
const contended: string[] = [];

/** "other processes N %" (+ irq / steal when notable), from machine CPU minus this bench's processes. */
function othersNote(stageName: string, m: MachineCpu, mineMs: number, wallMs: number): string {
  const pct = (x: number) => fmt((100 * x) / wallMs);
  const others = Math.max(0, m.proc - mineMs);
  if ((100 * (others + m.steal)) / wallMs > 15) contended.push(`${stageName} (${pct(others + m.steal)} %)`);
  let s = `other processes ${pct(others)} %`;
  if ((100 * m.irq) / wallMs >= 5) s += `, softirq ${pct(m.irq)} %`;
  if ((100 * m.steal) / wallMs >= 5) s += `, steal ${pct(m.steal)} %`;
  return s;
}

// ------------------------------------------------------------------ stage 1: the ceiling

interface CeilingResult {
  /** CPU used by other processes on the machine during the window */
  others: string;
  rate: number;
  p50: number;
  p99: number;
  threads: number;
}

async function ceiling(threads: number, warmupMs: number, durationMs: number): Promise<CeilingResult> {
  const wallet = Wallet.createRandom();
  const key = Buffer.from(wallet.privateKey.slice(2), 'hex');
  const rnd = mulberry32(7);
  const samples = Array.from({ length: 256 }, (_, i) => {
    const spec = orderSpec(i, PRICE_LEVELS, rnd);
    return { message: orderMessage(spec, CHAIN_ID), signature: signOrder(spec, CHAIN_ID, key), spec };
  });
  checkWithEthers(samples[0].spec, CHAIN_ID, samples[0].signature, wallet.address);
  const data: CeilingWorkerData = {
    chainId: CHAIN_ID,
    samples: samples.map(({ message, signature }) => ({ message, signature })),
    address: wallet.address.toLowerCase(),
    warmupMs,
    durationMs,
  };
  const workers = Array.from({ length: threads }, () => startTsWorker(new URL('./http/ceiling-worker.ts', import.meta.url), data));
  await Promise.all(workers.map((w) => firstMessage<{ type: 'ready' }>(w)));
  const busy0 = machineCpu();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const results = await Promise.all(
    workers.map((w) => {
      const r = firstMessage<CeilingWorkerResult>(w);
      w.postMessage('go');
      return r;
    }),
  );
  const wall = performance.now() - t0;
  const c = process.cpuUsage(cpu0);
  const others = othersNote(`(1) ${threads} thread(s)`, machineDelta(busy0, machineCpu()), (c.user + c.system) / 1000, wall);
  await Promise.all(workers.map((w) => w.terminate()));
  const rate = results.reduce((s, r) => s + (r.ops / r.elapsedMs) * 1000, 0);
  const all = new Float64Array(results.reduce((s, r) => s + r.ops, 0));
  let off = 0;
  for (const r of results) {
    all.set(r.latencies, off);
    off += r.latencies.length;
  }
  all.sort();
  return { rate, p50: percentile(all, 50), p99: percentile(all, 99), threads, others };
}

/** ethers.verifyTypedData for reference (the slow path the issue mentions). */
function ethersRate(durationMs: number): number {
  const wallet = Wallet.createRandom();
  const key = Buffer.from(wallet.privateKey.slice(2), 'hex');
  const rnd = mulberry32(9);
  const samples = Array.from({ length: 32 }, (_, i) => {
    const spec = orderSpec(i, PRICE_LEVELS, rnd);
    return { message: orderMessage(spec, CHAIN_ID), signature: signOrder(spec, CHAIN_ID, key) };
  });
  const domain = eip712Domain(CHAIN_ID);
  const t = types['New limit order'];
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < durationMs) {
    const s = samples[n % samples.length];
    verifyTypedData(domain, t, s.message, s.signature);
    n++;
  }
  return (n / (performance.now() - t0)) * 1000;
}

// ------------------------------------------------------------------ the load-generator child

class ClientProc {
  readonly child: ChildProcess;
  private waiters: Array<{ type: FromClient['type']; resolve: (m: FromClient) => void; reject: (e: Error) => void }> = [];
  onWindow: (id: number, phase: 'start' | 'end') => void = () => undefined;
  private nextId = 1;

  constructor() {
    this.child = fork(process.argv[1], [], { env: { ...env, HTTP_BENCH_ROLE: 'client' }, execArgv: process.execArgv });
    this.child.on('message', (m: FromClient) => {
      if (m.type === 'window') return this.onWindow(m.id, m.phase);
      if (m.type === 'error') {
        const w = this.waiters.shift();
        if (w) w.reject(new Error(`load generator: ${m.message}`));
        else console.error(`load generator: ${m.message}`);
        return;
      }
      const i = this.waiters.findIndex((w) => w.type === m.type);
      if (i >= 0) this.waiters.splice(i, 1)[0].resolve(m);
    });
    this.child.on('exit', (code) => {
      for (const w of this.waiters.splice(0)) w.reject(new Error(`load generator exited (${code})`));
    });
  }

  ask<T extends FromClient['type']>(msg: ToClient, reply: T): Promise<Extract<FromClient, { type: T }>> {
    return new Promise((resolve, reject) => {
      this.waiters.push({ type: reply, resolve: resolve as (m: FromClient) => void, reject });
      this.child.send(msg);
    });
  }

  ready(): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.waiters.push({ type: 'hello', resolve, reject });
    });
  }

  newId(): number {
    return this.nextId++;
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.send({ type: 'exit' } satisfies ToClient);
    await Promise.race([exited, new Promise((r) => setTimeout(r, 2000))]);
    if (this.child.exitCode === null) this.child.kill();
  }
}

interface ServerWindow {
  cpuMs: number;
  /** CPU of the main thread alone (the event loop: HTTP, auth, engine, journal, read model) */
  mainCpuMs: number;
  elu: number;
  wallMs: number;
  /** CPU of the whole machine in the window (server + load generator + anything else) */
  machine: MachineCpu;
  /** CPU per thread at the window's start and end */
  threads0: Map<number, number>;
  threads1: Map<number, number>;
}

interface StageRun {
  load: LoadResult;
  server: ServerWindow;
  poolLeft: number;
  profile?: string;
}

/** Runs one load stage in the child; snapshots this (server) process's CPU and event loop in the window. */
async function stage(
  client: ClientProc,
  target: Target,
  spec: Omit<Extract<ToClient, { type: 'load' }>, 'type' | 'id' | 'target'>,
  opts: { profileTo?: string } = {},
): Promise<StageRun> {
  const id = client.newId();
  let cpu0 = process.cpuUsage();
  let elu0 = performance.eventLoopUtilization();
  let t0 = 0;
  let busy0 = machineCpu();
  let main0 = 0;
  const server: ServerWindow = {
    cpuMs: NaN, mainCpuMs: NaN, elu: NaN, wallMs: NaN, machine: { proc: NaN, irq: NaN, steal: NaN }, threads0: new Map(), threads1: new Map(),
  };
  let profiler: CpuProfiler | undefined;
  let profileDone: Promise<Profile> | undefined;
  let sampler: AllocationSampler | undefined;
  client.onWindow = (wid, phase) => {
    if (wid !== id) return;
    if (phase === 'start') {
      cpu0 = process.cpuUsage();
      elu0 = performance.eventLoopUtilization();
      t0 = performance.now();
      busy0 = machineCpu();
      main0 = mainThreadCpuMs();
      server.threads0 = threadCpuMs();
      if (opts.profileTo && ALLOC_PROF) {
        sampler = new AllocationSampler();
        void sampler.start();
      } else if (opts.profileTo) {
        profiler = new CpuProfiler();
        void profiler.start();
      }
    } else {
      const c = process.cpuUsage(cpu0);
      server.cpuMs = (c.user + c.system) / 1000;
      server.elu = performance.eventLoopUtilization(elu0).utilization;
      server.wallMs = performance.now() - t0;
      server.machine = machineDelta(busy0, machineCpu());
      server.mainCpuMs = mainThreadCpuMs() - main0;
      server.threads1 = threadCpuMs();
      if (profiler && opts.profileTo) profileDone = profiler.stop(opts.profileTo);
    }
  };
  const res = await client.ask({ type: 'load', id, target, ...spec }, 'result');
  const profile = profileDone
    ? summarize(await profileDone, 30, res.result.completed)
    : sampler
      ? await sampler.stop(res.result.completed)
      : undefined;
  return { load: res.result, server, poolLeft: res.poolLeft, profile };
}

// ------------------------------------------------------------------ exchange helpers

async function json(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!res.ok) throw new Error(`${res.url} → ${res.status} ${text}`);
  return JSON.parse(text);
}

async function signIn(url: string, wallet: Wallet): Promise<{ token: string; apiKey?: string; exchangeId: number }> {
  const { nonce } = (await json(await fetch(`${url}/auth/nonce`))) as { nonce: string };
  const message = new SiweMessage({
    domain: 'evedex.com',
    address: wallet.address,
    statement: 'Sign in to evedex.com',
    uri: 'https://evedex.com',
    version: '1',
    chainId: Number(CHAIN_ID),
    nonce,
  }).prepareMessage();
  const signature = await wallet.signMessage(message);
  const res = (await json(
    await fetch(`${url}/auth/user/sign-up`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ wallet: wallet.address, message, nonce, signature }),
    }),
  )) as { token: { accessToken: string } };
  const token = res.token.accessToken;
  // The session record has no exchangeId; /api/user/me does.
  const me = (await json(await fetch(`${url}/api/user/me`, { headers: { authorization: `Bearer ${token}` } }))) as { exchangeId: number };
  if (AUTH !== 'apikey') return { token, exchangeId: me.exchangeId };
  const key = (await json(
    await fetch(`${url}/api/user/api-key`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'http-bench' }),
    }),
  )) as { apiKey: string };
  return { token, apiKey: key.apiKey, exchangeId: me.exchangeId };
}

async function mapLimit<T, R>(items: T[], limit: number, fn: (t: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

interface SeqSnap {
  flushes: number;
  flushed: number;
  flushSum: number;
  applySum: number;
  applyCount: number;
  snapshots: number;
  snapshotMax: number;
}
function seqSnap(s: SequencerStats): SeqSnap {
  return {
    flushes: s.flushes,
    flushed: s.flushedCommands,
    flushSum: s.flushLatency.sum,
    applySum: s.applyLatency.sum,
    applyCount: s.applyLatency.count,
    snapshots: s.snapshotsTaken,
    snapshotMax: s.snapshotCaptureLatency.max,
  };
}
function seqNote(a: SeqSnap, b: SeqSnap): string {
  const flushes = b.flushes - a.flushes;
  const cmds = b.flushed - a.flushed;
  const apply = b.applyCount - a.applyCount;
  const parts = [
    `journal: ${fmt(flushes)} flushes, ${fmt(cmds / Math.max(1, flushes), 1)} cmds/flush, ${ms(((b.flushSum - a.flushSum) / Math.max(1, flushes)) * 1000)} ms/flush`,
    `engine apply ${fmt(((b.applySum - a.applySum) / Math.max(1, apply)) * 1e6, 1)} µs/cmd`,
  ];
  if (b.snapshots > a.snapshots) parts.push(`${b.snapshots - a.snapshots} snapshot(s), capture max ${ms(b.snapshotMax * 1000)} ms`);
  return parts.join('; ');
}

// ------------------------------------------------------------------ main

interface Row {
  stage: string;
  rps: number;
  p50: number;
  p99: number;
  notes: string;
}

function okCount(status: Record<string, number>): number {
  return Object.entries(status).reduce((s, [k, v]) => (k.startsWith('2') ? s + v : s), 0);
}

function loadNotes(name: string, r: StageRun, cores: number): string {
  const l = r.load;
  const parts: string[] = [];
  const bad = Object.entries(l.status).filter(([k]) => !k.startsWith('2'));
  if (bad.length) parts.push(`NON-2xx: ${bad.map(([k, v]) => `${k}×${v}`).join(', ')}`);
  const perReq = (cpuMs: number) => fmt((cpuMs * 1000) / Math.max(1, l.completed));
  parts.push(
    `server CPU ${fmt((100 * r.server.cpuMs) / r.server.wallMs)} % = main thread ${fmt((100 * r.server.mainCpuMs) / r.server.wallMs)} % ` +
      `(${perReq(r.server.mainCpuMs)} µs CPU/req, event loop busy ${fmt(100 * r.server.elu)} %) + other threads ${perReq(r.server.cpuMs - r.server.mainCpuMs)} µs CPU/req` +
      (r.server.threads1.size > 1 ? ` (${threadNote(r.server.threads0, r.server.threads1, l.completed)})` : ''),
  );
  parts.push(`load gen CPU ${fmt((100 * l.clientCpuMs) / l.windowMs)} %`);
  parts.push(othersNote(name, r.server.machine, r.server.cpuMs + l.clientCpuMs, r.server.wallMs));
  parts.push(`of ${cores * 100} %`);
  if (l.exhausted) parts.push('ORDER POOL RAN OUT');
  if (l.socketErrors.length) parts.push(`socket errors: ${l.socketErrors.join('; ')}`);
  if (l.reconnects) parts.push(`${l.reconnects} reconnects`);
  return parts.join(', ');
}

async function main(): Promise<void> {
  const cores = availableParallelism();
  const startedAt = performance.now();
  log(
    `http bench: node ${process.version}, ${cores} cores (${cpus()[0]?.model ?? '?'}), secp256k1 ${secp256k1Backend}, keccak ${keccakBackend}, ` +
      `${DURATION_MS / 1000} s per measured stage`,
  );
  if (secp256k1Backend !== 'native') log('WARNING: the native secp256k1 addon did not load; recovery runs on the slow JS fallback');
  if (keccakBackend !== 'native') log('WARNING: the native keccak addon did not load; EIP-712 digests run on the slower JS keccak');
  const rows: Row[] = [];
  const extra: string[] = [];

  // ---- (1) ceiling
  const single = await ceiling(1, 500, Math.min(3000, DURATION_MS));
  const ceil = await ceiling(cores, WARMUP.ceiling, DURATION_MS);
  const ethersPerSec = ethersRate(1500);
  rows.push({
    stage: `(1) ceiling: EIP-712 digest + native recovery, ${ceil.threads} threads, no HTTP`,
    rps: ceil.rate,
    p50: ceil.p50,
    p99: ceil.p99,
    notes: `${ceil.others} (of ${cores * 100} %); 1 thread: ${fmt(single.rate)}/s (p50 ${ms(single.p50)} ms); ethers verifyTypedData: ${fmt(ethersPerSec)}/s; latency = one verification`,
  });
  log(`(1) ceiling ${fmt(ceil.rate)}/s on ${ceil.threads} threads; 1 thread ${fmt(single.rate)}/s; ethers ${fmt(ethersPerSec)}/s`);

  const client = new ClientProc();
  await client.ready();
  let dataDir: string | undefined;
  let exchange: { close(): Promise<void> } | undefined;
  try {
    // ---- (2) hello world
    const hello = Fastify({ logger: false });
    hello.get('/hello', async () => ({ hello: 'world' }));
    await hello.listen({ port: 0, host: HOST });
    const helloTarget = { host: HOST, port: (hello.server.address() as { port: number }).port };
    const h = await stage(client, helloTarget, {
      request: { kind: 'get', path: '/hello' },
      mode: 'closed',
      connections: CONNECTIONS,
      warmupMs: WARMUP.hello,
      durationMs: DURATION_MS,
    });
    await hello.close();
    const helloRps = (okCount(h.load.status) / h.load.windowMs) * 1000;
    rows.push({ stage: `(2) hello-world Fastify GET, ${CONNECTIONS} conns`, rps: helloRps, p50: h.load.p50, p99: h.load.p99, notes: loadNotes('(2)', h, cores) });
    log(`(2) hello world ${fmt(helloRps)}/s p50 ${ms(h.load.p50)} p99 ${ms(h.load.p99)}`);

    // ---- the exchange
    const { loadConfig } = await import('../src/app/config.js');
    const { startExchange } = await import('../src/app/exchange.js');
    dataDir = mkdtempSync(join(tmpdir(), 'perpx-bench-http-'));
    const ex = await startExchange(
      loadConfig({
        PORT: '0',
        HOST,
        DATA_DIR: dataDir,
        LOG_LEVEL: 'silent',
        SEED_DEMO: 'true',
        MARKET_MAKERS: '0',
        INDEX_FEED: 'off',
        FUNDING_INTERVAL_MS: '0',
        DEMO_WALLET: 'false',
        SIGNATURE_THREADS: SIGNATURE_THREADS,
        ACCESS_TOKEN_TTL_SEC: '3600',
        ...RAISED_BUDGET_ENV,
        ...(env.READ_MODEL_LINGER_MS !== undefined && { READ_MODEL_LINGER_MS: env.READ_MODEL_LINGER_MS }),
      }),
    );
    exchange = ex;
    const target = { host: HOST, port: Number(new URL(ex.url).port) };
    const tSetup = performance.now();
    const wallets = Array.from({ length: WALLETS }, () => Wallet.createRandom());
    const sessions = await mapLimit(wallets, 8, (w) => signIn(ex.url, w as unknown as Wallet));
    for (const [i, s] of sessions.entries()) {
      const r = await ex.sequencer.submit({
        kind: 'funds.deposit',
        userId: s.exchangeId,
        amount: String(10_000_000n * 100_000_000n), // 10M USDT in 1e-8 units
        transferId: `bench-${i}-${randomBytes(6).toString('hex')}`,
      });
      if (!r.reply.ok) throw new Error(`deposit refused: ${JSON.stringify(r.reply)}`);
    }
    const targetRate = Number(env.TARGET_RATE ?? Math.max(8000, Math.ceil(0.6 * ceil.rate)));
    // The order pool is signed in steps, sized from what was measured so far (signing ~300k orders up
    // front would take a large part of the run): a short calibration run can't beat the ceiling (1);
    // (3a) can't beat 1.5× the calibration rate; (3b) needs the target rate, or what (3a) managed.
    let seed = 1;
    let signMs = 0;
    let signed = 0;
    const topUp = async (want: number, poolLeft: number, first = false) => {
      const count = Math.max(0, Math.ceil(want) - poolLeft);
      if (count === 0) return;
      const p = await client.ask(
        {
          type: 'prepare',
          target,
          chainId: ex.chainId,
          wallets: first
            ? wallets.map((w, i) => ({
                privateKey: w.privateKey,
                header: (AUTH === 'apikey' ? ['x-api-key', sessions[i].apiKey as string] : ['Authorization', `Bearer ${sessions[i].token}`]) as [string, string],
              }))
            : undefined,
          count,
          levels: PRICE_LEVELS,
          seed: seed++,
        },
        'prepared',
      );
      signMs += p.ms;
      signed += p.count;
      log(`  pre-signed ${fmt(p.count)} orders in ${fmt(p.ms / 1000, 1)} s on ${p.threads} threads (load-generator process)`);
    };
    log(`signed in and funded ${WALLETS} wallets in ${fmt((performance.now() - tSetup) / 1000, 1)} s`);
    const CAL = { warmupMs: 1000, durationMs: 2000 };
    await topUp(ceil.rate * 1.1 * ((CAL.warmupMs + CAL.durationMs) / 1000) + 1, 0, true);
    const probe = await client.ask({ type: 'probe' }, 'probe');
    if (probe.status !== 200) {
      log(`order creation failed: HTTP ${probe.status}: ${probe.body}`);
      throw new Error('the first pre-signed order was refused; see the body above');
    }
    const cal = await stage(client, target, { request: { kind: 'orders' }, mode: 'closed', connections: CONNECTIONS, ...CAL });
    const calRps = (okCount(cal.load.status) / cal.load.windowMs) * 1000;
    log(`  calibration (also warm-up): ${fmt(calRps)} orders/s` + (cal.load.errorBodies.length ? `; non-2xx: ${cal.load.errorBodies.join(' | ')}` : ''));
    // The short calibration runs on a cold server and often well below (3a): 2.5× leaves room (a pool that
    // runs out mid-window understates (3a)); still capped by the ceiling, which (3a) cannot beat.
    await topUp(Math.min(Math.max(ceil.rate, 4000) * 1.1, Math.max(2.5 * calRps, 2000)) * ((WARMUP.orders + DURATION_MS) / 1000), cal.poolLeft);

    // ---- (3a) max rate
    const s0 = seqSnap(ex.sequencer.stats);
    const profileFile = join(tmpdir(), `perpx-http-bench-server-${Date.now()}.cpuprofile`);
    const o = await stage(
      client,
      target,
      { request: { kind: 'orders' }, mode: 'closed', connections: CONNECTIONS, warmupMs: WARMUP.orders, durationMs: DURATION_MS },
      { profileTo: CPU_PROF || ALLOC_PROF ? profileFile : undefined },
    );
    const s1 = seqSnap(ex.sequencer.stats);
    const ordersRps = (okCount(o.load.status) / o.load.windowMs) * 1000;
    rows.push({
      stage: `(3a) signed limit orders, POST /api/v2/order/limit, ${CONNECTIONS} conns, max rate`,
      rps: ordersRps,
      p50: o.load.p50,
      p99: o.load.p99,
      notes: `${loadNotes('(3a)', o, cores)}; ${seqNote(s0, s1)}`,
    });
    log(`(3a) orders ${fmt(ordersRps)}/s p50 ${ms(o.load.p50)} p99 ${ms(o.load.p99)}`);
    if (o.load.errorBodies.length) extra.push(`(3a) non-2xx bodies:\n  ${o.load.errorBodies.join('\n  ')}`);
    if (o.profile) extra.push(`(3a) ${o.profile}\n  full profile: ${profileFile}`);

    // ---- (3b) fixed rate
    await topUp(Math.min(targetRate * 1.05, Math.max(2 * ordersRps, 1000)) * ((WARMUP.ordersOpen + DURATION_MS) / 1000), o.poolLeft);
    const o2 = await stage(client, target, {
      request: { kind: 'orders' },
      mode: 'open',
      rate: targetRate,
      connections: OPEN_CONNECTIONS,
      warmupMs: WARMUP.ordersOpen,
      durationMs: DURATION_MS,
    });
    const s2 = seqSnap(ex.sequencer.stats);
    const openRps = (okCount(o2.load.status) / o2.load.windowMs) * 1000;
    rows.push({
      stage: `(3b) signed limit orders at a fixed ${fmt(targetRate)}/s, ${OPEN_CONNECTIONS} conns`,
      rps: openRps,
      p50: o2.load.p50,
      p99: o2.load.p99,
      notes: `${loadNotes('(3b)', o2, cores)}; max ${fmt(o2.load.maxWaiting)} requests waiting for a connection; ${seqNote(s1, s2)}`,
    });
    log(`(3b) orders @${fmt(targetRate)}/s: ${fmt(openRps)}/s p50 ${ms(o2.load.p50)} p99 ${ms(o2.load.p99)}`);
    if (o2.load.errorBodies.length) extra.push(`(3b) non-2xx bodies:\n  ${o2.load.errorBodies.join('\n  ')}`);

    // What the book holds now (stage 4 reads it).
    const depth = (await json(await fetch(`${ex.url}${DEPTH_PATH}`))) as { bids?: unknown[]; asks?: unknown[] };
    const resting = sessions.reduce((s, x) => s + ex.engine.openOrders(x.exchangeId).length, 0);
    extra.push(
      `book before (4): ${fmt(resting)} resting bench orders on ${fmt(2 * PRICE_LEVELS)} possible price levels; ` +
        `${DEPTH_PATH} returns ${depth.bids?.length ?? '?'} bids / ${depth.asks?.length ?? '?'} asks`,
    );

    // ---- (4) depth
    const depthProfile = join(tmpdir(), `perpx-http-bench-depth-${Date.now()}.cpuprofile`);
    const d = await stage(
      client,
      target,
      { request: { kind: 'get', path: DEPTH_PATH }, mode: 'closed', connections: CONNECTIONS, warmupMs: WARMUP.depth, durationMs: DURATION_MS },
      { profileTo: CPU_PROF || ALLOC_PROF ? depthProfile : undefined },
    );
    const depthRps = (okCount(d.load.status) / d.load.windowMs) * 1000;
    rows.push({ stage: `(4) GET ${DEPTH_PATH}, ${CONNECTIONS} conns`, rps: depthRps, p50: d.load.p50, p99: d.load.p99, notes: loadNotes('(4)', d, cores) });
    log(`(4) depth ${fmt(depthRps)}/s p50 ${ms(d.load.p50)} p99 ${ms(d.load.p99)}`);
    if (d.load.errorBodies.length) extra.push(`(4) non-2xx bodies:\n  ${d.load.errorBodies.join('\n  ')}`);
    if (d.profile) extra.push(`(4) ${d.profile}\n  full profile: ${depthProfile}`);

    // ---- report
    log('');
    log('| stage | req/s | p50 ms | p99 ms | notes |');
    log('|---|---:|---:|---:|---|');
    for (const r of rows) log(`| ${r.stage} | ${fmt(r.rps)} | ${ms(r.p50)} | ${ms(r.p99)} | ${r.notes} |`);
    log('');
    const r31 = ordersRps / ceil.rate;
    const r42 = depthRps / helloRps;
    const pass = (b: boolean) => (b ? 'PASS' : 'FAIL');
    const kept = openRps >= 0.98 * targetRate;
    log(`ratio (3a)/(1) = ${fmt(r31, 2)}; ratio (4)/(2) = ${fmt(r42, 2)}`);
    // Main-thread CPU per request does not depend much on what else runs on the machine (wall-clock rates do).
    const cpuPerReq = (r: StageRun) => (r.server.mainCpuMs * 1000) / Math.max(1, r.load.completed);
    const [oUs, hUs, dUs] = [cpuPerReq(o), cpuPerReq(h), cpuPerReq(d)];
    if (Number.isFinite(oUs) && oUs > 0) {
      log(
        `main-thread CPU per request: order ${fmt(oUs)} µs, hello-world ${fmt(hUs)} µs, depth ${fmt(dUs)} µs → with a whole core ` +
          `for the event loop: ≤ ${fmt(1e6 / oUs)} orders/s, depth/hello-world ≈ ${fmt(hUs / dUs, 2)} (upper bounds; contention-insensitive)`,
      );
    }
    log('');
    log('| target | measured | result |');
    log('|---|---|---|');
    log(`| signed order creation ≥ 8,000 orders/s | ${fmt(ordersRps)}/s (3a) | ${pass(ordersRps >= 8000)} |`);
    log(`| (3a) signed orders over HTTP ≥ 0.35 × the recovery ceiling (1) | ${fmt(r31, 2)}× | ${pass(r31 >= 0.35)} |`);
    log(
      `| p99 ≤ 10 ms at that load (3b: ${fmt(targetRate)}/s offered) | p99 ${ms(o2.load.p99)} ms at ${fmt(openRps)}/s` +
        `${kept ? '' : ' (server did not keep up with the offered rate)'} | ${pass(o2.load.p99 <= 10 && kept)} |`,
    );
    log(`| (4) depth reads ≥ 0.60 × hello-world (2) | ${fmt(r42, 2)}× | ${pass(r42 >= 0.6)} |`);
    log('');
    log(
      `Setup: server (hello-world Fastify, then the exchange with SIGNATURE_THREADS=${SIGNATURE_THREADS}) in the bench process, ` +
        `load generator (raw keep-alive sockets, no pipelining) in a forked child; both share the ${cores} cores. ` +
        `Latency: write (closed loop) or scheduled release (3b, open loop) to the last response byte, 2xx only. ` +
        `CPU % is of one core (${cores * 100} % = all cores). Orders: BTCUSDT, qty 0.0001, leverage 10, GTC, buys below / sells above 100000 ` +
        `(${PRICE_LEVELS} levels a side), ${WALLETS} wallets, ${AUTH === 'apikey' ? 'x-api-key' : 'Bearer JWT (ES256)'} auth; none cross, all rest.`,
    );
    log(`Order pool: ${fmt(signed)} orders pre-signed in ${fmt(signMs / 1000, 1)} s (before the stages that use them, not during).`);
    if (contended.length) {
      log(
        `WARNING: other processes used a notable share of the ${cores} cores during ${contended.join(', ')}; ` +
          `those numbers (and the ratios built on them) understate this code. Re-run on a quiet machine.`,
      );
    }
    for (const e of extra) log(e);
    log(`total run time ${fmt((performance.now() - startedAt) / 1000, 1)} s`);
  } finally {
    await client.close();
    if (exchange) await exchange.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

if (env.HTTP_BENCH === 'history' || process.argv[2] === 'history') {
  // History routes over a large read store: bench/http/history.ts.
  import('./http/history.js').then((m) => m.runHistoryBench()).then(() => process.exit(0), (err) => {
    console.error(err);
    process.exit(1);
  });
} else if (env.HTTP_BENCH_ROLE === 'client') {
  runClientProcess();
} else {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
