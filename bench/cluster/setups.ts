/**
 * The exchanges bench:cluster compares, each as real processes started the way an operator would: the
 * single process (`npm start`) on its defaults (SQLite), the single process on the cluster's stores
 * (JetStream journal, PostgreSQL auth and read model, NATS real-time broker), and the cluster (engine leader,
 * projector, two gateways; scripts/cluster/local-cluster.ts), alone or with a hot standby engine following the
 * log (what running a standby costs). Each gets fresh JetStream names and databases, removed by `stop`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { natsEngineAdmin, type LeaderStats } from '../../src/cluster/admin-transport.js';
import { LeaderDirectory } from '../../src/cluster/leader-lease.js';
import { databaseUrl, ensureDatabase } from '../../scripts/cluster/cluster-resources.js';
import { startLocalCluster } from '../../scripts/cluster/local-cluster.js';
import { RoleProcess } from '../../scripts/cluster/role-process.js';

export type SetupKind = 'single-sqlite' | 'single-jetstream' | 'cluster' | 'cluster-standby';

export interface RunningSetup {
  kind: SetupKind;
  title: string;
  /** REST base URLs the load is spread over (one per gateway). */
  urls: string[];
  /** The processes whose CPU is measured, by role ("exchange", "engine", "gateway-1", …). */
  processes: Array<{ role: string; pid: number }>;
  /** PostgreSQL databases of this setup (their backends' CPU is measured too). */
  databases: string[];
  /** /metrics text of each process that serves HTTP. */
  metrics(): Promise<string[]>;
  /** The engine leader's sequencer stats over NATS (cluster only). */
  leaderStats?: () => Promise<LeaderStats>;
  stop(): Promise<void>;
}

export interface SetupOptions {
  natsUrl: string;
  pgAdminUrl: string;
  /** Environment of every process (rate limits, faucet, demo seed, signature threads …). */
  env: Record<string, string>;
  /** Write each process's main-thread CPU profile here when it stops (--cpu-prof). */
  cpuProfDir?: string;
}

const fetchText = async (url: string) => (await fetch(url)).text();

/** Fresh names for one setup's JetStream resources and databases. */
export function names(kind: string) {
  const id = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  return { cluster: `bench${id}`, auth: `bench_${id}_auth`, read: `bench_${id}_read`, dir: mkdtempSync(join(tmpdir(), `perpx-bench-${kind}-`)) };
}

export async function dropAll(o: SetupOptions, cluster: string | undefined, databases: string[], dir: string): Promise<void> {
  if (cluster) {
    const nc: NatsConnection = await connect({ servers: o.natsUrl });
    const jsm = await jetstreamManager(nc);
    for (const s of [`PERPX_${cluster}_COMMANDS`, `PERPX_${cluster}_REALTIME`, `OBJ_perpx-${cluster}-snapshots`, `KV_perpx-${cluster}-leader`]) await jsm.streams.delete(s).catch(() => undefined);
    await nc.close();
  }
  if (databases.length) {
    const c = new pg.Client({ connectionString: o.pgAdminUrl });
    await c.connect();
    for (const db of databases) await c.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`).catch(() => undefined);
    await c.end();
  }
  rmSync(dir, { recursive: true, force: true });
}

export async function startSetup(kind: SetupKind, options: SetupOptions): Promise<RunningSetup> {
  const n = names(kind);
  const o = options;
  const nodeFlags = o.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`] : [];
  if (kind === 'cluster' || kind === 'cluster-standby') {
    const cluster = await startLocalCluster({
      cluster: n.cluster, natsUrl: o.natsUrl, pgAdminUrl: o.pgAdminUrl, authDatabase: n.auth, readDatabase: n.read,
      dataDir: n.dir, gateways: 2, gatewayPort: 0, env: o.env, nodeFlags, standbys: kind === 'cluster-standby' ? 1 : 0,
      // Info from the engines: the leader logs its longest event-loop stall when it stops (the lease's margin).
      engineEnv: { LOG_LEVEL: 'info' },
    });
    const nc = await connect({ servers: o.natsUrl });
    // Admin calls go to the subject of the current lease epoch (a deposed leader never answers them).
    const directory = await LeaderDirectory.open(nc, n.cluster);
    const admin = natsEngineAdmin(nc, n.cluster, directory, 10_000);
    return {
      kind,
      title: kind === 'cluster' ? 'cluster: engine + projector + 2 gateways (processes)' : 'cluster as (3) + 1 hot standby engine',
      urls: cluster.gatewayUrls,
      processes: [
        { role: 'engine', pid: cluster.engine.pid },
        ...cluster.standbys.map((e) => ({ role: 'standby', pid: e.pid })),
        { role: 'projector', pid: cluster.projector.pid },
        ...cluster.gateways.map((g, i) => ({ role: `gateway-${i + 1}`, pid: g.pid })),
      ],
      databases: [n.auth, n.read],
      metrics: () => Promise.all(cluster.gatewayUrls.map((u) => fetchText(`${u}/metrics`))),
      leaderStats: () => admin.stats(),
      stop: async () => {
        directory.close();
        await nc.close();
        await cluster.stop();
        const stall = cluster.engine.output.split('\n').find((l) => l.includes('longest stall while leading'));
        if (stall) {
          const s = JSON.parse(stall) as { maxStallMs: number; p99StallMs: number; ledSeconds: number; leaseTtlMs: number };
          console.error(`[bench] ${kind}: leader event loop over ${s.ledSeconds} s: longest stall ${s.maxStallMs} ms, p99 ${s.p99StallMs} ms (lease TTL ${s.leaseTtlMs} ms)`);
        }
        await dropAll(o, n.cluster, [n.auth, n.read], n.dir);
      },
    };
  }
  const stores: Record<string, string> = {};
  if (kind === 'single-jetstream') {
    await ensureDatabase(o.pgAdminUrl, n.auth);
    await ensureDatabase(o.pgAdminUrl, n.read);
    Object.assign(stores, {
      JOURNAL: 'jetstream', NATS_URL: o.natsUrl, CLUSTER_NAME: n.cluster, REALTIME_BROKER: 'nats',
      AUTH_STORE: 'postgres', AUTH_DATABASE_URL: databaseUrl(o.pgAdminUrl, n.auth), READ_STORE_URL: databaseUrl(o.pgAdminUrl, n.read),
    });
  }
  const proc = new RoleProcess('start', kind, { ...o.env, PORT: '0', DATA_DIR: n.dir, ...stores }, { nodeFlags });
  const databases = kind === 'single-jetstream' ? [n.auth, n.read] : [];
  const cluster = kind === 'single-jetstream' ? n.cluster : undefined;
  try {
    const { url } = await proc.ready;
    return {
      kind,
      title: kind === 'single-sqlite'
        ? 'single process, defaults (SQLite journal, auth, read model)'
        : 'single process, cluster stores (JetStream journal, PostgreSQL auth + read model, NATS broker)',
      urls: [url],
      processes: [{ role: 'exchange', pid: proc.pid }],
      databases,
      metrics: async () => [await fetchText(`${url}/metrics`)],
      stop: async () => {
        await proc.stop();
        await dropAll(o, cluster, databases, n.dir);
      },
    };
  } catch (err) {
    await proc.stop(5000);
    await dropAll(o, cluster, databases, n.dir);
    throw err;
  }
}
