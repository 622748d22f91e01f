/**
 * `npm run cluster`: a whole cluster on this machine's NATS and PostgreSQL (docs/cluster.md): one engine leader
 * (demo markets, market makers and demo wallet, as `npm start`), a projector, two gateways on two ports, and
 * haproxy in front of them on PORT, so clients keep one URL. Ctrl-C or SIGTERM stops it in order (haproxy stops
 * taking connections, gateways, projector, engine, haproxy's last connections) and exits 0. The names persist,
 * so the next run resumes; `--fresh` deletes the streams, databases and data directory first.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isClusterName } from '../../src/journal/jetstream-names.js';
import { databaseUrl, deleteClusterStreams, dropDatabase } from './cluster-resources.js';
import { findHaproxy, HAPROXY_MISSING, HaproxyProcess } from './haproxy.js';
import { startLocalCluster, type LocalCluster } from './local-cluster.js';
import type { RoleProcess } from './role-process.js';

const USAGE = `usage: npm run cluster [-- --fresh] [-- --echo]
  --fresh   delete this cluster's streams, databases and data directory first (or CLUSTER_FRESH=1)
  --echo    copy every role's log to the terminal (they are always in DATA_DIR/logs)
environment: PORT (8080), GATEWAY_PORT (PORT+1), GATEWAYS (2), HOST (127.0.0.1), CLUSTER_NAME (local),
  NATS_URL (nats://127.0.0.1:4222), PG_ADMIN_URL (postgres://postgres@127.0.0.1:5432/postgres),
  AUTH_DATABASE (perpx_auth), READ_DATABASE (perpx_read), DATA_DIR (./data-cluster), and any perpx setting`;

interface Settings {
  fresh: boolean;
  echo: boolean;
  cluster: string;
  host: string;
  port: number;
  gatewayPort: number;
  gateways: number;
  natsUrl: string;
  pgAdminUrl: string;
  authDatabase: string;
  readDatabase: string;
  dataDir: string;
}

function settings(env: NodeJS.ProcessEnv, args: string[]): Settings {
  const unknown = args.filter((a) => a !== '--fresh' && a !== '--echo');
  if (unknown.length > 0) fail(`unknown argument ${unknown[0]}\n${USAGE}`);
  const int = (name: string, def: number, min: number): number => {
    const raw = env[name]?.trim() || String(def);
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < min || n > 65535) fail(`${name} must be an integer from ${min} to 65535, got "${raw}"`);
    return n;
  };
  const port = int('PORT', 8080, 1);
  const cluster = env.CLUSTER_NAME?.trim() || 'local';
  if (!isClusterName(cluster)) fail(`CLUSTER_NAME must be 1-64 letters, digits, _ or -, got "${cluster}"`);
  return {
    fresh: args.includes('--fresh') || env.CLUSTER_FRESH === '1',
    echo: args.includes('--echo'),
    cluster,
    host: env.HOST?.trim() || '127.0.0.1',
    port,
    gatewayPort: int('GATEWAY_PORT', port + 1, 1),
    gateways: int('GATEWAYS', 2, 1),
    natsUrl: env.NATS_URL?.trim() || 'nats://127.0.0.1:4222',
    pgAdminUrl: env.PG_ADMIN_URL?.trim() || 'postgres://postgres@127.0.0.1:5432/postgres',
    authDatabase: env.AUTH_DATABASE?.trim() || 'perpx_auth',
    readDatabase: env.READ_DATABASE?.trim() || 'perpx_read',
    dataDir: resolve(env.DATA_DIR?.trim() || './data-cluster'),
  };
}

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

/** The value after `label` on the line of a role's banner that starts with it. */
function bannerField(banner: string, label: string): string {
  return new RegExp(`^ {2}${label}\\s+(.*)$`, 'm').exec(banner)?.[1] ?? '';
}

async function main(): Promise<void> {
  const s = settings(process.env, process.argv.slice(2));
  if (findHaproxy() === undefined) fail(HAPROXY_MISSING);
  if (s.fresh) {
    const streams = await deleteClusterStreams(s.natsUrl, s.cluster);
    await dropDatabase(s.pgAdminUrl, s.authDatabase);
    await dropDatabase(s.pgAdminUrl, s.readDatabase);
    rmSync(s.dataDir, { recursive: true, force: true });
    console.log(`fresh start: deleted ${streams.join(', ') || 'no streams'}, databases ${s.authDatabase} and ${s.readDatabase}, ${s.dataDir}`);
  }
  mkdirSync(s.dataDir, { recursive: true, mode: 0o700 });
  const logDir = join(s.dataDir, 'logs');
  console.log(`starting cluster "${s.cluster}" (logs in ${logDir}) …`);
  const cluster = await startLocalCluster({
    cluster: s.cluster, natsUrl: s.natsUrl, pgAdminUrl: s.pgAdminUrl, authDatabase: s.authDatabase, readDatabase: s.readDatabase,
    dataDir: s.dataDir, gateways: s.gateways, gatewayPort: s.gatewayPort, echo: s.echo, detached: true, logDir,
    // Behind haproxy: the client IP per-IP budgets count is its X-Forwarded-For; auth stays on the gateways' port.
    env: { HOST: s.host, TRUST_PROXY: 'loopback', AUTH_PORT: '' },
  }).catch((err: unknown) => fail(`the cluster did not start: ${err instanceof Error ? err.message : String(err)}`));
  const haproxy = new HaproxyProcess({
    host: s.host, port: s.port, dir: s.dataDir,
    gateways: cluster.gatewayUrls.map((url, i) => ({ name: `gateway-${i + 1}`, address: new URL(url).host })),
  }, { detached: true });
  try {
    await haproxy.ready();
  } catch (err) {
    await cluster.stop();
    fail(err instanceof Error ? err.message : String(err));
  }
  console.log(await banner(s, cluster, haproxy));
  stopOnSignals(cluster, haproxy);
  stopOnUnexpectedExit(cluster, haproxy);
}

async function banner(s: Settings, cluster: LocalCluster, haproxy: HaproxyProcess): Promise<string> {
  const url = haproxy.url;
  const ws = `${url.replace(/^http/, 'ws')}/connection/websocket`;
  const gatewayBanner = (await cluster.gateways[0].ready).banner;
  const engineBanner = (await cluster.engine.ready).banner;
  const channels = /channels "([^"]*)</.exec(gatewayBanner)?.[1] ?? '';
  const lines = [
    `perpx cluster "${s.cluster}" running: engine leader, projector, ${cluster.gateways.length} gateways behind haproxy`,
    `  REST API     ${url}/api  (e.g. ${url}/api/market/instrument)`,
    `  Auth         ${url}/auth`,
    `  WebSocket    ${ws}  channels "${channels}<name>"`,
    `  Chain id     ${bannerField(engineBanner, 'Chain id')}`,
    `  API docs     ${url}/docs  (OpenAPI: ${url}/openapi.json)`,
    ...cluster.gatewayUrls.map((g, i) => `  Gateway ${i + 1}    ${g}/api  (${g}/metrics)`),
    `  Load balancer haproxy ${haproxy.configPath}, health checks GET /api/ping, admin socket ${join(s.dataDir, 'haproxy.sock')}`,
    `  NATS         ${s.natsUrl}, streams PERPX_${s.cluster}_COMMANDS, PERPX_${s.cluster}_REALTIME`,
    `  PostgreSQL   auth ${databaseUrl(s.pgAdminUrl, s.authDatabase)}, history ${databaseUrl(s.pgAdminUrl, s.readDatabase)}`,
    `  Data dir     ${s.dataDir}  (logs in logs/; operator token: gateway-1/operator-token)`,
    `  Engine seq   ${bannerField(engineBanner, 'Engine seq')}`,
  ];
  const demo = /^ {2}(Market makers .*|Demo wallet .*\n {15}private key .*)$/gm;
  for (const m of engineBanner.matchAll(demo)) lines.push(`  ${m[1]}`);
  lines.push('  Stop with Ctrl-C (the next run resumes; `npm run cluster -- --fresh` starts over).');
  return lines.join('\n');
}

/** The order of a clean stop; a second signal more than 2 s later (npm forwards Ctrl-C once more at once) kills. */
function stopOnSignals(cluster: LocalCluster, haproxy: HaproxyProcess): void {
  let stoppingSince = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stoppingSince > 0) {
      if (Date.now() - stoppingSince < 2000) return;
      console.error(`${signal} again: killing every process`);
      for (const p of [...cluster.gateways, cluster.projector, cluster.engine]) void p.kill('SIGKILL');
      haproxy.proc.kill('SIGKILL');
      process.exit(1);
    }
    stoppingSince = Date.now();
    console.log(`${signal}: stopping haproxy (no new connections), gateways, projector, engine …`);
    stopAll(cluster, haproxy).then(
      () => {
        console.log('cluster stopped');
        process.exit(0);
      },
      (err: unknown) => {
        console.error('stop failed:', err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
}

let stopping = false;

async function stopAll(cluster: LocalCluster, haproxy: HaproxyProcess): Promise<void> {
  stopping = true;
  haproxy.softStop();
  await cluster.stop();
  await haproxy.stop();
}

/** A role or haproxy that dies on its own takes the cluster down with it (exit 1): its log says why. */
function stopOnUnexpectedExit(cluster: LocalCluster, haproxy: HaproxyProcess): void {
  const watch = (name: string, exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>, output: () => string) => {
    void exited.then(({ code, signal }) => {
      if (stopping) return;
      console.error(`${name} exited on its own (${code ?? signal}); stopping the cluster. Its last output:\n${output().slice(-4000)}`);
      void stopAll(cluster, haproxy).finally(() => process.exit(1));
    });
  };
  for (const p of [...cluster.gateways, cluster.projector, cluster.engine] as RoleProcess[]) watch(p.name, p.exited, () => p.output);
  watch('haproxy', haproxy.exited, () => haproxy.output);
}

main().catch((err: unknown) => {
  console.error('npm run cluster failed:', err);
  process.exit(1);
});
