/**
 * A cluster of real processes on this machine's NATS and PostgreSQL: one engine leader, N gateways and a
 * projector (RoleProcess each), with their databases created when missing. `npm run cluster` runs one with a
 * load balancer in front; the chaos tests and bench:cluster start their own with fresh names.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { databaseUrl, ensureDatabase } from './cluster-resources.js';
import { RoleProcess, type Role, type RoleProcessOptions } from './role-process.js';

export interface LocalClusterOptions {
  /** Names the streams, buckets and subjects (CLUSTER_NAME). */
  cluster: string;
  natsUrl: string;
  /** PostgreSQL server URL with a database to connect to for CREATE DATABASE (e.g. …/postgres). */
  pgAdminUrl: string;
  /** Database names for the auth store and the read model (created when missing). */
  authDatabase: string;
  readDatabase: string;
  /** Data directory root: each process gets a directory of its own under it. */
  dataDir: string;
  gateways: number;
  /** Gateway i listens on gatewayPort + i (0: any free port). */
  gatewayPort: number;
  /** Environment for every role (on top of the cluster's settings). */
  env?: Record<string, string>;
  /** Environment of the engines only (SEED_DEMO, MARKET_MAKERS, INDEX_FEED…). */
  engineEnv?: Record<string, string>;
  /** Hot standby engines besides the first (issue 30): each follows the log and takes over when the leader's lease lapses. */
  standbys?: number;
  echo?: boolean;
  /** Each role in its own process group (RoleProcessOptions.detached): `npm run cluster` stops them in order. */
  detached?: boolean;
  /** Append each role's output to <logDir>/<name>.log. */
  logDir?: string;
  /** More Node flags for every role process (e.g. --cpu-prof). */
  nodeFlags?: string[];
}

export interface LocalCluster {
  /** The first engine started (the leader at start). */
  engine: RoleProcess;
  /** The standby engines started after it. */
  standbys: RoleProcess[];
  projector: RoleProcess;
  gateways: RoleProcess[];
  gatewayUrls: string[];
  /** Starts a role again under the same name (after a kill), and waits until it is ready. */
  restart(proc: RoleProcess): Promise<RoleProcess>;
  /** Stops the gateways (together), then the projector, then the engine (SIGTERM). */
  stop(): Promise<void>;
}

export async function startLocalCluster(o: LocalClusterOptions): Promise<LocalCluster> {
  await ensureDatabase(o.pgAdminUrl, o.authDatabase);
  await ensureDatabase(o.pgAdminUrl, o.readDatabase);
  const shared: Record<string, string> = {
    NATS_URL: o.natsUrl, CLUSTER_NAME: o.cluster,
    AUTH_DATABASE_URL: databaseUrl(o.pgAdminUrl, o.authDatabase), READ_STORE_URL: databaseUrl(o.pgAdminUrl, o.readDatabase),
    ...o.env,
  };
  if (o.logDir !== undefined) mkdirSync(o.logDir, { recursive: true });
  const processOptions = (name: string): RoleProcessOptions => ({
    echo: o.echo, detached: o.detached, nodeFlags: o.nodeFlags, logTo: o.logDir === undefined ? undefined : join(o.logDir, `${name}.log`),
  });
  const envOf = new Map<RoleProcess, Record<string, string>>();
  const spawnRole = (role: Role, name: string, extra: Record<string, string>): RoleProcess => {
    const dir = join(o.dataDir, name);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const env = { ...shared, DATA_DIR: dir, ...extra };
    const proc = new RoleProcess(role, name, env, processOptions(name));
    envOf.set(proc, env);
    return proc;
  };
  const started: RoleProcess[] = [];
  const cluster: LocalCluster = {
    engine: undefined as unknown as RoleProcess,
    standbys: [],
    projector: undefined as unknown as RoleProcess,
    gateways: [],
    gatewayUrls: [],
    async restart(proc) {
      const again = new RoleProcess(proc.role, proc.name, envOf.get(proc)!, processOptions(proc.name));
      envOf.set(again, envOf.get(proc)!);
      const ready = await again.ready;
      if (proc === cluster.engine) cluster.engine = again;
      if (proc === cluster.projector) cluster.projector = again;
      const e = cluster.standbys.indexOf(proc);
      if (e >= 0) cluster.standbys[e] = again;
      const g = cluster.gateways.indexOf(proc);
      if (g >= 0) {
        cluster.gateways[g] = again;
        cluster.gatewayUrls[g] = ready.url;
      }
      started[started.indexOf(proc)] = again;
      return again;
    },
    async stop() {
      await Promise.all(cluster.gateways.map((g) => g.stop()));
      await cluster.projector?.stop();
      // Standbys first: a stopping leader would hand its lease to one.
      await Promise.all(cluster.standbys.map((e) => e.stop()));
      await cluster.engine?.stop();
    },
  };
  try {
    cluster.engine = spawnRole('engine', 'engine', { PORT: '0', ...o.engineEnv });
    started.push(cluster.engine);
    await cluster.engine.ready;
    for (let i = 0; i < (o.standbys ?? 0); i++) {
      const e = spawnRole('engine', `engine-${i + 2}`, { PORT: '0', ...o.engineEnv });
      started.push(e);
      cluster.standbys.push(e);
    }
    for (const e of cluster.standbys) await e.ready;
    cluster.projector = spawnRole('projector', 'projector', { PORT: '0' });
    started.push(cluster.projector);
    for (let i = 0; i < o.gateways; i++) {
      const g = spawnRole('gateway', `gateway-${i + 1}`, { PORT: String(o.gatewayPort === 0 ? 0 : o.gatewayPort + i) });
      started.push(g);
      cluster.gateways.push(g);
    }
    await cluster.projector.ready;
    for (const g of cluster.gateways) cluster.gatewayUrls.push((await g.ready).url);
    return cluster;
  } catch (err) {
    for (const p of started) await p.stop(5000);
    throw err;
  }
}
