// Over 400 lines: the table of every setting, one entry each, so docs:config lists them from one place.
/**
 * Process configuration from environment variables. Every variable has a default; `CONFIG_VARS` declares
 * them all, and docs/configuration.md's table is generated from it (`npm run docs:config`).
 */
import { readFileSync } from 'node:fs';
import type { RealtimeLimits } from '../realtime/limits.js';
import { DEFAULT_MARKET_MAKER_SETTINGS, type MarketMakerSettings } from '../simulation/market-maker.js';
import { proxyTrust } from '../api/client-ip.js';
import { DEFAULT_API_CONFIG, DEFAULT_HTTP_TIMEOUTS, type HttpTimeouts } from '../api/ports.js';
import { DEFAULT_RATE_LIMITS, type Budget, type RateLimits } from '../api/rate-limits.js';
import { DEFAULT_NONCE_LIMITS } from '../auth/nonce-store.js';
import type { NonceLimits } from '../auth/ports.js';
import { DEFAULT_ALLOWED_DOMAINS } from '../auth/origin-allow-list.js';
import { isClusterName } from '../journal/jetstream-names.js';
import type { NatsAuth } from '../journal/nats-connection.js';

export interface NatsConfig {
  url: string;
  /** Names this exchange's stream and bucket (perpx.<cluster>.log.* …), so several can share one NATS. */
  cluster: string;
  /** Replicas of the stream and bucket when they are created: 1 on one server, 3 in production. */
  streamReplicas: number;
  /** The engine leader's lease in JetStream KV lapses this long after its last renewal, ms (`perpx engine`). */
  leaderLeaseTtlMs: number;
  /** Credentials every connection of this process presents (its role's user: docs/operations.md). */
  auth: NatsAuth;
}

export interface ExchangeConfig {
  port: number;
  /** Separate port for /auth/*; undefined = served by the main server. */
  authPort: number | undefined;
  host: string;
  dataDir: string;
  chainId: string;
  channelEnv: string;
  accessTokenTtlSec: number;
  /** Lifetime of market-data tokens (GET /api/dx-feed/auth), seconds. */
  marketDataTokenTtlSec: number;
  refreshTokenTtlSec: number;
  /** Rotated refresh tokens yield the same successor for this long (concurrent refreshes), seconds. */
  refreshGraceSec: number;
  signatureThreads: number;
  /** 'thread': journal commits on a writer thread (default); 'inline': on the event loop. */
  journalWriter: 'thread' | 'inline';
  /** 'sqlite': journal and snapshots in DATA_DIR (default); 'jetstream': on NATS JetStream (`nats`). */
  journal: 'sqlite' | 'jetstream';
  /** The NATS cluster the JetStream journal and snapshots live on. */
  nats: NatsConfig;
  /** 'thread': the read model is projected on a worker thread (default); 'inline': on the event loop. */
  readModelWriter: 'thread' | 'inline';
  /** Minimum ms between two read-model transactions while no read waits for the projection. */
  readModelLingerMs: number;
  /** PostgreSQL connection string for the history read model; '' = SQLite in DATA_DIR/read.db. */
  readStoreUrl: string;
  /** 'sqlite': users, sessions, keys, account tables in DATA_DIR/auth.db (default); 'postgres': all at `authDatabaseUrl`, revocations on NATS. */
  authStore: 'sqlite' | 'postgres';
  /** PostgreSQL connection string of the shared auth store (AUTH_STORE=postgres). */
  authDatabaseUrl: string;
  /** 'memory': real-time history in this process (default); 'nats': on a JetStream stream shared by every gateway. */
  realtimeBroker: 'memory' | 'nats';
  snapshotEveryCommands: number;
  snapshotEveryMs: number;
  /** 'replica': snapshots taken by a replica engine on a worker thread (default); 'inline': on the event loop. */
  snapshotWriter: 'standby' | 'replica' | 'inline';
  /** Graceful stop: time HTTP requests in flight get to finish before the sequencer stops, ms. */
  shutdownGraceMs: number;
  bookPublishIntervalMs: number;
  /** Real-time write delay: messages queued this long leave in one frame (0 = once per event-loop turn). */
  wsWriteDelayMs: number;
  /** Websocket abuse limits: connection caps, per-IP connection rate, per-connection command rates (0 = none). */
  wsLimits: Required<RealtimeLimits>;
  heartbeatMs: number;
  faucetAmount: string;
  chainDelayMs: number;
  chainFailureRate: number;
  chainSeed: string;
  logLevel: string;
  seedDemo: boolean;
  /** demo: bots, demo wallet and faucet on by default; production: all off by default. */
  environment: 'demo' | 'production';
  marketMakers: MarketMakerConfig;
  /** Create and fund a demo wallet and print its private key at start-up. */
  demoWallet: boolean;
  /** Automatic index source: random walk (default), CSV replay, or none (operator push only). */
  indexFeed: 'random' | 'csv' | 'off';
  indexFeedIntervalMs: number;
  /** Random walk: standard deviation of one step, decimal fraction of the price. */
  indexFeedVolatility: string;
  indexFeedSeed: number;
  /** CSV replay: `INSTRUMENT=path[,INSTRUMENT=path…]`. */
  indexFeedCsv: string;
  indexFeedCsvSpeed: number;
  /** Funding settlement period, ms (0 = no funding). */
  fundingIntervalMs: number;
  /** Time each settlement's rate covers, ms (the rate scales with it); default (and 0) = fundingIntervalMs. */
  fundingRatePeriodMs: number;
  /** Proxies (IPs/CIDRs) whose X-Forwarded-For is believed; empty = none. */
  trustProxy: string[];
  /** SIWE domain/URI patterns sign-in accepts (`host`, `host:port`, `host:*`). */
  siweDomains: string[];
  httpBodyLimit: number;
  httpTimeouts: HttpTimeouts;
  rateLimits: RateLimits;
  nonceLimits: NonceLimits;
}

export interface MarketMakerConfig extends MarketMakerSettings {
  /** Number of bot accounts (0 = off). */
  count: number;
  /** Milliseconds between quoting rounds. */
  intervalMs: number;
  /** USDT each bot is topped up to on start. */
  funds: string;
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
  { env: 'DATA_DIR', default: './data', doc: 'Journal, snapshots, read model, auth database and JWT key. Owner-only: the process runs with umask 077 and tightens older files at start.' },
  { env: 'CHAIN_ID', default: '16182', doc: 'Chain id wallets sign SIWE and EIP-712 messages with.' },
  { env: 'SIWE_DOMAINS', default: DEFAULT_ALLOWED_DOMAINS.join(','), doc: 'Comma-separated hosts a sign-in (SIWE) message may name as its domain and URI: `host` (no port), `host:port` or `host:*` (any port). Add the host name the web terminal is served under, e.g. `trade.example.com`; https URIs only, except on loopback hosts.' },
  { env: 'CHANNEL_ENV', default: 'futures-perp-dev', doc: 'Prefix of real-time channel names ({env}:{name}).' },
  { env: 'ACCESS_TOKEN_TTL_SEC', default: '300', doc: 'Lifetime of access JWTs, seconds.' },
  { env: 'MARKET_DATA_TOKEN_TTL_SEC', default: '600', doc: 'Lifetime of market-data tokens (GET /api/dx-feed/auth: a websocket connect token for the public channels only), seconds.' },
  { env: 'REFRESH_TOKEN_TTL_SEC', default: '2592000', doc: 'Lifetime of refresh tokens, seconds (30 days).' },
  { env: 'REFRESH_GRACE_SEC', default: '10', doc: 'Grace window after a refresh-token rotation, seconds: presenting the same (rotated) refresh token again within it returns the same successor and a fresh access token, so a client refreshing from several requests at once keeps its session; after it, the rotated token counts as reuse and revokes the session (0 = no grace). See docs/security.md.' },
  { env: 'SIGNATURE_THREADS', default: '2', doc: 'Worker threads recovering EIP-712 signers (0 = in-process).' },
  { env: 'JOURNAL_WRITER', default: 'thread', doc: 'Where journal commits (and their fsync) run: thread = a writer thread, so the event loop keeps serving requests meanwhile; inline = on the event loop.' },
  { env: 'JOURNAL', default: 'sqlite', doc: 'Where the command journal and the engine snapshots live: sqlite = DATA_DIR/journal.db and DATA_DIR/snapshots; jetstream = a NATS JetStream stream and object store (NATS_URL, CLUSTER_NAME), replicated when NATS_STREAM_REPLICAS > 1 (docs/operations.md, "JetStream journal").' },
  { env: 'NATS_URL', default: 'nats://127.0.0.1:4222', doc: 'NATS server(s), comma-separated, for JOURNAL=jetstream, REALTIME_BROKER=nats and AUTH_STORE=postgres (session revocations).' },
  { env: 'AUTH_STORE', default: 'sqlite', doc: 'Where users, profiles, trade signals, mobile-app rules, OAuth integrations and grants, sessions, API keys, sign-in nonces (sqlite: in memory), the JWT signing key and the operator token live: sqlite = DATA_DIR/auth.db and files in DATA_DIR; postgres = AUTH_DATABASE_URL, shared by every gateway, no auth.db (the operator token is copied to DATA_DIR/operator-token for the CLI), with session revocations broadcast on NATS (NATS_URL, subject perpx.<CLUSTER_NAME>.sessions.revoked). See docs/operations.md, "Shared state".' },
  { env: 'AUTH_DATABASE_URL', default: '(unset)', doc: 'PostgreSQL connection string (postgres://…) of the auth store; required with AUTH_STORE=postgres. Its tables are created on start.' },
  { env: 'REALTIME_BROKER', default: 'memory', doc: 'Where real-time publications and their history go: memory = this process; nats = the JetStream stream PERPX_<CLUSTER_NAME>_REALTIME (subjects perpx.<CLUSTER_NAME>.rt.*), so a client recovers on any gateway (docs/operations.md, "Shared state").' },
  { env: 'CLUSTER_NAME', default: 'perpx', doc: 'Names the JetStream resources (stream PERPX_<name>_COMMANDS on subjects perpx.<name>.log.*, bucket perpx-<name>-snapshots): letters, digits, _ and -.' },
  { env: 'NATS_CREDS', default: '(unset)', doc: 'Path of a NATS credentials file (user JWT + nkey seed, as `nsc` writes them) every NATS connection of this process presents; read again on each reconnect. One of NATS_CREDS, NATS_USER + NATS_PASSWORD or NATS_TOKEN at most. Each cluster role connects as its own user, whose permissions say what it may publish (docs/cluster.md, "NATS credentials and permissions").' },
  { env: 'NATS_USER', default: '(unset)', doc: 'NATS user name every NATS connection of this process presents, with NATS_PASSWORD (both or neither): the role\'s user in the `authorization` block scripts/cluster/nats-permissions.ts writes.' },
  { env: 'NATS_PASSWORD', default: '(unset)', doc: 'Password of NATS_USER.' },
  { env: 'NATS_TOKEN', default: '(unset)', doc: 'NATS authentication token (a server with one `authorization { token }`: no per-role permissions, so every process may do everything); not with NATS_CREDS or NATS_USER.' },
  { env: 'NATS_STREAM_REPLICAS', default: '1', doc: 'Replicas of the command stream and snapshot bucket when first created (1 on a single NATS server; 3 on the production three-node cluster). Changing it later: `nats stream edit`.' },
  { env: 'LEADER_LEASE_TTL_MS', default: '2500', doc: 'Cluster engines (`perpx engine`, one leader and any number of hot standbys): the leader lease in JetStream KV (bucket perpx-<CLUSTER_NAME>-leader) lapses this long after the leader last renewed it (it renews every fifth of it); a standby then takes over. Keep it above the worst event-loop stall of the leader (docs/cluster.md, "Failover").' },
  { env: 'READ_STORE_URL', default: '(unset)', doc: 'PostgreSQL connection string (postgres://…) for the history read model; unset = SQLite in DATA_DIR/read.db. The read model is rebuilt from the journal if it is empty or behind.' },
  { env: 'READ_MODEL_WRITER', default: 'thread', doc: 'Where engine events are written into the history read model (read.db): thread = a worker thread; inline = on the event loop.' },
  { env: 'READ_MODEL_LINGER_MS', default: '50', doc: 'Under load, the read model is written at most once per this many ms (one transaction for everything that arrived meanwhile: far less work per order than many small ones). A history read does not wait out the linger: one that needs the newest commands projected starts the write at once (it then waits for that write, up to this many ms of commands).' },
  { env: 'SNAPSHOT_EVERY_COMMANDS', default: '100000', doc: 'Engine snapshot after this many commands (0 = never by count).' },
  { env: 'SNAPSHOT_EVERY_MS', default: '300000', doc: 'Engine snapshot after this much command time, ms (0 = never by time).' },
  { env: 'SNAPSHOT_WRITER', default: 'standby', doc: 'Who takes the periodic engine snapshots: standby = in a cluster, the hot standby engines write them from the state they follow, and the leader writes its own (as replica) only when no standby snapshot is fresh (none within 2× the interval; a one-engine cluster); a single process works as replica; replica = a copy of the engine on a worker thread that follows the journal, so matching never pauses for a snapshot (costs a second copy of the engine state in memory and re-applying each command once); inline = captured on the event loop (pauses it ~1 ms per 1,000 resting orders).' },
  { env: 'SHUTDOWN_GRACE_MS', default: '10000', doc: 'Graceful stop: how long HTTP requests already in flight may take to finish before the sequencer stops.' },
  { env: 'BOOK_PUBLISH_INTERVAL_MS', default: '50', doc: 'Minimum interval between order-book publications per channel.' },
  { env: 'WS_WRITE_DELAY_MS', default: '0', doc: "Real-time write delay, ms: how long a connection's first queued message waits so more leave in the same websocket frame. 0 = written at once when idle; under load connections are written in turn and what queues meanwhile shares the frame (adaptive batching, docs/architecture.md). A delay only adds latency on top." },
  { env: 'WS_MAX_CONNECTIONS', default: '10000', doc: 'Open websocket connections at most, over all clients; further upgrades are answered 503 (0 = no cap).' },
  { env: 'WS_MAX_CONNECTIONS_PER_IP', default: '100', doc: 'Open websocket connections at most per client address; further upgrades are answered 429 (0 = no cap).' },
  { env: 'WS_CONNECTS_PER_IP_PER_SEC', default: '5', doc: 'New websocket connections per client address and second, sustained; beyond it (and the burst) upgrades are answered 429 (0 = no limit).' },
  { env: 'WS_CONNECTS_PER_IP_BURST', default: '20', doc: 'New websocket connections one client address may open at once before WS_CONNECTS_PER_IP_PER_SEC applies.' },
  { env: 'WS_MESSAGES_PER_SEC', default: '100', doc: 'Messages (commands and pongs) one websocket connection may send per second, sustained; a command beyond it gets error 111 "too many requests" (0 = no limit).' },
  { env: 'WS_MESSAGES_BURST', default: '400', doc: 'Messages one websocket connection may send at once before WS_MESSAGES_PER_SEC applies.' },
  { env: 'WS_SUBSCRIBES_PER_SEC', default: '10', doc: 'subscribe commands per websocket connection and second, sustained; beyond it: error 111, which the centrifuge client retries with backoff (0 = no limit).' },
  { env: 'WS_SUBSCRIBES_BURST', default: '100', doc: 'subscribe commands one websocket connection may send at once (a client subscribing to everything on start) before WS_SUBSCRIBES_PER_SEC applies.' },
  { env: 'WS_HISTORY_PER_SEC', default: '2', doc: 'history commands per websocket connection and second, sustained; beyond it: error 111 (0 = no limit).' },
  { env: 'WS_HISTORY_BURST', default: '20', doc: 'history commands one websocket connection may send at once before WS_HISTORY_PER_SEC applies.' },
  { env: 'WS_MAX_REFUSALS_PER_MIN', default: '60', doc: 'Rate-limit refusals (error 111) one websocket connection may collect per minute; the next one disconnects it with 3013 "too many requests" (the client reconnects with backoff; 0 = never disconnect).' },
  { env: 'HEARTBEAT_MS', default: '5000', doc: 'Period of the {env}:heartbeat publication and of the matcher-state snapshot on {env}:info (also published on every change), ms.' },
  { env: 'FAUCET_AMOUNT', default: '10000 (demo), 0 (production)', doc: 'USDT credited by the demo faucet per call (0 = faucet off).' },
  { env: 'CHAIN_DELAY_MS', default: '3000', doc: 'Simulated chain: time until a withdrawal or deposit is final, ms.' },
  { env: 'CHAIN_FAILURE_RATE', default: '0', doc: 'Simulated chain: share of withdrawals that fail (0..1); failed ones return the funds.' },
  { env: 'CHAIN_SEED', default: 'perpx', doc: 'Simulated chain: seed that picks which withdrawals fail (stable per transfer id).' },
  { env: 'LOG_LEVEL', default: 'info', doc: 'pino log level (trace, debug, info, warn, error, silent).' },
  { env: 'INDEX_FEED', default: 'random', doc: 'Index price source: random (seeded random walk), csv (replay INDEX_FEED_CSV) or off (operator push only).' },
  { env: 'INDEX_FEED_INTERVAL_MS', default: '1000', doc: 'Random walk: one index price per instrument every this many ms.' },
  { env: 'INDEX_FEED_VOLATILITY', default: '0.0005', doc: 'Random walk: standard deviation of one step, as a fraction of the price.' },
  { env: 'INDEX_FEED_SEED', default: '1', doc: 'Random walk: generator seed (same seed, same price path).' },
  { env: 'INDEX_FEED_CSV', default: '(unset)', doc: 'CSV replay: INSTRUMENT=path[,INSTRUMENT=path…], files of "timestamp,price" lines (ms or ISO time).' },
  { env: 'INDEX_FEED_CSV_SPEED', default: '1', doc: 'CSV replay: speed factor applied to the gaps between timestamps.' },
  { env: 'FUNDING_INTERVAL_MS', default: '60000 (demo), 28800000 (production)', doc: 'Funding settlement period, ms (a minute in the demo so funding is visible at once; 8 h in production; 0 = no funding).' },
  { env: 'FUNDING_RATE_PERIOD_MS', default: '(= FUNDING_INTERVAL_MS)', doc: 'Time one settlement\'s rate covers (rate = 8 h rate × period / 8 h). A demo with short intervals sets 28800000 to pay a full 8 h rate each time.' },
  { env: 'SEED_DEMO', default: 'true (demo), false (production)', doc: 'On an empty exchange, create the demo instruments (BTCUSDT, ETHUSDT) and start prices.' },
  { env: 'PERPX_ENV', default: 'demo', doc: 'demo or production. production turns the defaults of MARKET_MAKERS, DEMO_WALLET, FAUCET_AMOUNT and SEED_DEMO off and settles funding every 8 h instead of every minute.' },
  { env: 'MARKET_MAKERS', default: '3 (demo), 0 (production)', doc: 'Number of market-making bot accounts quoting every tradable instrument (0 = off).' },
  { env: 'MM_INTERVAL_MS', default: '1000', doc: 'Milliseconds between market-maker quoting rounds.' },
  { env: 'MM_SPREAD_BPS', default: '10', doc: 'Full quoted spread around the mark price, basis points (each further bot quotes 25% wider).' },
  { env: 'MM_LEVELS', default: '5', doc: 'Price levels per side per bot (max 10).' },
  { env: 'MM_LEVEL_STEP_BPS', default: '5', doc: 'Distance between a bot\'s price levels, basis points.' },
  { env: 'MM_ORDER_NOTIONAL', default: '5000', doc: 'Average notional per quoted level, USDT.' },
  { env: 'MM_AGGRESSIVENESS', default: '0.3', doc: 'Probability (0..1) per bot, instrument and round of an order crossing the spread (makes trades).' },
  { env: 'MM_LEVERAGE', default: '10', doc: 'Leverage of the bots\' orders.' },
  { env: 'MM_MAX_INVENTORY', default: '100000', doc: 'Position notional (USDT) at which a bot skews its quotes fully against its inventory.' },
  { env: 'MM_FUNDS', default: '1000000', doc: 'USDT each bot account is topped up to at start.' },
  { env: 'DEMO_WALLET', default: 'true (demo), false (production)', doc: 'Create a funded demo wallet (DATA_DIR/demo-wallet.json) and print its private key at start-up.' },
  { env: 'TRUST_PROXY', default: '(unset)', doc: 'Comma-separated IPs/CIDRs (or loopback, linklocal, uniquelocal) of the reverse proxies in front of the server: only a request from one of them has its X-Forwarded-For believed for the client IP that per-IP budgets and websocket caps count. Unset = X-Forwarded-For is ignored.' },
  { env: 'HTTP_BODY_LIMIT', default: String(DEFAULT_API_CONFIG.bodyLimit), doc: 'Largest request body, bytes (larger: 413 PAYLOAD_TOO_LARGE).' },
  { env: 'HTTP_HEADERS_TIMEOUT_MS', default: String(DEFAULT_HTTP_TIMEOUTS.headersMs), doc: 'A request\'s headers must be in within this many ms of its start, or the connection is closed (at most HTTP_REQUEST_TIMEOUT_MS).' },
  { env: 'HTTP_REQUEST_TIMEOUT_MS', default: String(DEFAULT_HTTP_TIMEOUTS.requestMs), doc: 'The whole request (headers and body) must be in within this many ms of its start, or it is answered 408 and the connection closed.' },
  { env: 'HTTP_CONNECTION_TIMEOUT_MS', default: String(DEFAULT_HTTP_TIMEOUTS.connectionMs), doc: 'A connection with a request open and no traffic for this many ms is closed.' },
  { env: 'HTTP_KEEP_ALIVE_TIMEOUT_MS', default: String(DEFAULT_HTTP_TIMEOUTS.keepAliveMs), doc: 'An idle keep-alive connection is closed after this many ms without a new request (above a load balancer\'s idle timeout, so it closes first).' },
  ...budgetVars('IP', DEFAULT_RATE_LIMITS.ip, 'per client IP, counting every request'),
  ...budgetVars('SIGN_IN', DEFAULT_RATE_LIMITS.signIn, 'per client IP for nonce, sign-in, token refresh and the unauthenticated OAuth routes'),
  ...budgetVars('ORDERS', DEFAULT_RATE_LIMITS.orders, 'per API key, OAuth grant or user (access token) for order, position and TpSl changes'),
  ...budgetVars('FAUCET', DEFAULT_RATE_LIMITS.faucet, 'per API key, OAuth grant or user for POST /api/user/faucet'),
  ...budgetVars('READS', DEFAULT_RATE_LIMITS.reads, 'per API key, OAuth grant or user for every other authenticated request'),
  { env: 'AUTH_NONCES_PER_IP', default: String(DEFAULT_NONCE_LIMITS.perClient), doc: 'Outstanding sign-in nonces one client IP may hold (with AUTH_STORE=postgres on all gateways together); beyond it its own oldest is dropped (so one client cannot push out everyone else\'s).' },
  { env: 'AUTH_NONCES_MAX', default: String(DEFAULT_NONCE_LIMITS.capacity), doc: 'Outstanding sign-in nonces kept in all (in memory; with AUTH_STORE=postgres in the shared auth_nonces table, trimmed by each gateway\'s sweep every minute); beyond it the oldest are dropped.' },
];

function budgetVars(name: string, def: Budget, what: string): ConfigVar[] {
  return [
    { env: `RATE_LIMIT_${name}_MAX`, default: String(def.max), doc: `Requests allowed per window ${what}; beyond it 429 RATE_LIMITED with Retry-After (0 = no limit).` },
    { env: `RATE_LIMIT_${name}_WINDOW_MS`, default: String(def.windowMs), doc: `Window of RATE_LIMIT_${name}_MAX, ms.` },
  ];
}

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

function decimal(env: Env, name: string, def: string): string {
  const v = str(env, name, def);
  if (!/^\d+(\.\d+)?$/.test(v)) throw new ConfigError(`${name} must be a decimal, got "${v}"`);
  return v;
}

function fraction(env: Env, name: string, def: number): number {
  const raw = str(env, name, String(def));
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new ConfigError(`${name} must be a number from 0 to 1, got "${raw}"`);
  return n;
}

function indexFeedKind(raw: string): ExchangeConfig['indexFeed'] {
  if (raw === 'random' || raw === 'csv' || raw === 'off') return raw;
  throw new ConfigError(`INDEX_FEED must be random, csv or off, got "${raw}"`);
}

function decimalFraction(env: Env, name: string, def: string): string {
  const raw = str(env, name, def);
  if (!/^(0(\.\d{1,8})?|1(\.0{1,8})?)$/.test(raw)) throw new ConfigError(`${name} must be a decimal fraction from 0 to 1 (8 places at most), got "${raw}"`);
  return raw;
}

function budget(env: Env, name: string, def: Budget): Budget {
  return { max: int(env, `RATE_LIMIT_${name}_MAX`, def.max), windowMs: int(env, `RATE_LIMIT_${name}_WINDOW_MS`, def.windowMs, 1) };
}

function trustProxyList(raw: string): string[] {
  const list = raw.split(',').map((x) => x.trim()).filter((x) => x !== '');
  try {
    proxyTrust(list);
  } catch (err) {
    throw new ConfigError(`TRUST_PROXY must list IP addresses or CIDR ranges, got "${raw}": ${(err as Error).message}`);
  }
  return list;
}

function siweDomainList(raw: string): string[] {
  const list = raw.split(',').map((x) => x.trim()).filter((x) => x !== '');
  for (const p of list) {
    if (!/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:(\d{1,5}|\*))?$/.test(p)) {
      throw new ConfigError(`SIWE_DOMAINS must list host, host:port or host:* patterns, got "${p}"`);
    }
  }
  if (list.length === 0) throw new ConfigError('SIWE_DOMAINS must name at least one host');
  return list;
}

function httpTimeouts(env: Env): HttpTimeouts {
  const d = DEFAULT_HTTP_TIMEOUTS;
  const t = {
    headersMs: int(env, 'HTTP_HEADERS_TIMEOUT_MS', d.headersMs, 1),
    requestMs: int(env, 'HTTP_REQUEST_TIMEOUT_MS', d.requestMs, 1),
    connectionMs: int(env, 'HTTP_CONNECTION_TIMEOUT_MS', d.connectionMs, 1),
    keepAliveMs: int(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', d.keepAliveMs, 1),
  };
  if (t.headersMs > t.requestMs) throw new ConfigError(`HTTP_HEADERS_TIMEOUT_MS (${t.headersMs}) must not exceed HTTP_REQUEST_TIMEOUT_MS (${t.requestMs})`);
  return t;
}

/** At most one way to authenticate: the server checks one, and a second would silently go unused. */
function natsAuth(env: Env): NatsAuth {
  const creds = str(env, 'NATS_CREDS', '');
  const user = str(env, 'NATS_USER', '');
  const password = env.NATS_PASSWORD ?? '';
  const token = env.NATS_TOKEN ?? '';
  const given = [creds && 'NATS_CREDS', (user || password) && 'NATS_USER/NATS_PASSWORD', token && 'NATS_TOKEN'].filter(Boolean);
  if (given.length > 1) throw new ConfigError(`NATS credentials: set one of NATS_CREDS, NATS_USER + NATS_PASSWORD or NATS_TOKEN, got ${given.join(' and ')}`);
  if ((user === '') !== (password === '')) throw new ConfigError('NATS_USER and NATS_PASSWORD go together: set both or neither');
  if (creds !== '') {
    let text: string;
    try {
      text = readFileSync(creds, 'utf8');
    } catch (err) {
      throw new ConfigError(`NATS_CREDS: cannot read ${creds} (${(err as Error).message})`);
    }
    if (!/-----BEGIN NATS USER JWT-----/.test(text) || !/-----BEGIN USER NKEY SEED-----/.test(text)) {
      throw new ConfigError(`NATS_CREDS: ${creds} is not a NATS credentials file (a user JWT and an nkey seed block)`);
    }
    return { kind: 'creds', file: creds };
  }
  if (user !== '') return { kind: 'password', user, password };
  if (token !== '') return { kind: 'token', token };
  return { kind: 'none' };
}

function postgresUrl(name: string, raw: string): string {
  if (raw !== '' && !/^postgres(ql)?:\/\//.test(raw)) throw new ConfigError(`${name} must be a postgres:// connection string, got "${raw}"`);
  return raw;
}

export function loadConfig(env: Env = process.env): ExchangeConfig {
  const environment = str(env, 'PERPX_ENV', 'demo');
  if (environment !== 'demo' && environment !== 'production') throw new ConfigError(`PERPX_ENV must be demo or production, got "${environment}"`);
  const demo = environment === 'demo';
  const authPortRaw = str(env, 'AUTH_PORT', '');
  const faucet = str(env, 'FAUCET_AMOUNT', demo ? '10000' : '0');
  if (!/^\d+(\.\d+)?$/.test(faucet)) throw new ConfigError(`FAUCET_AMOUNT must be a decimal, got "${faucet}"`);
  const journalWriter = str(env, 'JOURNAL_WRITER', 'thread');
  if (journalWriter !== 'thread' && journalWriter !== 'inline') throw new ConfigError(`JOURNAL_WRITER must be thread or inline, got "${journalWriter}"`);
  const journal = str(env, 'JOURNAL', 'sqlite');
  if (journal !== 'sqlite' && journal !== 'jetstream') throw new ConfigError(`JOURNAL must be sqlite or jetstream, got "${journal}"`);
  const cluster = str(env, 'CLUSTER_NAME', 'perpx');
  if (!isClusterName(cluster)) throw new ConfigError(`CLUSTER_NAME must be 1-64 letters, digits, _ or -, got "${cluster}"`);
  const authStore = str(env, 'AUTH_STORE', 'sqlite');
  if (authStore !== 'sqlite' && authStore !== 'postgres') throw new ConfigError(`AUTH_STORE must be sqlite or postgres, got "${authStore}"`);
  const authDatabaseUrl = postgresUrl('AUTH_DATABASE_URL', str(env, 'AUTH_DATABASE_URL', ''));
  if (authStore === 'postgres' && authDatabaseUrl === '') throw new ConfigError('AUTH_STORE=postgres needs AUTH_DATABASE_URL');
  const realtimeBroker = str(env, 'REALTIME_BROKER', 'memory');
  if (realtimeBroker !== 'memory' && realtimeBroker !== 'nats') throw new ConfigError(`REALTIME_BROKER must be memory or nats, got "${realtimeBroker}"`);
  const readModelWriter = str(env, 'READ_MODEL_WRITER', 'thread');
  if (readModelWriter !== 'thread' && readModelWriter !== 'inline') throw new ConfigError(`READ_MODEL_WRITER must be thread or inline, got "${readModelWriter}"`);
  const snapshotWriter = str(env, 'SNAPSHOT_WRITER', 'standby');
  if (snapshotWriter !== 'standby' && snapshotWriter !== 'replica' && snapshotWriter !== 'inline') {
    throw new ConfigError(`SNAPSHOT_WRITER must be standby, replica or inline, got "${snapshotWriter}"`);
  }
  const chainId = str(env, 'CHAIN_ID', '16182');
  if (!/^\d+$/.test(chainId)) throw new ConfigError(`CHAIN_ID must be a decimal integer, got "${chainId}"`);
  const failureRaw = str(env, 'CHAIN_FAILURE_RATE', '0');
  const chainFailureRate = Number(failureRaw);
  if (!/^[0-9.]+$/.test(failureRaw) || !(chainFailureRate >= 0 && chainFailureRate <= 1)) {
    throw new ConfigError(`CHAIN_FAILURE_RATE must be a number within 0..1, got "${failureRaw}"`);
  }
  return {
    port: int(env, 'PORT', 8080),
    authPort: authPortRaw === '' ? undefined : int(env, 'AUTH_PORT', 0),
    host: str(env, 'HOST', '127.0.0.1'),
    dataDir: str(env, 'DATA_DIR', './data'),
    chainId,
    channelEnv: str(env, 'CHANNEL_ENV', 'futures-perp-dev'),
    accessTokenTtlSec: int(env, 'ACCESS_TOKEN_TTL_SEC', 300, 1),
    marketDataTokenTtlSec: int(env, 'MARKET_DATA_TOKEN_TTL_SEC', 600, 1),
    refreshTokenTtlSec: int(env, 'REFRESH_TOKEN_TTL_SEC', 2592000, 1),
    refreshGraceSec: int(env, 'REFRESH_GRACE_SEC', 10),
    signatureThreads: int(env, 'SIGNATURE_THREADS', 2),
    journalWriter,
    journal,
    nats: { url: str(env, 'NATS_URL', 'nats://127.0.0.1:4222'), cluster, streamReplicas: int(env, 'NATS_STREAM_REPLICAS', 1, 1), leaderLeaseTtlMs: int(env, 'LEADER_LEASE_TTL_MS', 2500, 500), auth: natsAuth(env) },
    readModelWriter,
    readModelLingerMs: int(env, 'READ_MODEL_LINGER_MS', 50),
    readStoreUrl: postgresUrl('READ_STORE_URL', str(env, 'READ_STORE_URL', '')),
    authStore,
    authDatabaseUrl,
    realtimeBroker,
    snapshotEveryCommands: int(env, 'SNAPSHOT_EVERY_COMMANDS', 100000),
    snapshotEveryMs: int(env, 'SNAPSHOT_EVERY_MS', 300000),
    snapshotWriter,
    shutdownGraceMs: int(env, 'SHUTDOWN_GRACE_MS', 10000),
    bookPublishIntervalMs: int(env, 'BOOK_PUBLISH_INTERVAL_MS', 50),
    wsWriteDelayMs: int(env, 'WS_WRITE_DELAY_MS', 0),
    wsLimits: {
      maxConnections: int(env, 'WS_MAX_CONNECTIONS', 10_000),
      maxConnectionsPerIp: int(env, 'WS_MAX_CONNECTIONS_PER_IP', 100),
      connectsPerIp: { perSecond: int(env, 'WS_CONNECTS_PER_IP_PER_SEC', 5), burst: int(env, 'WS_CONNECTS_PER_IP_BURST', 20, 1) },
      messages: { perSecond: int(env, 'WS_MESSAGES_PER_SEC', 100), burst: int(env, 'WS_MESSAGES_BURST', 400, 1) },
      subscribes: { perSecond: int(env, 'WS_SUBSCRIBES_PER_SEC', 10), burst: int(env, 'WS_SUBSCRIBES_BURST', 100, 1) },
      histories: { perSecond: int(env, 'WS_HISTORY_PER_SEC', 2), burst: int(env, 'WS_HISTORY_BURST', 20, 1) },
      maxRefusalsPerMinute: int(env, 'WS_MAX_REFUSALS_PER_MIN', 60),
    },
    heartbeatMs: int(env, 'HEARTBEAT_MS', 5000, 1),
    faucetAmount: faucet,
    chainDelayMs: int(env, 'CHAIN_DELAY_MS', 3000),
    chainFailureRate,
    chainSeed: str(env, 'CHAIN_SEED', 'perpx'),
    logLevel: str(env, 'LOG_LEVEL', 'info'),
    seedDemo: bool(env, 'SEED_DEMO', demo),
    environment,
    marketMakers: {
      count: int(env, 'MARKET_MAKERS', demo ? 3 : 0),
      intervalMs: int(env, 'MM_INTERVAL_MS', 1000, 10),
      spreadBps: int(env, 'MM_SPREAD_BPS', DEFAULT_MARKET_MAKER_SETTINGS.spreadBps, 1),
      levels: Math.min(10, int(env, 'MM_LEVELS', DEFAULT_MARKET_MAKER_SETTINGS.levels, 1)),
      levelStepBps: int(env, 'MM_LEVEL_STEP_BPS', DEFAULT_MARKET_MAKER_SETTINGS.levelStepBps, 1),
      orderNotional: decimal(env, 'MM_ORDER_NOTIONAL', DEFAULT_MARKET_MAKER_SETTINGS.orderNotional),
      aggressiveness: fraction(env, 'MM_AGGRESSIVENESS', DEFAULT_MARKET_MAKER_SETTINGS.aggressiveness),
      leverage: int(env, 'MM_LEVERAGE', DEFAULT_MARKET_MAKER_SETTINGS.leverage, 1),
      maxInventory: decimal(env, 'MM_MAX_INVENTORY', DEFAULT_MARKET_MAKER_SETTINGS.maxInventory),
      funds: decimal(env, 'MM_FUNDS', '1000000'),
    },
    demoWallet: bool(env, 'DEMO_WALLET', demo),
    indexFeed: indexFeedKind(str(env, 'INDEX_FEED', 'random')),
    indexFeedIntervalMs: int(env, 'INDEX_FEED_INTERVAL_MS', 1000, 10),
    indexFeedVolatility: decimalFraction(env, 'INDEX_FEED_VOLATILITY', '0.0005'),
    indexFeedSeed: int(env, 'INDEX_FEED_SEED', 1),
    indexFeedCsv: str(env, 'INDEX_FEED_CSV', ''),
    indexFeedCsvSpeed: int(env, 'INDEX_FEED_CSV_SPEED', 1, 1),
    fundingIntervalMs: int(env, 'FUNDING_INTERVAL_MS', demo ? 60_000 : 28_800_000),
    fundingRatePeriodMs: int(env, 'FUNDING_RATE_PERIOD_MS', int(env, 'FUNDING_INTERVAL_MS', demo ? 60_000 : 28_800_000)),
    trustProxy: trustProxyList(str(env, 'TRUST_PROXY', '')),
    siweDomains: siweDomainList(str(env, 'SIWE_DOMAINS', DEFAULT_ALLOWED_DOMAINS.join(','))),
    httpBodyLimit: int(env, 'HTTP_BODY_LIMIT', DEFAULT_API_CONFIG.bodyLimit, 1),
    httpTimeouts: httpTimeouts(env),
    rateLimits: {
      ip: budget(env, 'IP', DEFAULT_RATE_LIMITS.ip),
      signIn: budget(env, 'SIGN_IN', DEFAULT_RATE_LIMITS.signIn),
      orders: budget(env, 'ORDERS', DEFAULT_RATE_LIMITS.orders),
      faucet: budget(env, 'FAUCET', DEFAULT_RATE_LIMITS.faucet),
      reads: budget(env, 'READS', DEFAULT_RATE_LIMITS.reads),
    },
    nonceLimits: { perClient: int(env, 'AUTH_NONCES_PER_IP', DEFAULT_NONCE_LIMITS.perClient, 1), capacity: int(env, 'AUTH_NONCES_MAX', DEFAULT_NONCE_LIMITS.capacity, 1) },
  };
}
