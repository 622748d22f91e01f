/**
 * A whole cluster in this test process: one engine leader, N gateways and a projector, on the machine's NATS
 * (a fresh cluster name: its own streams and buckets, deleted after) and PostgreSQL (fresh auth and read-model
 * databases, dropped after). Each role runs the code `perpx <role>` runs (src/app/roles).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { loadConfig, type ExchangeConfig } from '../../src/app/config.js';
import { startEngineNode, type RunningEngineNode } from '../../src/app/roles/engine-node.js';
import { startGatewayNode, type RunningGateway } from '../../src/app/roles/gateway-node.js';
import { startProjectorNode, type RunningProjector } from '../../src/app/roles/projector-node.js';
import type { RunningExchange } from '../../src/app/exchange.js';
import { RAISED_RATE_LIMITS, type TestExchange } from '../app/client.js';
import { NATS_TEST_URL } from '../services.js';
import { createPostgresTestDatabase } from '../store/dialects.js';

export interface TestCluster {
  cluster: string;
  engine: RunningEngineNode;
  gateways: RunningGateway[];
  projector: RunningProjector;
  /** The configuration every role was started with (plus its own DATA_DIR unless shared). */
  config(role: string): ExchangeConfig;
  /** Restarts the engine leader (graceful stop, or `kill`: abandon it without a final snapshot). */
  restartEngine(): Promise<RunningEngineNode>;
  stop(): Promise<void>;
}

/**
 * A cluster seen as the single process's RunningExchange (PERPX_TEST_TARGET=cluster): clients use gateway 1;
 * what tests read in-process (engine, sequencer, chain, demo wallet) is the leader's; auth is the shared store.
 */
export async function startClusterAsExchange(env: Record<string, string> = {}): Promise<TestExchange> {
  // One DATA_DIR for every role, as on one machine: the demo wallet file the engine writes is where a client
  // started with the exchange's DATA_DIR looks for it (examples/trading-bot.ts).
  const C = await startTestCluster(env, 2, { sharedDataDir: true });
  const g = C.gateways[0];
  const ex: RunningExchange = {
    url: g.url, authUrl: g.authUrl, wsUrl: g.wsUrl, channelPrefix: g.channelPrefix, docsUrl: g.docsUrl, dataDir: g.dataDir, chainId: g.chainId,
    engine: C.engine.engine, sequencer: C.engine.sequencer, operatorToken: g.operatorToken,
    demoWallet: C.engine.demoWallet, marketMakers: C.engine.marketMakers,
    endRealtimeSession: (sessionId) => C.gateways.reduce((n, gw) => n + gw.endRealtimeSession(sessionId), 0),
    indexPush: g.indexPush, auth: g.auth, chain: C.engine.chain, startup: g.startup, routes: g.routes,
    close: () => C.stop(),
  };
  return { ex, url: ex.url, stop: () => C.stop() };
}

export interface TestClusterOptions {
  /** Another NATS (a private server, e.g. one enforcing credentials) instead of the machine's; its owner cleans it up. */
  natsUrl?: string;
  /** The cluster name (default: a fresh one). */
  cluster?: string;
  /** Settings of one role only (e.g. its NATS_USER and NATS_PASSWORD). */
  roleEnv?: (role: 'engine' | 'gateway' | 'projector') => Record<string, string>;
  /** One DATA_DIR for every role, as on one machine (default: one per role). */
  sharedDataDir?: boolean;
}

export async function startTestCluster(env: Record<string, string> = {}, gateways = 2, options: TestClusterOptions = {}): Promise<TestCluster> {
  const cluster = options.cluster ?? `t${randomBytes(5).toString('hex')}`;
  const root = mkdtempSync(join(tmpdir(), 'perpx-cluster-'));
  const authDb = await createPostgresTestDatabase();
  const readDb = await createPostgresTestDatabase();
  const config = (role: string) => loadConfig({
    PORT: '0', DATA_DIR: options.sharedDataDir ? root : join(root, role), SIGNATURE_THREADS: '0', LOG_LEVEL: 'silent', SEED_DEMO: 'true', HEARTBEAT_MS: '1000',
    MARKET_MAKERS: '0', DEMO_WALLET: 'false', INDEX_FEED: 'off', FUNDING_INTERVAL_MS: '0', ...RAISED_RATE_LIMITS,
    NATS_URL: options.natsUrl ?? NATS_TEST_URL, CLUSTER_NAME: cluster, AUTH_DATABASE_URL: authDb.connectionString, READ_STORE_URL: readDb.connectionString,
    ...env,
    ...options.roleEnv?.(role.startsWith('gateway') ? 'gateway' : (role as 'engine' | 'projector')),
  });
  const started: { engine?: RunningEngineNode; projector?: RunningProjector; gateways: RunningGateway[] } = { gateways: [] };
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= stopAll());
  const stopAll = async () => {
    for (const g of started.gateways) await g.close().catch(() => undefined);
    await started.projector?.close().catch(() => undefined);
    await started.engine?.close().catch(() => undefined);
    if (!options.natsUrl) {
      const nc = await connect({ servers: NATS_TEST_URL });
      const jsm = await jetstreamManager(nc);
      for (const stream of [`PERPX_${cluster}_COMMANDS`, `PERPX_${cluster}_REALTIME`, `OBJ_perpx-${cluster}-snapshots`]) {
        await jsm.streams.delete(stream).catch(() => undefined);
      }
      await nc.close();
    }
    await authDb.drop();
    await readDb.drop();
    rmSync(root, { recursive: true, force: true });
  };
  try {
    started.engine = await startEngineNode(config('engine'));
    started.projector = await startProjectorNode(config('projector'));
    for (let i = 0; i < gateways; i++) started.gateways.push(await startGatewayNode(config(`gateway-${i + 1}`)));
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    cluster,
    get engine() { return started.engine!; },
    gateways: started.gateways,
    get projector() { return started.projector!; },
    config,
    async restartEngine() {
      await started.engine?.close();
      started.engine = await startEngineNode(config('engine'));
      return started.engine;
    },
    stop,
  };
}
