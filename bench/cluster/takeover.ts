/**
 * bench:cluster's takeover phase (issue 30): a cluster with a hot standby (two engines, projector, two
 * gateways) under a paced load of pre-signed orders; each round SIGKILLs whichever engine leads at a random
 * moment and times, from the kill, the lease taken and leading as the new leader logs them ("engine leads":
 * its time less takeoverMs is when it took the lease) and the first order acknowledged after that. The killed
 * engine is started again as the next round's standby.
 */
import type { Wallet } from 'ethers';
import { Bot } from '../../test/app/client.js';
import { startLocalCluster, type LocalCluster } from '../../scripts/cluster/local-cluster.js';
import type { RoleProcess } from '../../scripts/cluster/role-process.js';
import { dropAll, names, type SetupOptions } from './setups.js';

export interface TakeoverRound {
  /** Kill → the standby took the lease (its log: leading time − takeoverMs). */
  leaseMs: number;
  /** Kill → the new leader takes commands ("engine leads"). */
  leadsMs: number;
  /** Kill → first 2xx order reply that came after the new leader led. */
  firstAckMs: number;
}

export interface TakeoverResult {
  rounds: TakeoverRound[];
  /** Orders answered 2xx over the phase, and those that were not (refused, or no answer within 20 s). */
  acked: number;
  failed: string[];
  rate: number;
}

export interface TakeoverSpec {
  rounds: number;
  /** Offered orders per second (open loop over 8 senders). */
  rate: number;
  wallets: Wallet[];
  /** Signed order bodies; order i belongs to wallet i % wallets.length. */
  bodies: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const RESEND = new Set([502, 503, 504]);

/** The engine's pino lines with this msg, parsed. */
const lines = (p: RoleProcess, msg: string) => p.output.split('\n').filter((l) => l.includes(`"msg":"${msg}`)).map((l) => JSON.parse(l) as { time: number; takeoverMs?: number });
const leads = (p: RoleProcess) => lines(p, 'engine leads').length > lines(p, 'engine steps down').length;

async function until<T>(what: string, timeoutMs: number, probe: () => T | undefined): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`takeover phase: ${what} did not happen within ${timeoutMs} ms`);
    await sleep(20);
  }
}

/** Sends each body until it is answered (same body again after a 502/503/504 or a dropped connection). */
function pacedLoad(urls: string[], bots: Bot[], bodies: string[], rate: number, ackTimes: number[], failed: string[]) {
  let next = 0;
  let running = true;
  const workers = 8;
  const pauseMs = (1000 * workers) / rate;
  const send = async (i: number) => {
    const bot = bots[i % bots.length];
    const init = { method: 'POST', body: bodies[i], headers: { 'content-type': 'application/json', authorization: `Bearer ${bot.accessToken}` } };
    const end = Date.now() + 20_000;
    for (let attempt = 1; Date.now() < end; attempt++) {
      const res = await fetch(`${urls[i % urls.length]}/api/v2/order/limit`, init).catch(() => undefined);
      const text = res ? await res.text() : '';
      if (res && res.status >= 200 && res.status < 300) return void ackTimes.push(Date.now());
      if (res && res.status === 409 && attempt > 1 && text.includes('DUPLICATE_ORDER_ID')) return void ackTimes.push(Date.now());
      if (res && !RESEND.has(res.status)) return void failed.push(`${res.status} ${text.slice(0, 120)}`);
      await sleep(50);
    }
    failed.push('no answer within 20 s');
  };
  const done = Promise.all(Array.from({ length: workers }, async () => {
    while (running && next < bodies.length) {
      const t = Date.now();
      await send(next++);
      await sleep(Math.max(0, pauseMs - (Date.now() - t)));
    }
  }));
  return { stop: async () => { running = false; await done; }, exhausted: () => next >= bodies.length };
}

export async function measureTakeovers(o: SetupOptions, spec: TakeoverSpec): Promise<TakeoverResult> {
  const n = names('takeover');
  let C: LocalCluster | undefined;
  try {
    C = await startLocalCluster({
      cluster: n.cluster, natsUrl: o.natsUrl, pgAdminUrl: o.pgAdminUrl, authDatabase: n.auth, readDatabase: n.read,
      dataDir: n.dir, gateways: 2, gatewayPort: 0, env: o.env, standbys: 1, engineEnv: { LOG_LEVEL: 'info' },
    });
    const urls = C.gatewayUrls;
    const bots: Bot[] = [];
    // Eight sign-ins at a time; bots[i] holds wallets[i].
    for (let i = 0; i < spec.wallets.length; i += 8) {
      bots.push(...await Promise.all(spec.wallets.slice(i, i + 8).map(async (w, j) => {
        const bot = await new Bot(urls[(i + j) % urls.length], w).signIn();
        await bot.faucet();
        return bot;
      })));
    }
    console.log(`takeover phase: cluster with a standby up and ${bots.length} wallets funded`);
    const ackTimes: number[] = [];
    const failed: string[] = [];
    const t0 = Date.now();
    const load = pacedLoad(urls, bots, spec.bodies, spec.rate, ackTimes, failed);
    const rounds: TakeoverRound[] = [];
    try {
      await sleep(2000);
      for (let round = 0; round < spec.rounds; round++) {
        const engines = [C.engine, ...C.standbys];
        const leader = await until('one leader', 20_000, () => (engines.filter(leads).length === 1 ? engines.find(leads) : undefined));
        const standby = engines.find((p) => p !== leader)!;
        await sleep(Math.floor(Math.random() * 1000));
        if (load.exhausted()) throw new Error('takeover phase: the order pool ran out (raise POOL_RATE)');
        const killedAt = Date.now();
        await leader.kill('SIGKILL');
        const led = await until('the standby leading', 20_000, () => lines(standby, 'engine leads').find((l) => l.time >= killedAt));
        const firstAck = await until('an order acknowledged by the new leader', 20_000, () => ackTimes.find((t) => t >= led.time));
        rounds.push({ leaseMs: led.time - (led.takeoverMs ?? 0) - killedAt, leadsMs: led.time - killedAt, firstAckMs: firstAck - killedAt });
        console.log(`takeover round ${round + 1}: lease ${rounds.at(-1)!.leaseMs} ms, leads ${rounds.at(-1)!.leadsMs} ms, first ack ${rounds.at(-1)!.firstAckMs} ms after the kill`);
        const tRestart = Date.now();
        await C.restart(leader);
        console.log(`  the killed engine was back as a standby in ${Date.now() - tRestart} ms`);
        await sleep(1000);
      }
    } finally {
      await load.stop();
    }
    return { rounds, acked: ackTimes.length, failed, rate: (ackTimes.length * 1000) / (Date.now() - t0) };
  } finally {
    await C?.stop();
    await dropAll(o, n.cluster, [n.auth, n.read], n.dir);
  }
}
