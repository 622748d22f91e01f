/**
 * The account tables ported to PostgreSQL (AUTH_STORE=postgres), created on start under an advisory lock so
 * gateways may start together. `auth_users` (profiles) belongs to the auth store (src/auth/pg-auth-store.ts).
 */
import type pg from 'pg';
import { migrateUnderLock } from '../store/pg-transaction.js';

/** Serializes concurrent creation (CREATE IF NOT EXISTS alone can race). */
const ACCOUNTS_MIGRATION_LOCK = 0x70657261; // "pera"

const SCHEMA = `
CREATE TABLE IF NOT EXISTS acct_trade_signals (
  id text PRIMARY KEY,
  user_id text NOT NULL,
  instrument text NOT NULL,
  side text NOT NULL,
  entry_price bigint NOT NULL,
  take_profit bigint,
  stop_loss bigint,
  leverage integer NOT NULL,
  comment text NOT NULL,
  created_at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS acct_trade_signals_user ON acct_trade_signals (user_id, created_at);
CREATE TABLE IF NOT EXISTS acct_mobile_blocked_versions (
  id text PRIMARY KEY,
  body text NOT NULL,
  platform text NOT NULL,
  updated_at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS acct_mobile_blocked_versions_platform ON acct_mobile_blocked_versions (platform);
CREATE TABLE IF NOT EXISTS acct_oauth_integrations (
  id text PRIMARY KEY,
  name text NOT NULL,
  description text NOT NULL,
  redirect_uri text NOT NULL,
  scopes text NOT NULL,
  secret_hash text NOT NULL,
  created_at bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS acct_oauth_requests (
  id text PRIMARY KEY,
  integration_id text NOT NULL,
  scopes text NOT NULL,
  state text NOT NULL,
  status text NOT NULL,
  user_id text,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  decided_at bigint,
  code_hash text UNIQUE,
  code_expires_at bigint,
  grant_hash text UNIQUE
);
CREATE INDEX IF NOT EXISTS acct_oauth_requests_user ON acct_oauth_requests (user_id, created_at);
CREATE INDEX IF NOT EXISTS acct_oauth_requests_pending ON acct_oauth_requests (status, expires_at);
`;

export async function migrateAccountTables(pool: pg.Pool): Promise<void> {
  await migrateUnderLock(pool, ACCOUNTS_MIGRATION_LOCK, SCHEMA);
}
