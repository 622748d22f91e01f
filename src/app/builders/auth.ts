/**
 * Sign-in and credentials: the auth store (users, sessions, API keys: DATA_DIR/auth.db, or PostgreSQL shared by
 * every gateway with revocations broadcast on NATS), the account tables in auth.db, the auth service, and the
 * operator CLI's token.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type pino from 'pino';
import { openAccountStores, type AccountStores } from '../../accounts/index.js';
import { createAuthService, DEFAULT_TOKEN_ISSUER, InProcessSessionEvents, loadOrCreateSigningKey, MarketDataTokens, NatsSessionEvents, PgAuthStore, PgSharedSecrets, SqliteAuthStore, type SigningKey } from '../../auth/index.js';
import { loadOrCreateOperatorToken, writeOperatorTokenCopy } from '../../auth/operator-token.js';
import type { AuthStore, SessionEvents } from '../../auth/ports.js';
import { connectNats } from '../../journal/durable-location.js';
import type { ExchangeConfig } from '../config.js';
import { closingOnFailure, type Built } from '../shutdown-registry.js';
import { resilientPgPool } from '../../store/pg-pool.js';

export type ExchangeAuth = Awaited<ReturnType<typeof createAuthService>>;

export interface AuthParts {
  auth: ExchangeAuth;
  /** Profiles, trade signals, mobile-app rules, OAuth (tables in auth.db). */
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
  events: SessionEvents;
  /** The JWT signing key and the operator token: files in DATA_DIR, or one set in PostgreSQL for every gateway. */
  secrets: { signingKey: SigningKey; operatorToken: string };
  /** The account tables already ported to PostgreSQL (profiles) read this pool; undefined in SQLite mode. */
  accountsPool?: pg.Pool;
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
async function openSharedState(config: AuthConfig, dataDir: string, db: Database.Database, log: pino.Logger): Promise<SharedState> {
  const onListenerError = (err: unknown) => log.warn({ err }, 'a session revocation listener failed');
  const secrets = await sharedSecrets(config, dataDir);
  if (config.authStore === 'sqlite') {
    return { store: new SqliteAuthStore(db), events: new InProcessSessionEvents(onListenerError), secrets, close: async () => {} };
  }
  // Trade signals, mobile-app rules and OAuth are not ported yet: their tables stay in auth.db (per process).
  const store = new PgAuthStore({ connectionString: config.authDatabaseUrl });
  const accountsPool = resilientPgPool({ connectionString: config.authDatabaseUrl, max: 4 });
  const closeStores = { close: async () => void (await Promise.all([store.close(), accountsPool.end()])) };
  const nc = await closingOnFailure(closeStores, () => connectNats(config.nats.url, 'perpx auth'));
  const events = new NatsSessionEvents({
    nc,
    subject: `perpx.${config.nats.cluster}.sessions.revoked`,
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
  return { store, events, secrets, accountsPool, close };
}

export async function buildAuth(config: AuthConfig, dataDir: string, log: pino.Logger): Promise<Built<AuthParts>> {
  const db = new Database(join(dataDir, 'auth.db'));
  const closeDb = { close: () => void db.close() };
  const shared = await closingOnFailure(closeDb, () => openSharedState(config, dataDir, db, log));
  const closeAll = {
    close: async () => {
      try {
        await shared.close();
      } finally {
        db.close();
      }
    },
  };
  const service = await closingOnFailure(closeAll, async () => {
    db.pragma('journal_mode = WAL');
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
      allowedDomains: config.siweDomains,
    });
    const accountStores = await openAccountStores(db, (userId) => auth.forgetUser(userId), shared.accountsPool);
    // Signed with the access tokens' key, told apart by their `typ`.
    const marketData = new MarketDataTokens(shared.secrets.signingKey, DEFAULT_TOKEN_ISSUER, config.marketDataTokenTtlSec);
    return { auth, accountStores, operatorToken: shared.secrets.operatorToken, marketData };
  });
  return { service, stop: () => closeAll.close() };
}
