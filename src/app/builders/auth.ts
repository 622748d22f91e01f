/**
 * Sign-in and credentials: the auth store (users, sessions, API keys: DATA_DIR/auth.db, or PostgreSQL shared by
 * every gateway with revocations broadcast on NATS), the account tables in auth.db, the auth service, and the
 * operator CLI's token.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type pino from 'pino';
import { openAccountStores, type AccountStores } from '../../accounts/index.js';
import { createAuthService, DEFAULT_TOKEN_ISSUER, InProcessSessionEvents, loadOrCreateSigningKey, MarketDataTokens, NatsSessionEvents, PgAuthStore, SqliteAuthStore } from '../../auth/index.js';
import { loadOrCreateOperatorToken } from '../../auth/operator-token.js';
import type { AuthStore, SessionEvents } from '../../auth/ports.js';
import { connectNats } from '../../journal/durable-location.js';
import type { ExchangeConfig } from '../config.js';
import { closingOnFailure, type Built } from '../shutdown-registry.js';

export type ExchangeAuth = Awaited<ReturnType<typeof createAuthService>>;

export interface AuthParts {
  auth: ExchangeAuth;
  /** Profiles, trade signals, mobile-app rules, OAuth (tables in auth.db). */
  accountStores: AccountStores;
  /** Secret for `x-operator-token` (DATA_DIR/operator-token). */
  operatorToken: string;
  /** Websocket connect tokens for the public channels (GET /api/dx-feed/auth). */
  marketData: MarketDataTokens;
}

type AuthConfig = Pick<ExchangeConfig, 'chainId' | 'accessTokenTtlSec' | 'marketDataTokenTtlSec' | 'refreshTokenTtlSec' | 'refreshGraceSec' | 'nonceLimits' | 'siweDomains' | 'authStore' | 'authDatabaseUrl' | 'nats'>;

/** Revocations older than this cannot matter to a node that reconnects: their access tokens have expired. */
const missedWindowMs = (config: AuthConfig) => config.accessTokenTtlSec * 1000;

/** The store and the revocation events: in this process, or shared (PostgreSQL + NATS). Each part closes what it opened. */
async function openSharedState(config: AuthConfig, db: Database.Database, log: pino.Logger): Promise<{ store: AuthStore; events: SessionEvents; close(): Promise<void> }> {
  const onListenerError = (err: unknown) => log.warn({ err }, 'a session revocation listener failed');
  if (config.authStore === 'sqlite') {
    return { store: new SqliteAuthStore(db), events: new InProcessSessionEvents(onListenerError), close: async () => {} };
  }
  // The account tables (profiles, signals, mobile-app rules, OAuth) are not ported yet and still open on auth.db,
  // which needs its auth tables for that: profile edits of users kept in PostgreSQL answer USER_NOT_FOUND until then.
  await new SqliteAuthStore(db).migrate();
  const store = new PgAuthStore({ connectionString: config.authDatabaseUrl });
  const nc = await closingOnFailure(store, () => connectNats(config.nats.url, 'perpx auth'));
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
    await store.close();
  };
  await closingOnFailure({ close }, () => events.ready());
  return { store, events, close };
}

export async function buildAuth(config: AuthConfig, dataDir: string, log: pino.Logger): Promise<Built<AuthParts>> {
  const db = new Database(join(dataDir, 'auth.db'));
  const closeDb = { close: () => void db.close() };
  const shared = await closingOnFailure(closeDb, () => openSharedState(config, db, log));
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
      chainId: config.chainId,
      accessTokenTtlSec: config.accessTokenTtlSec,
      refreshTokenTtlSec: config.refreshTokenTtlSec,
      refreshGraceSec: config.refreshGraceSec,
      sessionEvents: shared.events,
      nonceLimits: config.nonceLimits,
      allowedDomains: config.siweDomains,
    });
    const accountStores = openAccountStores(db, (userId) => auth.forgetUser(userId));
    // Signed with the access tokens' key (created by the auth service above), told apart by their `typ`.
    const marketData = new MarketDataTokens(await loadOrCreateSigningKey(dataDir), DEFAULT_TOKEN_ISSUER, config.marketDataTokenTtlSec);
    return { auth, accountStores, operatorToken: await loadOrCreateOperatorToken(dataDir), marketData };
  });
  return { service, stop: () => closeAll.close() };
}
