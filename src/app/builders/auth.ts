/**
 * Sign-in and credentials: the auth store (users, sessions, API keys) and the account tables (profiles, trade
 * signals, mobile-app rules, OAuth) in DATA_DIR/auth.db with sign-in nonces in memory, or all in PostgreSQL shared
 * by every gateway with revocations broadcast on NATS; the auth service, and the operator CLI's token.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type pino from 'pino';
import { openAccountStores, type AccountDatabase, type AccountStores } from '../../accounts/index.js';
import { createAuthService, DEFAULT_NONCE_TTL_MS, DEFAULT_TOKEN_ISSUER, InProcessSessionEvents, loadOrCreateSigningKey, MarketDataTokens, NatsSessionEvents, PgAuthStore, PgNonceStore, PgSharedSecrets, SqliteAuthStore, type SigningKey } from '../../auth/index.js';
import { loadOrCreateOperatorToken, writeOperatorTokenCopy } from '../../auth/operator-token.js';
import type { AuthStore, NonceStore, SessionEvents } from '../../auth/ports.js';
import { clusterNames } from '../../journal/jetstream-names.js';
import { connectNats } from '../../journal/nats-connection.js';
import type { ExchangeConfig } from '../config.js';
import { closingOnFailure, type Built } from '../shutdown-registry.js';
import { resilientPgPool } from '../../store/pg-pool.js';

export type ExchangeAuth = Awaited<ReturnType<typeof createAuthService>>;

export interface AuthParts {
  auth: ExchangeAuth;
  /** Profiles, trade signals, mobile-app rules, OAuth (in auth.db, or in PostgreSQL with AUTH_STORE=postgres). */
  accountStores: AccountStores;
  /** Secret for `x-operator-token` (DATA_DIR/operator-token; with AUTH_STORE=postgres kept in PostgreSQL, copied there). */
  operatorToken: string;
  /** Websocket connect tokens for the public channels (GET /api/dx-feed/auth). */
  marketData: MarketDataTokens;
}

type AuthConfig = Pick<ExchangeConfig, 'chainId' | 'accessTokenTtlSec' | 'marketDataTokenTtlSec' | 'refreshTokenTtlSec' | 'refreshGraceSec' | 'nonceLimits' | 'siweDomains' | 'authStore' | 'authDatabaseUrl' | 'nats'>;

/** Revocations older than this cannot matter to a node that reconnects: their access tokens have expired. */
const missedWindowMs = (config: AuthConfig) => config.accessTokenTtlSec * 1000;

interface SharedState {
  store: AuthStore;
  /** Sign-in nonces in PostgreSQL, so any gateway consumes what another issued; undefined: in this process's memory. */
  nonces?: NonceStore;
  events: SessionEvents;
  /** The JWT signing key and the operator token: files in DATA_DIR, or one set in PostgreSQL for every gateway. */
  secrets: { signingKey: SigningKey; operatorToken: string };
  /** Where the account tables are: auth.db (opened only in SQLite mode), or a pool on the auth store's database. */
  accounts: AccountDatabase;
  close(): Promise<void>;
}

async function sharedSecrets(config: AuthConfig, dataDir: string): Promise<SharedState['secrets']> {
  if (config.authStore === 'sqlite') return { signingKey: await loadOrCreateSigningKey(dataDir), operatorToken: await loadOrCreateOperatorToken(dataDir) };
  const secrets = new PgSharedSecrets({ connectionString: config.authDatabaseUrl });
  try {
    await secrets.migrate();
    const signingKey = await secrets.signingKey();
    const operatorToken = await secrets.operatorToken();
    await writeOperatorTokenCopy(dataDir, operatorToken);
    return { signingKey, operatorToken };
  } finally {
    await secrets.close();
  }
}

/** The store, the revocation events and the secrets: in this process, or shared (PostgreSQL + NATS). Each part closes what it opened. */
async function openSharedState(config: AuthConfig, dataDir: string, log: pino.Logger): Promise<SharedState> {
  const onListenerError = (err: unknown) => log.warn({ err }, 'a session revocation listener failed');
  if (config.authStore === 'sqlite') {
    const db = new Database(join(dataDir, 'auth.db'));
    const closeDb = { close: async () => void db.close() };
    const secrets = await closingOnFailure(closeDb, async () => {
      db.pragma('journal_mode = WAL');
      return sharedSecrets(config, dataDir);
    });
    return { store: new SqliteAuthStore(db), events: new InProcessSessionEvents(onListenerError), secrets, accounts: { db }, close: closeDb.close };
  }
  // Nothing in auth.db: a gateway keeps no auth state of its own, so any gateway may serve any request.
  const secrets = await sharedSecrets(config, dataDir);
  const store = new PgAuthStore({ connectionString: config.authDatabaseUrl });
  const nonces = new PgNonceStore({ connectionString: config.authDatabaseUrl, ttlMs: DEFAULT_NONCE_TTL_MS, limits: config.nonceLimits });
  const accountsPool = resilientPgPool({ connectionString: config.authDatabaseUrl, max: 4 });
  const closeStores = { close: async () => void (await Promise.all([store.close(), nonces.close(), accountsPool.end()])) };
  const nc = await closingOnFailure(closeStores, () => connectNats(config.nats.url, 'perpx auth', config.nats.auth));
  const events = new NatsSessionEvents({
    nc,
    subject: clusterNames(config.nats.cluster).revocationSubject,
    onListenerError,
    missedSince: async (since) => {
      const rows = await store.revokedFamiliesSince(Math.max(since, Date.now() - missedWindowMs(config)));
      return rows.map((r) => ({ sessionId: r.familyId, userId: r.userId, revokedAt: r.revokedAt }));
    },
  });
  const close = async () => {
    events.close();
    await nc.drain().catch(() => undefined);
    await closeStores.close();
  };
  await closingOnFailure({ close }, () => events.ready());
  return { store, nonces, events, secrets, accounts: { pool: accountsPool }, close };
}

export async function buildAuth(config: AuthConfig, dataDir: string, log: pino.Logger): Promise<Built<AuthParts>> {
  const shared = await openSharedState(config, dataDir, log);
  const service = await closingOnFailure(shared, async () => {
    const auth = await createAuthService({
      store: shared.store,
      dataDir,
      signingKey: shared.secrets.signingKey,
      chainId: config.chainId,
      accessTokenTtlSec: config.accessTokenTtlSec,
      refreshTokenTtlSec: config.refreshTokenTtlSec,
      refreshGraceSec: config.refreshGraceSec,
      sessionEvents: shared.events,
      nonceLimits: config.nonceLimits,
      nonces: shared.nonces,
      allowedDomains: config.siweDomains,
    });
    const accountStores = await openAccountStores(shared.accounts, (userId) => auth.forgetUser(userId));
    // Signed with the access tokens' key, told apart by their `typ`.
    const marketData = new MarketDataTokens(shared.secrets.signingKey, DEFAULT_TOKEN_ISSUER, config.marketDataTokenTtlSec);
    return { auth, accountStores, operatorToken: shared.secrets.operatorToken, marketData };
  });
  return { service, stop: () => shared.close() };
}
