/**
 * `npm start` / `perpx start`: load configuration from the environment, start the exchange, stop gracefully on
 * signals. `perpx engine|gateway|projector` (the first argument) starts one role of a cluster instead
 * (src/app/roles, docs/cluster.md).
 */
import pino from 'pino';
import { ConfigError, loadConfig } from './config.js';
import { startExchange } from './exchange.js';
import { CLUSTER_ROLES, type ClusterRole } from './roles/cluster-config.js';
import { startRole } from './roles/start-role.js';
import { PRIVATE_UMASK } from './private-data-dir.js';

async function main(): Promise<void> {
  // Files this process creates are its own OS user's only (keys, databases, snapshots under DATA_DIR).
  process.umask(PRIVATE_UMASK);
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  const log = pino({ name: 'perpx', level: config.logLevel });
  const role = process.argv[2];
  if (role !== undefined && role !== 'start' && !CLUSTER_ROLES.includes(role as ClusterRole)) {
    console.error(`unknown role "${role}": start, ${CLUSTER_ROLES.join(', ')}`);
    process.exit(2);
  }
  if (role !== undefined && role !== 'start') {
    const node = await startRole(role as ClusterRole, config, log).catch((err: unknown) => {
      if (err instanceof ConfigError) {
        console.error(`configuration error: ${err.message}`);
        process.exit(2);
      }
      throw err;
    });
    console.log(node.banner);
    onSignals(log, () => node.close());
    return;
  }
  const exchange = await startExchange(config, {
    logger: log,
    onFatal: () => {
      // The in-memory engine may be ahead of the journal: exit and let the next start recover from disk.
      const force = setTimeout(() => process.exit(1), 30_000);
      force.unref();
      void exchange.close().finally(() => process.exit(1));
    },
  });

  const lines = [
    `perpx exchange running`,
    `  REST API     ${exchange.url}/api  (e.g. ${exchange.url}/api/market/instrument)`,
    `  Auth         ${exchange.authUrl}/auth`,
    `  WebSocket    ${exchange.wsUrl}  channels "${exchange.channelPrefix}<name>"`,
    `  Chain id     ${exchange.chainId}`,
    `  API docs     ${exchange.docsUrl}  (OpenAPI: ${exchange.url}/openapi.json)`,
    `  Metrics      ${exchange.url}/metrics`,
    `  Data dir     ${exchange.dataDir}  (operator token: ${exchange.dataDir}/operator-token, used by \`npm run cli\`)`,
    `  Engine seq   ${exchange.engine.seq}, instruments: ${exchange.engine.instrumentConfigs().map((i) => i.id).join(', ') || '(none)'}`,
  ];
  if (exchange.marketMakers) lines.push(`  Market makers ${exchange.marketMakers.userIds.length} bots (exchangeIds ${exchange.marketMakers.userIds.join(', ')}) quoting every tradable instrument`);
  if (exchange.demoWallet) {
    const w = exchange.demoWallet;
    lines.push(
      `  Demo wallet  ${w.address} (exchangeId ${w.exchangeId}), funded with test USDT`,
      `               private key ${w.privateKey}`,
      `               try it: npm run example   (or import the key into your bot; test funds only)`,
    );
  }
  console.log(lines.join('\n'));
  onSignals(log, () => exchange.close());
}

/** SIGTERM / SIGINT: a graceful stop, forced after 30 s. */
function onSignals(log: pino.Logger, close: () => Promise<void>): void {
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'signal received');
    const force = setTimeout(() => {
      log.error('shutdown took too long; exiting');
      process.exit(1);
    }, 30_000);
    force.unref();
    close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  console.error('failed to start:', err);
  process.exit(1);
});
