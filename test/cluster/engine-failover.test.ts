/**
 * Issue 30 on real processes: a leader engine and a hot standby behind the JetStream KV lease, two gateways,
 * a projector, and bots placing signed orders through both gateways (a failed attempt is resent with the same
 * signed body). SIGKILL of the leader: the standby leads within a bounded time, no acknowledged order is lost
 * or doubled, and the new leader's state equals a clean replay of the log. Then SIGSTOP of the new leader past
 * its lease: the restarted first engine takes over, and the stopped one, once continued, steps down and
 * follows again. SLOW=1 adds twenty SIGKILLs at random moments, each round checked once the new leader serves:
 * its checkpoint equals one clean replay of the log (stepped-replay.ts) at that seq, money is conserved, and
 * every order acknowledged so far was placed once in the log.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { buildFollower } from '../../src/app/builders/follower.js';
import { NO_NATS_AUTH } from '../../src/journal/nats-connection.js';
import { deleteClusterStreams } from '../../scripts/cluster/cluster-resources.js';
import { startLocalCluster, type LocalCluster } from '../../scripts/cluster/local-cluster.js';
import type { RoleProcess } from '../../scripts/cluster/role-process.js';
import { Bot, eventually, ok, RAISED_RATE_LIMITS } from '../app/client.js';
import { NATS_TEST_URL, PG_ADMIN_URL, skipUnless } from '../services.js';
import { createPostgresTestDatabase } from '../store/dialects.js';
import { sendUntilAnswered, type SentOrder } from './failover-clients.js';
import { SteppedReplay } from './stepped-replay.js';

const skip = (await skipUnless('nats')) || (await skipUnless('postgres'));
const LEASE_TTL_MS = 2500;
/** Each resting order locks 9 USDT of a bot's 10,000 from the faucet: stay below what it can afford. */
const MAX_ORDERS_PER_BOT = 800;
/** SLOW=1: kill the leader this many times in a row at random moments, the killed one restarted each time. */
const LOOP_ROUNDS = process.env.SLOW === '1' ? 20 : 0;

/**
 * Signed resting orders from each bot, `workers` loops each pausing `pauseMs` between orders, until `running()`
 * is false or the bot placed MAX_ORDERS_PER_BOT: paced so a run of any length stays within its funds.
 */
function pacedLoad(bots: Bot[], sent: SentOrder[][], workers: number, pauseMs: number, running: () => boolean): Promise<unknown> {
  return Promise.all(bots.flatMap((bot, i) => Array.from({ length: workers }, async (_, w) => {
    for (let k = 0; running() && sent[i].length < MAX_ORDERS_PER_BOT; k++) {
      sent[i].push(await sendUntilAnswered(bot, (90_000 + w * 100 + (k % 50)).toFixed(1)));
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  })));
}

/** The leader's durable seq and state hash at that seq, through a gateway (POST /api/admin/checkpoint). */
async function leaderCheckpoint(gatewayUrl: string, operatorToken: string): Promise<{ seq: number; stateHash: string }> {
  const res = await fetch(`${gatewayUrl}/api/admin/checkpoint`, { method: 'POST', headers: { 'x-operator-token': operatorToken } });
  return ok({ status: res.status, body: await res.json() }, 'checkpoint') as { seq: number; stateHash: string };
}

/** Times this engine has logged that it leads / steps down / follows (pino JSON lines at info). */
const count = (p: RoleProcess, msg: string) => p.output.split('\n').filter((l) => l.includes(`"msg":"${msg}`)).length;

describe('engine failover: hot standby, lease, fencing', { skip, timeout: 240_000 + LOOP_ROUNDS * 60_000 }, () => {
  const cluster = `fo${randomBytes(4).toString('hex')}`;
  const root = mkdtempSync(join(tmpdir(), 'perpx-failover-'));
  const databases: Array<Awaited<ReturnType<typeof createPostgresTestDatabase>>> = [];
  let C: LocalCluster | undefined;

  before(async () => {
    const [auth, read] = [await createPostgresTestDatabase(), await createPostgresTestDatabase()];
    databases.push(auth, read);
    C = await startLocalCluster({
      cluster, natsUrl: NATS_TEST_URL, pgAdminUrl: PG_ADMIN_URL, dataDir: root, gateways: 2, gatewayPort: 0, standbys: 1,
      authDatabase: new URL(auth.connectionString).pathname.slice(1), readDatabase: new URL(read.connectionString).pathname.slice(1),
      env: { ...RAISED_RATE_LIMITS, LOG_LEVEL: 'warn', SIGNATURE_THREADS: '0', HEARTBEAT_MS: '1000', SHUTDOWN_GRACE_MS: '2000', LEADER_LEASE_TTL_MS: String(LEASE_TTL_MS) },
      engineEnv: { LOG_LEVEL: 'info', SEED_DEMO: 'true', MARKET_MAKERS: '0', DEMO_WALLET: 'false', INDEX_FEED: 'off', FUNDING_INTERVAL_MS: '0' },
    });
  });

  after(async () => {
    for (const p of [C?.engine, ...(C?.standbys ?? [])]) if (p && p.proc.signalCode === null) p.proc.kill('SIGCONT');
    await C?.stop();
    await deleteClusterStreams(NATS_TEST_URL, cluster).catch(() => undefined);
    for (const db of databases) await db.drop();
    rmSync(root, { recursive: true, force: true });
  });

  test('SIGKILL of the leader, then SIGSTOP of the next: a standby leads, nothing acknowledged lost or doubled', async (t) => {
    const [first, standby] = [C!.engine, C!.standbys[0]];
    assert.match((await first.ready).banner, /^perpx engine leader/);
    assert.match((await standby.ready).banner, /^perpx engine standby/);
    const bots = await Promise.all(C!.gatewayUrls.flatMap((url) => [url, url]).map(async (url) => {
      const bot = await new Bot(url).signIn();
      await bot.faucet();
      return bot;
    }));
    let running = true;
    const sent = bots.map((): SentOrder[] => []);
    const acked = () => sent.map((s) => s.filter((o) => o.outcome === 'acked' || o.outcome === 'applied-earlier').length);
    const load = pacedLoad(bots, sent, 2, 250, () => running);
    const takeovers: number[] = [];
    let second: RoleProcess;
    try {
      await eventually(async () => acked(), (n) => n.every((x) => x >= 3), 'orders before the kill', 30_000);
      // 1. SIGKILL the leader under load.
      const killedAt = Date.now();
      await first.kill('SIGKILL');
      await eventually(async () => count(standby, 'engine leads'), (n) => n >= 1, 'the standby leads', 20_000);
      takeovers.push(Date.now() - killedAt);
      const afterKill = acked();
      await eventually(async () => acked().map((n, i) => n - afterKill[i]), (n) => n.every((x) => x >= 3), 'orders after the takeover', 30_000);

      // The first engine comes back, as a standby.
      second = await C!.restart(first);
      assert.match((await second.ready).banner, /^perpx engine standby/);

      // 2. SIGSTOP the new leader past its lease: the restarted one takes over; continued, the old one steps down.
      const stoppedAt = Date.now();
      standby.proc.kill('SIGSTOP');
      await eventually(async () => count(second, 'engine leads'), (n) => n >= 1, 'the restarted engine leads', 20_000);
      takeovers.push(Date.now() - stoppedAt);
      const afterStop = acked();
      await eventually(async () => acked().map((n, i) => n - afterStop[i]), (n) => n.every((x) => x >= 2), 'orders under the third leader', 30_000);
      standby.proc.kill('SIGCONT');
      await eventually(async () => count(standby, 'engine steps down'), (n) => n >= 1, 'the continued engine steps down', 20_000);
      await eventually(async () => count(standby, 'engine standby following the log'), (n) => n >= 2, 'and follows the log again', 20_000);
    } finally {
      running = false;
      await load;
    }
    t.diagnostic(`takeover after SIGKILL ${takeovers[0]} ms, after SIGSTOP ${takeovers[1]} ms (lease TTL ${LEASE_TTL_MS} ms); leader log: ${standby.output.split('\n').filter((l) => l.includes('takeoverMs')).map((l) => /"takeoverMs":(\d+)/.exec(l)?.[1]).join(', ')} ms to lead after taking the lease`);

    const all = sent.flat();
    t.diagnostic(`${all.length} orders, ${all.filter((o) => o.outcome === 'applied-earlier').length} applied on an earlier attempt, ${all.filter((o) => o.transitFailures > 0).length} resent after a failure`);
    assert.deepEqual(all.filter((o) => o.outcome === 'refused' || o.outcome === 'gave-up'), [], 'every order answered: acknowledged, or applied on an earlier attempt');
    // The gateways resend a command in flight to the next leader under its request id: no client saw an error.
    assert.deepEqual(all.filter((o) => o.outcome !== 'acked' || o.transitFailures > 0), [], 'every order acknowledged on its first attempt');
    assert.deepEqual(all.filter((o) => o.outcome === 'acked' && o.status !== 'NEW'), [], 'every acknowledged order rests');

    const operatorToken = readFileSync(join(root, 'gateway-1', 'operator-token'), 'utf8').trim();
    const checkpoint = await leaderCheckpoint(C!.gatewayUrls[0], operatorToken);
    const replay = await buildFollower({ nats: { url: NATS_TEST_URL, cluster, streamReplicas: 1, auth: NO_NATS_AUTH } }, 'failover replay', { log: pino({ level: 'silent' }) });
    try {
      await replay.service.follower.waitFor(checkpoint.seq, 30_000);
      assert.equal(replay.service.follower.engine.stateHash(), checkpoint.stateHash, 'the third leader\'s state equals a clean replay of the log');
      for (const [i, bot] of bots.entries()) {
        const expected = sent[i].map((o) => o.id).sort();
        assert.deepEqual(replay.service.follower.engine.openOrders(bot.exchangeId).map((o) => o.id).sort(), expected, `bot ${i}: every order in the log, once`);
        assert.deepEqual((await bot.openOrders()).map((o) => o.id as string).sort(), expected, `bot ${i}: open orders through its gateway`);
      }
    } finally {
      await replay.stop();
    }
  });
  test(`SLOW=1: ${LOOP_ROUNDS} kills of the leader at random moments, each round checked: replay equal, money conserved, acked orders once`, { skip: LOOP_ROUNDS === 0 && 'SLOW=1' }, async (t) => {
    const bots = await Promise.all(C!.gatewayUrls.map(async (url) => {
      const bot = await new Bot(url).signIn();
      await bot.faucet();
      return bot;
    }));
    // Who leads now: the engine whose last "leads" line is newer than its last "steps down".
    const leads = (p: RoleProcess) => count(p, 'engine leads') > count(p, 'engine steps down');
    const engines = () => [C!.engine, ...C!.standbys];
    const rows: string[] = [];
    const takeovers: number[] = [];
    let running = true;
    const sent = bots.map((): SentOrder[] => []);
    const isAcked = (o: SentOrder) => o.outcome === 'acked' || o.outcome === 'applied-earlier';
    const acked = () => sent.map((s) => s.filter(isAcked).length);
    const load = pacedLoad(bots, sent, 1, 300, () => running);
    const replay = await SteppedReplay.open(NATS_TEST_URL, cluster);
    const operatorToken = readFileSync(join(root, 'gateway-1', 'operator-token'), 'utf8').trim();
    /** The leader's state against the clean replay at the leader's seq; every order acknowledged before it once in the log. */
    const check = async (label: string) => {
      const ids = sent.map((s) => s.filter(isAcked).map((o) => o.id));
      const checkpoint = await leaderCheckpoint(C!.gatewayUrls[0], operatorToken);
      const engine = await replay.at(checkpoint.seq, 30_000);
      assert.equal(engine.stateHash(), checkpoint.stateHash, `${label}: the leader equals a clean replay of the log at seq ${checkpoint.seq}`);
      const l = engine.ledger!();
      assert.equal(l.deposits - l.withdrawals, l.balances + l.fees + l.reserveFund - l.openCost, `${label}: money is conserved`);
      for (const [i, bot] of bots.entries()) {
        assert.deepEqual(ids[i].filter((id) => replay.placed.get(id) !== 1), [], `${label}: bot ${i}: every acknowledged order placed once in the log`);
        const open = new Set(engine.openOrders(bot.exchangeId).map((o) => o.id));
        assert.deepEqual(ids[i].filter((id) => !open.has(id)), [], `${label}: bot ${i}: every acknowledged order rests`);
      }
      return checkpoint.seq;
    };
    try {
      try {
        for (let round = 0; round < LOOP_ROUNDS; round++) {
          await eventually(async () => engines().filter(leads).length, (n) => n === 1, `round ${round}: one leader`, 20_000);
          const leader = engines().find(leads)!;
          const other = engines().find((p) => p !== leader)!;
          const before = count(other, 'engine leads');
          const ackedBefore = acked();
          await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 1500)));
          const killedAt = Date.now();
          await leader.kill('SIGKILL');
          await eventually(async () => count(other, 'engine leads'), (n) => n > before, `round ${round}: the standby leads`, 20_000);
          takeovers.push(Date.now() - killedAt);
          await C!.restart(leader);
          await eventually(async () => acked().map((n, i) => n - ackedBefore[i]), (n) => n.every((x) => x >= 1), `round ${round}: orders go on`, 30_000);
          const seq = await check(`round ${round}`);
          const leadMs = [...other.output.matchAll(/"takeoverMs":(\d+)/g)].at(-1)?.[1] ?? '?';
          const row = `| ${round + 1} | ${takeovers.at(-1)} | ${leadMs} | ${acked().reduce((a, b) => a + b, 0)} | ${seq} | ok |`;
          rows.push(row);
          t.diagnostic(row);
        }
      } finally {
        running = false;
        await load.catch(() => undefined);
      }
      t.diagnostic(['| round | takeover ms | lease to leading ms | orders acked | checked at seq | check |', '| ---: | ---: | ---: | ---: | ---: | --- |', ...rows].join('\n'));
      const sorted = [...takeovers].sort((a, b) => a - b);
      t.diagnostic(`takeovers over ${takeovers.length} rounds: p50 ${sorted[Math.floor(sorted.length / 2)]} ms, max ${sorted.at(-1)} ms (lease TTL ${LEASE_TTL_MS} ms)`);
      const all = sent.flat();
      assert.deepEqual(all.filter((o) => o.outcome === 'refused' || o.outcome === 'gave-up'), [], 'every order answered');
      assert.deepEqual(all.filter((o) => o.outcome !== 'acked' || o.transitFailures > 0), [], 'every order acknowledged on its first attempt');
      assert.deepEqual(all.filter((o) => o.outcome === 'acked' && o.status !== 'NEW'), [], 'every acknowledged order rests');
      // After the load every order is answered: the log holds exactly the orders sent, each once.
      const engine = await replay.at(await check('after the load'), 0);
      for (const [i, bot] of bots.entries()) {
        const expected = sent[i].map((o) => o.id).sort();
        assert.deepEqual(engine.openOrders(bot.exchangeId).map((o) => o.id).sort(), expected, `bot ${i}: every order in the log, once`);
      }
    } finally {
      await replay.close();
    }
  });
});
