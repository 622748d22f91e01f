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
`;

export async function migrateAccountTables(pool: pg.Pool): Promise<void> {
  await migrateUnderLock(pool, ACCOUNTS_MIGRATION_LOCK, SCHEMA);
}
