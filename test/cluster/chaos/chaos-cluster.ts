/**
 * The cluster of the chaos tests, on real processes: a nats-server of the test's own (killed and restarted by
 * the test), PostgreSQL (the machine's, with fresh databases, or a private server the test can kill), and
 * engine, projector and two gateways started by scripts/cluster/local-cluster.ts, as `npm run cluster` does.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startLocalCluster, type LocalCluster } from '../../../scripts/cluster/local-cluster.js';
import { RAISED_RATE_LIMITS, http, ok } from '../../app/client.js';
import { freePort, PrivateNats } from '../../journal/private-nats.js';
import { PG_ADMIN_URL } from '../../services.js';
import { PrivatePostgres } from './private-postgres.js';

export interface ChaosCluster {
  name: string;
  nats: PrivateNats;
  /** Set when the test runs its own PostgreSQL. */
  postgres: PrivatePostgres | undefined;
  pgAdminUrl: string;
  local: LocalCluster;
  /** Environment every role runs with (the cluster's settings included), for a role started by the test. */
  roleEnv: Record<string, string>;
  dataDir: string;
  readDatabase: string;
  gatewayUrls(): string[];
  /** POST /api/admin/checkpoint through gateway 1 with the operator token: the leader's durable seq and state hash. */
  checkpoint(): Promise<{ seq: number; stateHash: string }>;
  stop(): Promise<void>;
}

/** Settings of the tests' exchanges (test/app/client.ts), plus short heartbeats; no demo traffic of its own. */
const TEST_ENV: Record<string, string> = {
  SIGNATURE_THREADS: '0', LOG_LEVEL: 'warn', SEED_DEMO: 'true', HEARTBEAT_MS: '1000', MARKET_MAKERS: '0', DEMO_WALLET: 'false',
  INDEX_FEED: 'off', FUNDING_INTERVAL_MS: '0', SHUTDOWN_GRACE_MS: '5000', ...RAISED_RATE_LIMITS,
};

export async function startChaosCluster(options: { privatePostgres?: boolean } = {}): Promise<ChaosCluster> {
  const name = `chaos${randomBytes(4).toString('hex')}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'perpx-chaos-'));
  const nats = new PrivateNats(await freePort(), join(dataDir, 'nats'));
  const postgres = options.privatePostgres ? await PrivatePostgres.create() : undefined;
  const pgAdminUrl = postgres?.adminUrl ?? PG_ADMIN_URL;
  const databases = { auth: `${name}_auth`, read: `${name}_read` };
  let local: LocalCluster | undefined;
  const stop = async () => {
    await local?.stop();
    await nats.stop('SIGKILL').catch(() => undefined);
    if (postgres) await postgres.destroy();
    else await dropDatabases(pgAdminUrl, [databases.auth, databases.read, `${databases.read}_rebuilt`]);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await nats.start();
    await postgres?.start();
    local = await startLocalCluster({
      cluster: name, natsUrl: nats.url, pgAdminUrl, authDatabase: databases.auth, readDatabase: databases.read,
      dataDir, gateways: 2, gatewayPort: 0, env: TEST_ENV,
    });
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
  const running = local;
  const operatorToken = () => readFileSync(join(dataDir, 'gateway-1', 'operator-token'), 'utf8').trim();
  return {
    name, nats, postgres, pgAdminUrl, local: running, dataDir, readDatabase: databases.read,
    roleEnv: {
      ...TEST_ENV, NATS_URL: nats.url, CLUSTER_NAME: name,
      AUTH_DATABASE_URL: withDatabase(pgAdminUrl, databases.auth), READ_STORE_URL: withDatabase(pgAdminUrl, databases.read),
    },
    gatewayUrls: () => running.gatewayUrls,
    checkpoint: async () => ok(await http(running.gatewayUrls[0], 'POST', '/api/admin/checkpoint', undefined, { 'x-operator-token': operatorToken() }), 'checkpoint'),
    stop,
  };
}

export function withDatabase(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function dropDatabases(adminUrl: string, names: string[]): Promise<void> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    for (const n of names) await c.query(`DROP DATABASE IF EXISTS ${n} WITH (FORCE)`);
  } finally {
    await c.end();
  }
}

/** Polls until `cond` holds, up to `timeoutMs`; the last error or value in the failure. */
export async function until<T>(what: string, fn: () => Promise<T>, cond: (v: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (cond(v)) return v;
      last = v;
    } catch (err) {
      last = err instanceof Error ? err.message : err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Wall-clock marks of a test's phases, printed at the end (they go in docs/cluster-failures.md). */
export class Phases {
  private last = Date.now();
  readonly marks: Array<[string, number]> = [];
  mark(phase: string): void {
    const now = Date.now();
    this.marks.push([phase, now - this.last]);
    this.last = now;
  }
  toString(): string {
    return this.marks.map(([p, ms]) => `${p} ${(ms / 1000).toFixed(1)} s`).join(', ');
  }
}

/** Runs `fn` on a fresh chaos cluster, stopped after whatever happens, and prints the phases' times. */
export async function withChaosCluster(options: { privatePostgres?: boolean }, fn: (chaos: ChaosCluster, phases: Phases) => Promise<void>): Promise<void> {
  const phases = new Phases();
  const chaos = await startChaosCluster(options);
  phases.mark('cluster start');
  try {
    await fn(chaos, phases);
  } finally {
    await chaos.stop();
    phases.mark('cluster stop');
    console.log(`phases: ${phases}`);
  }
}
