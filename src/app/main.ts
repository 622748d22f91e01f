/** `npm start`: load configuration from the environment, start the exchange, stop gracefully on signals. */
import pino from 'pino';
import { ConfigError, loadConfig } from './config.js';
import { startExchange } from './exchange.js';
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
  let stopping = false;
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

  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'signal received');
    const force = setTimeout(() => {
      log.error('shutdown took too long; exiting');
      process.exit(1);
    }, 30_000);
    force.unref();
    exchange.close().then(
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
