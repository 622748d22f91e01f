/** AuthStore on better-sqlite3. Tables are prefixed `auth_` because the database file may be shared. */
import type { Database, Statement } from 'better-sqlite3';
import { LEGACY_API_KEY_SCOPES, toApiKey, toRefresh, toUser, type ApiKeySqlRow, type RefreshSqlRow, type UserSqlRow } from './auth-rows.js';
import type { ApiKeyListFilter, ApiKeyPatch, ApiKeyRow, AuthStore, NewUser, RefreshTokenRow } from './ports.js';
import type { Role, UserRecord } from './types.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS auth_users (
  exchange_id INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  auth_id TEXT NOT NULL UNIQUE,
  wallet TEXT NOT NULL,
  wallet_lower TEXT NOT NULL UNIQUE,
  role TEXT NOT NULL DEFAULT 'user',
  name TEXT,
  email TEXT,
  avatar TEXT,
  level INTEGER NOT NULL DEFAULT 0,
  locale TEXT NOT NULL DEFAULT 'en',
  date_time_format TEXT NOT NULL DEFAULT 'DD.MM.YYYY HH:mm',
  favorite_instruments TEXT NOT NULL DEFAULT '[]',
  social TEXT NOT NULL DEFAULT '[]',
  smart_account_address TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS auth_refresh_tokens (
  token_hash TEXT PRIMARY KEY,
  family_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  rotated_at INTEGER,
  revoked_at INTEGER
);
CREATE INDEX IF NOT EXISTS auth_refresh_tokens_family ON auth_refresh_tokens(family_id);
CREATE INDEX IF NOT EXISTS auth_refresh_tokens_revoked ON auth_refresh_tokens(revoked_at) WHERE revoked_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS auth_api_keys (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  name TEXT NOT NULL,
  prefix TEXT NOT NULL,
  key_hash TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  expires_at INTEGER,
  deleted_at INTEGER,
  scopes TEXT NOT NULL DEFAULT '${LEGACY_API_KEY_SCOPES}'
);
CREATE INDEX IF NOT EXISTS auth_api_keys_user ON auth_api_keys(user_id, created_at);
`;

// The "visible" filter of the api-key list, shared by the page and the count queries.
const API_KEY_FILTER = `user_id = @userId
  AND (@withDeleted = 1 OR deleted_at IS NULL)
  AND (@withExpired = 1 OR expires_at IS NULL OR expires_at > @now)`;

export class SqliteAuthStore implements AuthStore {
  private st!: {
    userByWallet: Statement<[string], UserSqlRow>;
    userById: Statement<[string], UserSqlRow>;
    userBySmartAccount: Statement<[string], UserSqlRow>;
    userByExchangeId: Statement<[number], UserSqlRow>;
    insertUser: Statement<[Record<string, unknown>]>;
    setRole: Statement<[Role, number, number]>;
    insertRefresh: Statement<[Record<string, unknown>]>;
    findRefresh: Statement<[string], RefreshSqlRow>;
    rotateRefresh: Statement<[number, string]>;
    revokeFamily: Statement<[number, string]>;
    revokedSince: Statement<[number], { family_id: string; user_id: string; revoked_at: number }>;
    insertApiKey: Statement<[Record<string, unknown>]>;
    apiKeyByHash: Statement<[string], ApiKeySqlRow>;
    apiKeyById: Statement<[string, string], ApiKeySqlRow>;
    listApiKeys: Statement<[Record<string, unknown>], ApiKeySqlRow>;
    countApiKeys: Statement<[Record<string, unknown>], { n: number }>;
  };

  constructor(private readonly db: Database) {}

  async migrate(): Promise<void> {
    this.db.transaction(() => {
      this.db.exec(SCHEMA);
      const columns = this.db.prepare('PRAGMA table_info(auth_api_keys)').all() as Array<{ name: string }>;
      if (!columns.some((c) => c.name === 'scopes')) {
        this.db.exec(`ALTER TABLE auth_api_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT '${LEGACY_API_KEY_SCOPES}'`);
      }
    })();
    this.prepare();
  }

  private prepare(): void {
    const db = this.db;
    this.st = {
      userByWallet: db.prepare('SELECT * FROM auth_users WHERE wallet_lower = ?'),
      userById: db.prepare('SELECT * FROM auth_users WHERE id = ?'),
      userBySmartAccount: db.prepare('SELECT * FROM auth_users WHERE lower(smart_account_address) = ?'),
      userByExchangeId: db.prepare('SELECT * FROM auth_users WHERE exchange_id = ?'),
      insertUser: db.prepare(
        `INSERT INTO auth_users (id, auth_id, wallet, wallet_lower, role, smart_account_address, created_at, updated_at)
         VALUES (@id, @authId, @wallet, @walletLower, @role, @smartAccountAddress, @createdAt, @createdAt)`,
      ),
      setRole: db.prepare('UPDATE auth_users SET role = ?, updated_at = ? WHERE exchange_id = ?'),
      insertRefresh: db.prepare(
        `INSERT INTO auth_refresh_tokens (token_hash, family_id, user_id, created_at, expires_at, rotated_at, revoked_at)
         VALUES (@tokenHash, @familyId, @userId, @createdAt, @expiresAt, @rotatedAt, @revokedAt)`,
      ),
      findRefresh: db.prepare('SELECT * FROM auth_refresh_tokens WHERE token_hash = ?'),
      rotateRefresh: db.prepare(
        'UPDATE auth_refresh_tokens SET rotated_at = ? WHERE token_hash = ? AND rotated_at IS NULL AND revoked_at IS NULL',
      ),
      revokeFamily: db.prepare(
        'UPDATE auth_refresh_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL',
      ),
      revokedSince: db.prepare(
        `SELECT family_id, user_id, MAX(revoked_at) AS revoked_at FROM auth_refresh_tokens
         WHERE revoked_at > ? GROUP BY family_id, user_id`,
      ),
      insertApiKey: db.prepare(
        `INSERT INTO auth_api_keys (id, user_id, name, prefix, key_hash, created_at, updated_at, expires_at, deleted_at, scopes)
         VALUES (@id, @userId, @name, @prefix, @keyHash, @createdAt, @updatedAt, @expiresAt, @deletedAt, @scopes)`,
      ),
      apiKeyByHash: db.prepare('SELECT * FROM auth_api_keys WHERE key_hash = ?'),
      apiKeyById: db.prepare('SELECT * FROM auth_api_keys WHERE user_id = ? AND id = ?'),
      listApiKeys: db.prepare(
        `SELECT * FROM auth_api_keys WHERE ${API_KEY_FILTER} ORDER BY created_at DESC, id LIMIT @limit OFFSET @offset`,
      ),
      countApiKeys: db.prepare(`SELECT COUNT(*) AS n FROM auth_api_keys WHERE ${API_KEY_FILTER}`),
    };
  }

  async findUserByWallet(wallet: string): Promise<UserRecord | undefined> {
    return this.userByWallet(wallet);
  }

  async findUserBySmartAccount(address: string): Promise<UserRecord | undefined> {
    const r = this.st.userBySmartAccount.get(address.toLowerCase());
    return r && toUser(r);
  }

  async findUserById(id: string): Promise<UserRecord | undefined> {
    return this.userById(id);
  }

  async findUserByExchangeId(exchangeId: number): Promise<UserRecord | undefined> {
    const r = this.st.userByExchangeId.get(exchangeId);
    return r && toUser(r);
  }

  async findOrCreateUser(user: NewUser): Promise<UserRecord> {
    return this.db.transaction(() => {
      const existing = this.userByWallet(user.wallet);
      if (existing) return existing;
      this.st.insertUser.run({ ...user, walletLower: user.wallet.toLowerCase() });
      return this.userById(user.id) as UserRecord;
    })();
  }

  async setRole(exchangeId: number, role: Role, now: number): Promise<boolean> {
    return this.st.setRole.run(role, now, exchangeId).changes === 1;
  }

  async insertRefreshToken(row: RefreshTokenRow): Promise<void> {
    this.st.insertRefresh.run({ ...row });
  }

  async findRefreshToken(tokenHash: string): Promise<RefreshTokenRow | undefined> {
    const r = this.st.findRefresh.get(tokenHash);
    return r && toRefresh(r);
  }

  async rotateRefreshToken(tokenHash: string, next: RefreshTokenRow, now: number): Promise<boolean> {
    return this.db.transaction(() => {
      if (this.st.rotateRefresh.run(now, tokenHash).changes !== 1) return false;
      this.st.insertRefresh.run({ ...next });
      return true;
    })();
  }

  async revokeRefreshFamily(familyId: string, now: number): Promise<boolean> {
    return this.st.revokeFamily.run(now, familyId).changes > 0;
  }

  async revokedFamiliesSince(since: number): Promise<Array<{ familyId: string; userId: string; revokedAt: number }>> {
    return this.st.revokedSince.all(since).map((r) => ({ familyId: r.family_id, userId: r.user_id, revokedAt: r.revoked_at }));
  }

  async insertApiKey(row: ApiKeyRow): Promise<void> {
    this.st.insertApiKey.run({ ...row, scopes: JSON.stringify(row.scopes) });
  }

  async findApiKeyByHash(keyHash: string): Promise<ApiKeyRow | undefined> {
    const r = this.st.apiKeyByHash.get(keyHash);
    return r && toApiKey(r);
  }

  async findApiKey(userId: string, id: string): Promise<ApiKeyRow | undefined> {
    const r = this.st.apiKeyById.get(userId, id);
    return r && toApiKey(r);
  }

  async listApiKeys(userId: string, f: ApiKeyListFilter): Promise<{ list: ApiKeyRow[]; count: number }> {
    const params = {
      userId,
      withDeleted: f.withDeleted ? 1 : 0,
      withExpired: f.withExpired ? 1 : 0,
      now: f.now,
    };
    const list = this.st.listApiKeys.all({ ...params, limit: f.limit, offset: f.offset }).map(toApiKey);
    const count = (this.st.countApiKeys.get(params) as { n: number }).n;
    return { list, count };
  }

  async updateApiKey(userId: string, id: string, patch: ApiKeyPatch): Promise<boolean> {
    // Column names come from this fixed map, never from the caller.
    const columns: Record<string, string> = {
      name: 'name',
      expiresAt: 'expires_at',
      deletedAt: 'deleted_at',
      keyHash: 'key_hash',
      prefix: 'prefix',
      updatedAt: 'updated_at',
    };
    const keys = Object.keys(patch).filter((k) => k in columns && (patch as Record<string, unknown>)[k] !== undefined);
    const sql = `UPDATE auth_api_keys SET ${keys.map((k) => `${columns[k]} = @${k}`).join(', ')}
      WHERE user_id = @userId AND id = @id`;
    // A handful of distinct patch shapes exist; better-sqlite3 caches nothing, so keep our own.
    let stmt = this.patchStatements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      this.patchStatements.set(sql, stmt);
    }
    return stmt.run({ ...patch, userId, id }).changes === 1;
  }

  private readonly patchStatements = new Map<string, Statement>();

  private userByWallet(wallet: string): UserRecord | undefined {
    const r = this.st.userByWallet.get(wallet.toLowerCase());
    return r && toUser(r);
  }

  private userById(id: string): UserRecord | undefined {
    const r = this.st.userById.get(id);
    return r && toUser(r);
  }
}
