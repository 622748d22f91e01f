/**
 * Process configuration from environment variables. Every variable has a default; `CONFIG_VARS` is the
 * single table the README documents.
 */

export interface ExchangeConfig {
  port: number;
  /** Separate port for /auth/*; undefined = served by the main server. */
  authPort: number | undefined;
  host: string;
  dataDir: string;
  chainId: string;
  channelEnv: string;
  accessTokenTtlSec: number;
  refreshTokenTtlSec: number;
  signatureThreads: number;
  /** 'thread': journal commits on a writer thread (default); 'inline': on the event loop. */
  journalWriter: 'thread' | 'inline';
  /** 'thread': the read model is projected on a worker thread (default); 'inline': on the event loop. */
  readModelWriter: 'thread' | 'inline';
  snapshotEveryCommands: number;
  snapshotEveryMs: number;
  bookPublishIntervalMs: number;
  heartbeatMs: number;
  faucetAmount: string;
  logLevel: string;
  seedDemo: boolean;
}

export interface ConfigVar {
  env: string;
  default: string;
  doc: string;
}

export const CONFIG_VARS: readonly ConfigVar[] = [
  { env: 'PORT', default: '8080', doc: 'HTTP port of the REST API and the websocket (0 = any free port).' },
  { env: 'AUTH_PORT', default: '(unset)', doc: 'Serve /auth/* on its own port; unset = on PORT.' },
  { env: 'HOST', default: '127.0.0.1', doc: 'Interface to listen on (0.0.0.0 for all).' },
  { env: 'DATA_DIR', default: './data', doc: 'Journal, snapshots, read model, auth database and JWT key.' },
  { env: 'CHAIN_ID', default: '16182', doc: 'Chain id wallets sign SIWE and EIP-712 messages with.' },
  { env: 'CHANNEL_ENV', default: 'futures-perp-dev', doc: 'Prefix of real-time channel names ({env}:{name}).' },
  { env: 'ACCESS_TOKEN_TTL_SEC', default: '300', doc: 'Lifetime of access JWTs, seconds.' },
  { env: 'REFRESH_TOKEN_TTL_SEC', default: '2592000', doc: 'Lifetime of refresh tokens, seconds (30 days).' },
  { env: 'SIGNATURE_THREADS', default: '2', doc: 'Worker threads recovering EIP-712 signers (0 = in-process).' },
  { env: 'JOURNAL_WRITER', default: 'thread', doc: 'Where journal commits (and their fsync) run: thread = a writer thread, so the event loop keeps serving requests meanwhile; inline = on the event loop.' },
  { env: 'READ_MODEL_WRITER', default: 'thread', doc: 'Where engine events are written into the history read model (read.db): thread = a worker thread; inline = on the event loop.' },
  { env: 'SNAPSHOT_EVERY_COMMANDS', default: '100000', doc: 'Engine snapshot after this many commands (0 = never by count).' },
  { env: 'SNAPSHOT_EVERY_MS', default: '300000', doc: 'Engine snapshot after this much command time, ms (0 = never by time).' },
  { env: 'BOOK_PUBLISH_INTERVAL_MS', default: '50', doc: 'Minimum interval between order-book publications per channel.' },
  { env: 'HEARTBEAT_MS', default: '5000', doc: 'Period of the {env}:heartbeat publication, ms.' },
  { env: 'FAUCET_AMOUNT', default: '10000', doc: 'USDT credited by the demo faucet per call (0 = faucet off).' },
  { env: 'LOG_LEVEL', default: 'info', doc: 'pino log level (trace, debug, info, warn, error, silent).' },
  { env: 'SEED_DEMO', default: 'true', doc: 'On an empty exchange, create the demo instruments (BTCUSDT, ETHUSDT) and start prices.' },
];

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string, def: string): string {
  const v = env[name];
  return v === undefined || v.trim() === '' ? def : v.trim();
}

function int(env: Env, name: string, def: number, min = 0): number {
  const raw = str(env, name, String(def));
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min) throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  return n;
}

function bool(env: Env, name: string, def: boolean): boolean {
  const raw = str(env, name, String(def)).toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

export function loadConfig(env: Env = process.env): ExchangeConfig {
  const authPortRaw = str(env, 'AUTH_PORT', '');
  const faucet = str(env, 'FAUCET_AMOUNT', '10000');
  if (!/^\d+(\.\d+)?$/.test(faucet)) throw new ConfigError(`FAUCET_AMOUNT must be a decimal, got "${faucet}"`);
  const journalWriter = str(env, 'JOURNAL_WRITER', 'thread');
  if (journalWriter !== 'thread' && journalWriter !== 'inline') throw new ConfigError(`JOURNAL_WRITER must be thread or inline, got "${journalWriter}"`);
  const readModelWriter = str(env, 'READ_MODEL_WRITER', 'thread');
  if (readModelWriter !== 'thread' && readModelWriter !== 'inline') throw new ConfigError(`READ_MODEL_WRITER must be thread or inline, got "${readModelWriter}"`);
  const chainId = str(env, 'CHAIN_ID', '16182');
  if (!/^\d+$/.test(chainId)) throw new ConfigError(`CHAIN_ID must be a decimal integer, got "${chainId}"`);
  return {
    port: int(env, 'PORT', 8080),
    authPort: authPortRaw === '' ? undefined : int(env, 'AUTH_PORT', 0),
    host: str(env, 'HOST', '127.0.0.1'),
    dataDir: str(env, 'DATA_DIR', './data'),
    chainId,
    channelEnv: str(env, 'CHANNEL_ENV', 'futures-perp-dev'),
    accessTokenTtlSec: int(env, 'ACCESS_TOKEN_TTL_SEC', 300, 1),
    refreshTokenTtlSec: int(env, 'REFRESH_TOKEN_TTL_SEC', 2592000, 1),
    signatureThreads: int(env, 'SIGNATURE_THREADS', 2),
    journalWriter,
    readModelWriter,
    snapshotEveryCommands: int(env, 'SNAPSHOT_EVERY_COMMANDS', 100000),
    snapshotEveryMs: int(env, 'SNAPSHOT_EVERY_MS', 300000),
    bookPublishIntervalMs: int(env, 'BOOK_PUBLISH_INTERVAL_MS', 50),
    heartbeatMs: int(env, 'HEARTBEAT_MS', 5000, 1),
    faucetAmount: faucet,
    logLevel: str(env, 'LOG_LEVEL', 'info'),
    seedDemo: bool(env, 'SEED_DEMO', true),
  };
}
