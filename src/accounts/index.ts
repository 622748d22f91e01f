/**
 * User-facing extras beyond sign-in: profiles, trade signals, mobile-app version rules, OAuth (tables in the auth
 * database next to the users), plus the read-model statistics the public routes serve.
 */
import type { Database } from 'better-sqlite3';
import type pg from 'pg';
import type { ExchangeStatistics } from '../store/exchange-statistics.js';
import type { UserHistory } from '../store/user-history.js';
import type { StoreQueries } from '../store/queries.js';
import { MOBILE_APP_SCHEMA, SqliteBlockedVersionStore, type BlockedVersionStore } from './mobile-app.js';
import { PgBlockedVersionStore } from './pg-mobile-app.js';
import { OauthService } from './oauth.js';
import { PgOauthStore } from './pg-oauth.js';
import { SqliteOauthStore } from './sqlite-oauth.js';
import { PgProfileStore } from './pg-profiles.js';
import type { ProfileStore } from './profiles.js';
import { SqliteProfileStore } from './sqlite-profiles.js';
import { migrateAccountTables } from './pg-schema.js';
import { PgTradeSignalStore } from './pg-trade-signals.js';
import { SqliteTradeSignalStore, TRADE_SIGNAL_SCHEMA, type TradeSignalStore } from './trade-signals.js';

export type { ProfileStore, ProfilePatch, PublicUser } from './profiles.js';
export { SqliteProfileStore } from './sqlite-profiles.js';
export { PgProfileStore } from './pg-profiles.js';
export { SqliteTradeSignalStore, type TradeSignalStore, type TradeSignal } from './trade-signals.js';
export { PgTradeSignalStore } from './pg-trade-signals.js';
export { SqliteBlockedVersionStore, MobileAppError, type BlockedVersionStore, type BlockedVersion } from './mobile-app.js';
export { PgBlockedVersionStore } from './pg-mobile-app.js';
export { OauthService, OauthError, OAUTH_SCOPES, type OauthIntegration, type OauthStore } from './oauth.js';
export { SqliteOauthStore } from './sqlite-oauth.js';
export { PgOauthStore } from './pg-oauth.js';
export { withOauthGrants } from './oauth-grants.js';

export interface AccountStores {
  profiles: ProfileStore;
  signals: TradeSignalStore;
  blockedVersions: BlockedVersionStore;
  oauth: OauthService;
}

/** Where the account tables live: auth.db of this process, or PostgreSQL shared by every gateway (AUTH_STORE=postgres). */
export type AccountDatabase = { db: Database } | { pool: pg.Pool };

/** Creates the tables when missing (safe on every start) and prepares the stores. */
export async function openAccountStores(where: AccountDatabase, onUserChanged?: (userId: string) => void): Promise<AccountStores> {
  if ('pool' in where) {
    const { pool } = where;
    await migrateAccountTables(pool);
    return {
      profiles: new PgProfileStore(pool, onUserChanged),
      signals: new PgTradeSignalStore(pool),
      blockedVersions: new PgBlockedVersionStore(pool),
      oauth: new OauthService(new PgOauthStore(pool)),
    };
  }
  const { db } = where;
  db.exec(TRADE_SIGNAL_SCHEMA + MOBILE_APP_SCHEMA);
  return {
    profiles: new SqliteProfileStore(db, onUserChanged),
    signals: new SqliteTradeSignalStore(db),
    blockedVersions: new SqliteBlockedVersionStore(db),
    oauth: new OauthService(new SqliteOauthStore(db)),
  };
}

/** What the user/statistics/signal/mobile-app routes need (wired by src/app). */
export interface AccountServices extends AccountStores {
  statistics: ExchangeStatistics;
  userHistory: Pick<UserHistory, 'tradingSummary' | 'dailyBalances'>;
  /** closed position lifetimes for public profiles */
  queries: Pick<StoreQueries, 'positionHistory'>;
  /** open real-time connections */
  onlineConnections: () => number;
}
