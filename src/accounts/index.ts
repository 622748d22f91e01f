/**
 * User-facing extras beyond sign-in: profiles, trade signals, mobile-app version rules (tables in the auth
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
export { OauthService, OauthError, OAUTH_SCOPES, type OauthIntegration } from './oauth.js';
export { withOauthGrants } from './oauth-grants.js';

export interface AccountStores {
  profiles: ProfileStore;
  signals: TradeSignalStore;
  blockedVersions: BlockedVersionStore;
  oauth: OauthService;
}

/**
 * Creates the tables when missing (safe on every start) and prepares the stores. With `shared` (AUTH_STORE=postgres)
 * the stores already ported read PostgreSQL; the others still keep their tables in `db`.
 */
export async function openAccountStores(db: Database, onUserChanged?: (userId: string) => void, shared?: pg.Pool): Promise<AccountStores> {
  if (shared) await migrateAccountTables(shared);
  else db.exec(TRADE_SIGNAL_SCHEMA + MOBILE_APP_SCHEMA);
  const profiles = shared ? new PgProfileStore(shared, onUserChanged) : new SqliteProfileStore(db, onUserChanged);
  const signals = shared ? new PgTradeSignalStore(shared) : new SqliteTradeSignalStore(db);
  const blockedVersions = shared ? new PgBlockedVersionStore(shared) : new SqliteBlockedVersionStore(db);
  return { profiles, signals, blockedVersions, oauth: new OauthService(db) };
}

/** What the user/statistics/signal/mobile-app routes need (wired by src/app). */
export interface AccountServices extends AccountStores {
  statistics: ExchangeStatistics;
  userHistory: UserHistory;
  /** closed position lifetimes for public profiles */
  queries: Pick<StoreQueries, 'positionHistory'>;
  /** open real-time connections */
  onlineConnections: () => number;
}
