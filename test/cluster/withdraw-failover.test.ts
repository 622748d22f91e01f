/**
 * Issue 30 on real processes: withdrawals requested through the public API are in flight on the simulated
 * chain (shared by the engines in the KV bucket perpx-<cluster>-simchain) when the leader dies. SIGKILL, then
 * SIGSTOP + SIGCONT of the next leader: the standby leads, looks each withdrawal up on the shared network
 * instead of resending it, and settles it. Each transfer id is broadcast exactly once; each user is debited once.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { NatsConnection } from '@nats-io/transport-node';
import { NatsSimulatedChain } from '../../src/chain/nats-simulated-chain.js';
import { deleteClusterStreams } from '../../scripts/cluster/cluster-resources.js';
import { startLocalCluster, type LocalCluster } from '../../scripts/cluster/local-cluster.js';
import type { RoleProcess } from '../../scripts/cluster/role-process.js';
import { Bot, DOMAIN, eventually, ok, RAISED_RATE_LIMITS, units } from '../app/client.js';
import { natsConnection } from '../journal/jetstream-helpers.js';
import { NATS_TEST_URL, PG_ADMIN_URL, skipUnless } from '../services.js';
import { createPostgresTestDatabase } from '../store/dialects.js';

const skip = (await skipUnless('nats')) || (await skipUnless('postgres'));
const CHAIN_DELAY_MS = 1500;
const RECIPIENT = '0x' + '5a'.repeat(20);
/** Per round: a signed withdrawal is single-use, so each round changes the amounts by one unit. */
const AMOUNTS = [['100.5', '200.25'], ['100.50000001', '200.25000001']];

async function withdraw(bot: Bot, amount: string): Promise<string> {
  const signature = await bot.wallet.signTypedData(
    DOMAIN(),
    { Withdraw: [{ name: 'recipient', type: 'address' }, { name: 'amount', type: 'uint256' }] },
    { recipient: RECIPIENT, amount: units(amount) },
  );
  const t = ok(await bot.post('/api/transfer/pf/withdraw', { recipient: RECIPIENT, amount, signature }), 'withdraw') as { id: string; status: string };
  assert.equal(t.status, 'pending');
  return t.id;
}

const funding = async (bot: Bot) => units(String((await bot.balance()).funding.balance));
const count = (p: RoleProcess, msg: string) => p.output.split('\n').filter((l) => l.includes(`"msg":"${msg}`)).length;

describe('withdrawals across a takeover: sent to the chain once', { skip, timeout: 240_000 }, () => {
  const cluster = `wf${randomBytes(4).toString('hex')}`;
  const root = mkdtempSync(join(tmpdir(), 'perpx-withdraw-failover-'));
  const databases: Array<Awaited<ReturnType<typeof createPostgresTestDatabase>>> = [];
  let C: LocalCluster | undefined;
  let nc: NatsConnection;
  let chain: NatsSimulatedChain;
  let bots: Bot[] = [];

  before(async () => {
    const [auth, read] = [await createPostgresTestDatabase(), await createPostgresTestDatabase()];
    databases.push(auth, read);
    C = await startLocalCluster({
      cluster, natsUrl: NATS_TEST_URL, pgAdminUrl: PG_ADMIN_URL, dataDir: root, gateways: 1, gatewayPort: 0, standbys: 1,
      authDatabase: new URL(auth.connectionString).pathname.slice(1), readDatabase: new URL(read.connectionString).pathname.slice(1),
      env: { ...RAISED_RATE_LIMITS, LOG_LEVEL: 'warn', SIGNATURE_THREADS: '0', SHUTDOWN_GRACE_MS: '2000', LEADER_LEASE_TTL_MS: '2000' },
      engineEnv: {
        LOG_LEVEL: 'info', SEED_DEMO: 'true', MARKET_MAKERS: '0', DEMO_WALLET: 'false', INDEX_FEED: 'off', FUNDING_INTERVAL_MS: '0',
        CHAIN_DELAY_MS: String(CHAIN_DELAY_MS), CHAIN_FAILURE_RATE: '0', CHAIN_SEED: cluster,
      },
    });
    nc = await natsConnection();
    // The test's view of the shared network: the same bucket the engines write.
    chain = await NatsSimulatedChain.open(nc, cluster, { delayMs: CHAIN_DELAY_MS, failureRate: 0, seed: cluster });
    bots = await Promise.all([0, 1, 2].map(async () => {
      const bot = await new Bot(C!.gatewayUrls[0]).signIn();
      await bot.faucet();
      await eventually(() => funding(bot), (v) => v === units('10000'), 'faucet credited', 20_000);
      return bot;
    }));
  });

  after(async () => {
    chain?.close();
    await nc?.close();
    for (const p of [C?.engine, ...(C?.standbys ?? [])]) if (p && p.proc.signalCode === null) p.proc.kill('SIGCONT');
    await C?.stop();
    await deleteClusterStreams(NATS_TEST_URL, cluster).catch(() => undefined);
    for (const db of databases) await db.drop();
    rmSync(root, { recursive: true, force: true });
  });

  /** Every bot requests each amount; resolves once all are broadcast and none is final yet. */
  async function requestInFlight(amounts: string[]): Promise<string[]> {
    const ids = (await Promise.all(bots.map(async (bot) => {
      const mine: string[] = [];
      for (const a of amounts) mine.push(await withdraw(bot, a));
      return mine;
    }))).flat();
    const records = await eventually(() => Promise.all(ids.map((id) => chain.record(id))), (r) => r.every(Boolean), 'all broadcast', 10_000);
    assert.ok(records.some((r) => r!.finalAt > Date.now()), 'withdrawals are still in flight at the failure');
    return ids;
  }

  /** All settled through the public API; each broadcast exactly once; each user debited once per withdrawal. */
  async function assertPaidOnce(amounts: string[], ids: string[], before: bigint[]): Promise<void> {
    for (const bot of bots) await eventually(async () => ok(await bot.get('/api/transfer'), 'transfers').count as number, (n) => n === 0, 'withdrawals settled', 30_000);
    const debit = amounts.reduce((s, a) => s + units(a), 0n);
    for (const [i, bot] of bots.entries()) assert.equal(await funding(bot), before[i] - debit, `bot ${i} debited once`);
    for (const id of ids) assert.equal((await chain.record(id))?.broadcasts, 1, `${id} broadcast once`);
  }

  test('SIGKILL of the leader with withdrawals in flight: each broadcast once, settled by the next leader', async (t) => {
    const [first, standby] = [C!.engine, C!.standbys[0]];
    const before = await Promise.all(bots.map(funding));
    const ids = await requestInFlight(AMOUNTS[0]);
    const killedAt = Date.now();
    await first.kill('SIGKILL');
    await eventually(async () => count(standby, 'engine leads'), (n) => n >= 1, 'the standby leads', 20_000);
    const led = Date.now() - killedAt;
    await assertPaidOnce(AMOUNTS[0], ids, before);
    t.diagnostic(`${ids.length} withdrawals in flight; standby led ${led} ms after SIGKILL; all settled ${Date.now() - killedAt} ms after`);
  });

  test('SIGSTOP of the leader, SIGCONT after the takeover: each broadcast once', async (t) => {
    const leader = C!.standbys[0];
    const next = await C!.restart(C!.engine);
    assert.match((await next.ready).banner, /^perpx engine standby/);
    const before = await Promise.all(bots.map(funding));
    const ids = await requestInFlight(AMOUNTS[1]);
    const stoppedAt = Date.now();
    leader.proc.kill('SIGSTOP');
    await eventually(async () => count(next, 'engine leads'), (n) => n >= 1, 'the restarted engine leads', 20_000);
    const led = Date.now() - stoppedAt;
    leader.proc.kill('SIGCONT');
    await eventually(async () => count(leader, 'engine steps down'), (n) => n >= 1, 'the continued engine steps down', 20_000);
    await assertPaidOnce(AMOUNTS[1], ids, before);
    t.diagnostic(`${ids.length} withdrawals in flight; restarted engine led ${led} ms after SIGSTOP; all settled ${Date.now() - stoppedAt} ms after`);
  });
});
