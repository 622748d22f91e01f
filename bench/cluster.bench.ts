// Cluster benchmark (`npm run bench:cluster`). Not a test: prints markdown tables.
//
// The same closed-loop load of pre-signed limit orders (POST /api/v2/order/limit, Bearer JWT, none cross,
// all rest: bench/http/orders.ts) against, one after the other in one run:
//   (1) the single process (`npm start`) on its defaults: SQLite journal, auth and read model;
//   (2) the single process on the cluster's stores: JetStream journal, PostgreSQL auth and read model, NATS
//       real-time broker (like for like with (3) but for the process split);
//   (3) the cluster: engine leader, projector and two gateways as processes (scripts/cluster/local-cluster.ts),
//       the connections spread over both gateways;
//   (4) the same cluster with a hot standby engine following the log: the throughput cost of a standby.
// Then the takeover phase (bench/cluster/takeover.ts): a cluster with a standby under a paced load, the leader
// SIGKILLed TAKEOVER_ROUNDS times; kill → lease taken, → leading, → first acknowledged order, p50 and max.
// Every server is a child process started as an operator would; this process signs the orders up front
// (worker threads) and runs the load generator (bench/http/load.ts). Per setup it reports orders/s and
// latency, CPU µs per order of each process (/proc utime+stime over the window, split by thread kind), of the
// NATS server and of the setup's PostgreSQL backends, and the per-hop latency from the histograms the
// processes keep (gateway: leader round trip, follower wait; engine: apply, JetStream append, submit→durable),
// then the cores and engine throughput 10× and 100× today's rate would need.
//
// Knobs: BENCH_SECONDS (10, measured window per setup), WARMUP_MS (3000), IDLE_MS (2000: each process's idle
// CPU is measured this long before the load and subtracted), CONNECTIONS (64), WALLETS (64),
// SIGNATURE_THREADS (2, per process that verifies), POOL_RATE (4000: orders signed per second of warm-up +
// window; a pool that runs out is reported), SETUPS (single-sqlite,single-jetstream,cluster,cluster-standby;
// empty: the takeover phase alone), NATS_URL, PG_ADMIN_URL (postgres://postgres@127.0.0.1:5432/postgres),
// TAKEOVER_ROUNDS (5; 0 skips the phase), TAKEOVER_RATE (200 orders/s offered during it), LEADER_LEASE_TTL_MS
// (the engines' default), CPU_PROF=1 (every server process runs with
// --cpu-prof; their main threads' self time inside the window is summarized; costs some throughput).
import { mkdtempSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Wallet } from 'ethers';
import { envInt } from './env-int.js';
import { firstMessage, startTsWorker } from './http/worker-boot.js';
import type { SignWorkerData } from './http/sign-worker.js';
import { checkWithEthers, orderSpec, signOrder } from './http/orders.js';
import { RAISED_BUDGET_ENV } from './raised-budgets.js';
import { listenerPid } from './cluster/proc-cpu.js';
import { measureSetup, type SetupResult } from './cluster/measure.js';
import { startSetup, type SetupKind } from './cluster/setups.js';
import { printReport } from './cluster/report.js';
import { summarizeProfiles } from './cluster/profiles.js';
import { measureTakeovers } from './cluster/takeover.js';
import { printStandbyCost, printTakeovers } from './cluster/failover-report.js';
import { mulberry32 } from '../src/simulation/seeded-random.js';

const SECONDS = envInt('BENCH_SECONDS', 10);
const WARMUP_MS = envInt('WARMUP_MS', 3000);
const IDLE_MS = envInt('IDLE_MS', 2000);
const CONNECTIONS = envInt('CONNECTIONS', 64);
const WALLETS = envInt('WALLETS', 64);
const POOL_RATE = envInt('POOL_RATE', 4000);
const SIGNATURE_THREADS = String(envInt('SIGNATURE_THREADS', 2));
const SETUPS = (process.env.SETUPS ?? 'single-sqlite,single-jetstream,cluster,cluster-standby').split(',').map((s) => s.trim()).filter(Boolean) as SetupKind[];
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const PG_ADMIN_URL = process.env.PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const CPU_PROF = process.env.CPU_PROF === '1';
const TAKEOVER_ROUNDS = envInt('TAKEOVER_ROUNDS', 5);
const TAKEOVER_RATE = envInt('TAKEOVER_RATE', 200);
/** The engines' lease TTL: their default, or this process's LEADER_LEASE_TTL_MS, which every role inherits. */
const LEASE_TTL_MS = envInt('LEADER_LEASE_TTL_MS', 2500);
const CHAIN_ID = '16182';
const PRICE_LEVELS = 20_000;

/** Signs `count` orders on every core; order i by wallet i % wallets. */
async function signPool(wallets: Wallet[], count: number): Promise<string[]> {
  const spec = orderSpec(0, PRICE_LEVELS, mulberry32(1));
  checkWithEthers(spec, CHAIN_ID, signOrder(spec, CHAIN_ID, Buffer.from(wallets[0].privateKey.slice(2), 'hex')), wallets[0].address);
  const threads = Math.max(1, availableParallelism());
  const per = Math.ceil(count / threads);
  const parts = await Promise.all(Array.from({ length: threads }, (_, t) => {
    const data: SignWorkerData = {
      chainId: CHAIN_ID, privateKeys: wallets.map((w) => w.privateKey), from: t * per, to: Math.min(count, (t + 1) * per),
      levels: PRICE_LEVELS, seed: 1000 + t,
    };
    const w = startTsWorker(new URL('./http/sign-worker.ts', import.meta.url), data);
    return firstMessage<string[]>(w).finally(() => void w.terminate());
  }));
  return parts.flat();
}

async function main(): Promise<void> {
  const t0 = performance.now();
  const cores = availableParallelism();
  console.log(`cluster bench: node ${process.version}, ${cores} cores (${cpus()[0]?.model ?? '?'}), ${SECONDS} s window + ${WARMUP_MS / 1000} s warm-up per setup, ` +
    `${CONNECTIONS} connections, ${WALLETS} wallets, SIGNATURE_THREADS=${SIGNATURE_THREADS}`);
  const wallets = Array.from({ length: WALLETS }, () => Wallet.createRandom() as unknown as Wallet);
  const tSign = performance.now();
  const bodies = await signPool(wallets, Math.ceil(POOL_RATE * (SECONDS + WARMUP_MS / 1000)));
  console.log(`pre-signed ${bodies.length.toLocaleString('en-US')} orders in ${((performance.now() - tSign) / 1000).toFixed(1)} s (reused by every setup: each is a fresh exchange)`);
  const natsPid = listenerPid(Number(new URL(NATS_URL.split(',')[0]).port || 4222));
  const env: Record<string, string> = {
    LOG_LEVEL: 'silent', SEED_DEMO: 'true', MARKET_MAKERS: '0', INDEX_FEED: 'off', FUNDING_INTERVAL_MS: '0', DEMO_WALLET: 'false',
    ACCESS_TOKEN_TTL_SEC: '3600', FAUCET_AMOUNT: '10000000', SIGNATURE_THREADS, CHAIN_ID, ...RAISED_BUDGET_ENV,
  };
  const profiles: string[] = [];
  const results: Array<{ kind: SetupKind; title: string; roles: string[]; r: SetupResult }> = [];
  for (const kind of SETUPS) {
    const tStart = performance.now();
    const cpuProfDir = CPU_PROF ? mkdtempSync(join(tmpdir(), `perpx-bench-prof-${kind}-`)) : undefined;
    const setup = await startSetup(kind, { natsUrl: NATS_URL, pgAdminUrl: PG_ADMIN_URL, env, cpuProfDir });
    let measured: SetupResult | undefined;
    try {
      console.log(`${kind}: started in ${((performance.now() - tStart) / 1000).toFixed(1)} s (${setup.urls.join(', ')})`);
      const r = await measureSetup(setup, { wallets, bodies, connections: CONNECTIONS, idleMs: IDLE_MS, warmupMs: WARMUP_MS, durationMs: SECONDS * 1000, natsPid });
      console.log(`${kind}: ${Math.round(r.rate).toLocaleString('en-US')} orders/s, p50 ${r.load.p50.toFixed(2)} ms, p99 ${r.load.p99.toFixed(2)} ms`);
      if (r.load.errorBodies.length) console.log(`  non-2xx: ${r.load.errorBodies.join(' | ')}`);
      results.push({ kind, title: setup.title, roles: setup.processes.map((p) => p.role), r });
      measured = r;
    } finally {
      await setup.stop();
    }
    if (cpuProfDir && measured) profiles.push(`(${results.length}) ${kind}`, ...summarizeProfiles(cpuProfDir, setup.processes, measured.windowUs, measured.ok));
  }
  printReport(results, { cores, natsMeasured: natsPid !== undefined });
  const [alone, withStandby] = [results.find((m) => m.kind === 'cluster'), results.find((m) => m.kind === 'cluster-standby')];
  if (alone && withStandby) printStandbyCost(alone.r, withStandby.r);
  if (TAKEOVER_ROUNDS > 0) {
    const tTakeover = performance.now();
    const t = await measureTakeovers({ natsUrl: NATS_URL, pgAdminUrl: PG_ADMIN_URL, env }, { rounds: TAKEOVER_ROUNDS, rate: TAKEOVER_RATE, wallets, bodies });
    console.log(`takeover phase: ${((performance.now() - tTakeover) / 1000).toFixed(1)} s`);
    printTakeovers(t, { leaseTtlMs: LEASE_TTL_MS, offered: TAKEOVER_RATE });
  }
  for (const p of profiles) console.log(`\n${p}`);
  console.log(`\ntotal run time ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

main().then(() => process.exit(0), (err: unknown) => {
  console.error(err);
  process.exit(1);
});
