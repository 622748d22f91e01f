/**
 * The auth tables' rows as both adapters read them, mapped to the port's records. SQLite hands integers back
 * as numbers, pg hands int8 back as strings: the mappers take either (every value is below 2^53).
 */
import type { ApiKeyRow, RefreshTokenRow } from './ports.js';
import { isScope, type Role, type UserRecord } from './types.js';

/** Scopes of keys created before keys had scopes: what every key could do then. */
export const LEGACY_API_KEY_SCOPES = '["read","trade"]';

/** An integer column: a number from SQLite, a string from pg (int8). */
export type Int8 = string | number;
const num = (v: Int8): number => Number(v);
const numOrNull = (v: Int8 | null): number | null => (v === null ? null : Number(v));

export interface UserSqlRow {
  exchange_id: Int8;
  id: string;
  auth_id: string;
  wallet: string;
  role: Role;
  name: string | null;
  email: string | null;
  avatar: string | null;
  level: number;
  locale: string;
  date_time_format: string;
  favorite_instruments: string;
  social: string;
  smart_account_address: string;
  created_at: Int8;
  updated_at: Int8;
}

export interface RefreshSqlRow {
  token_hash: string;
  family_id: string;
  user_id: string;
  created_at: Int8;
  expires_at: Int8;
  rotated_at: Int8 | null;
  revoked_at: Int8 | null;
}

export interface ApiKeySqlRow {
  id: string;
  user_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  created_at: Int8;
  updated_at: Int8;
  expires_at: Int8 | null;
  deleted_at: Int8 | null;
  scopes: string;
}

export function toUser(r: UserSqlRow): UserRecord {
  return {
    id: r.id,
    authId: r.auth_id,
    exchangeId: num(r.exchange_id),
    wallet: r.wallet,
    role: r.role,
    name: r.name,
    email: r.email,
    avatar: r.avatar,
    level: r.level,
    locale: r.locale,
    dateTimeFormat: r.date_time_format,
    favoriteInstruments: JSON.parse(r.favorite_instruments) as string[],
    social: JSON.parse(r.social) as Array<{ type: string; value: string }>,
    smartAccountAddress: r.smart_account_address,
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  };
}

export function toRefresh(r: RefreshSqlRow): RefreshTokenRow {
  return {
    tokenHash: r.token_hash,
    familyId: r.family_id,
    userId: r.user_id,
    createdAt: num(r.created_at),
    expiresAt: num(r.expires_at),
    rotatedAt: numOrNull(r.rotated_at),
    revokedAt: numOrNull(r.revoked_at),
  };
}

export function toApiKey(r: ApiKeySqlRow): ApiKeyRow {
  return {
    id: r.id,
    userId: r.user_id,
    name: r.name,
    prefix: r.prefix,
    keyHash: r.key_hash,
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
    expiresAt: numOrNull(r.expires_at),
    deletedAt: numOrNull(r.deleted_at),
    scopes: (JSON.parse(r.scopes) as unknown[]).filter(isScope),
  };
}
