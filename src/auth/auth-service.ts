/**
 * AuthService: SIWE sign-in, JWT access tokens, rotating refresh tokens, deprecated API keys.
 * Wires the small parts in this folder together; holds no crypto or SQL of its own.
 */
import { randomUUID } from 'node:crypto';
import { getAddress } from 'ethers';
import type { Database } from 'better-sqlite3';
import { AccessTokens, type AccessClaims } from './access-tokens.js';
import {
  DEFAULT_API_KEY_NAME,
  generateApiKey,
  parseApiKeyExpiry,
  parseApiKeyName,
  toApiKeyRecord,
} from './api-keys.js';
import { BoundedCache } from './bounded-cache.js';
import { loadOrCreateSigningKey } from './jwt-signing-key.js';
import { DEFAULT_NONCE_LIMITS, NonceStore, type NonceLimits } from './nonce-store.js';
import { DEFAULT_ALLOWED_DOMAINS, OriginAllowList } from './origin-allow-list.js';
import { opaqueToken, sha256Hex } from './secrets.js';
import { verifySiweSignIn } from './siwe-verification.js';
import { deriveSmartAccountAddress } from './smart-account.js';
import { SqliteAuthStore } from './sqlite-auth-store.js';
import type { AuthStore } from './store.js';
import {
  AuthError,
  type ApiKeyRecord,
  type AuthContext,
  type AuthService,
  type Role,
  type SignInBody,
  type TokenPair,
  type UserRecord,
} from './types.js';

export interface AuthServiceOptions {
  db: Database;
  /** directory for the JWT signing key file */
  dataDir: string;
  /** the exchange's chain id (decimal string); SIWE messages must carry it */
  chainId: string;
  /** default 300 */
  accessTokenTtlSec?: number;
  /** default 30 days */
  refreshTokenTtlSec?: number;
  /** default 300 */
  nonceTtlSec?: number;
  /** outstanding nonces in all and per client; default DEFAULT_NONCE_LIMITS */
  nonceLimits?: NonceLimits;
  /** SIWE domain/URI patterns (`host`, `host:port`, `host:*`); default evedex.com, localhost:*, 127.0.0.1:* */
  allowedDomains?: string[];
  /** JWT `iss`; default 'perpx' */
  issuer?: string;
  /** clock in ms; injectable for tests */
  now?: () => number;
}

const DEFAULTS = {
  accessTokenTtlSec: 300,
  refreshTokenTtlSec: 30 * 24 * 3600,
  nonceTtlSec: 300,
  issuer: 'perpx',
};

export async function createAuthService(opts: AuthServiceOptions): Promise<WalletAuthService> {
  const store = new SqliteAuthStore(opts.db);
  store.migrate();
  const key = await loadOrCreateSigningKey(opts.dataDir);
  const now = opts.now ?? Date.now;
  const access = new AccessTokens(
    key,
    opts.issuer ?? DEFAULTS.issuer,
    opts.accessTokenTtlSec ?? DEFAULTS.accessTokenTtlSec,
    now,
  );
  return new WalletAuthService(store, access, {
    chainId: opts.chainId,
    refreshTokenTtlMs: (opts.refreshTokenTtlSec ?? DEFAULTS.refreshTokenTtlSec) * 1000,
    nonces: new NonceStore((opts.nonceTtlSec ?? DEFAULTS.nonceTtlSec) * 1000, now, opts.nonceLimits ?? DEFAULT_NONCE_LIMITS),
    origins: new OriginAllowList(opts.allowedDomains ?? DEFAULT_ALLOWED_DOMAINS),
    now,
  });
}

interface ServiceConfig {
  chainId: string;
  refreshTokenTtlMs: number;
  nonces: NonceStore;
  origins: OriginAllowList;
  now: () => number;
}

const BEARER_RE = /^Bearer[ ]+(\S+)\s*$/i;

/**
 * Every authenticated request presents a token; an ES256 verify plus a user read cost ~150 µs, far more
 * than the rest of a cheap route. A token's signature and claims never change, so a verified token is
 * reused until its own exp. Users change only through this service (setRole), which evicts them; the
 * short TTL bounds staleness should another process ever edit the database.
 */
const VERIFIED_TOKENS_MAX = 50_000;
const USERS_MAX = 50_000;
const USER_TTL_MS = 10_000;

export class WalletAuthService implements AuthService {
  private readonly verifiedTokens = new BoundedCache<string, AccessClaims>(VERIFIED_TOKENS_MAX);
  private readonly users = new BoundedCache<string, UserRecord>(USERS_MAX);

  constructor(
    private readonly store: AuthStore,
    private readonly access: AccessTokens,
    private readonly cfg: ServiceConfig,
  ) {}

  issueNonce(client?: string): { nonce: string } {
    return { nonce: this.cfg.nonces.issue(client) };
  }

  async signIn(body: SignInBody): Promise<{ user: UserRecord; token: TokenPair }> {
    const wallet = verifySiweSignIn(body, {
      chainId: this.cfg.chainId,
      origins: this.cfg.origins,
      nonces: this.cfg.nonces,
      now: this.cfg.now,
    });
    const user = this.findOrCreateUser(wallet);
    const token = await this.issueTokens(user, randomUUID());
    return { user, token };
  }

  async refresh(refreshToken: string): Promise<{ user: UserRecord; token: TokenPair }> {
    const inactive = () => new AuthError(401, 'invalid_refresh_token', 'Refresh token is invalid or expired; sign in again');
    if (typeof refreshToken !== 'string' || refreshToken.length === 0) throw inactive();
    const now = this.cfg.now();
    const hash = sha256Hex(refreshToken);
    const row = this.store.findRefreshToken(hash);
    if (!row || row.revokedAt !== null) throw inactive();
    if (row.rotatedAt !== null) {
      // A rotated token came back: either it leaked or a client replayed it. Both copies of the
      // session are suspect, so the whole family dies (OAuth 2.0 Security BCP, refresh rotation).
      this.store.revokeRefreshFamily(row.familyId, now);
      throw new AuthError(401, 'refresh_token_reused', 'Refresh token was already used; the session is revoked, sign in again');
    }
    if (row.expiresAt <= now) throw inactive();
    const user = this.store.findUserById(row.userId);
    if (!user) throw inactive();
    if (!this.store.markRefreshTokenRotated(hash, now)) {
      this.store.revokeRefreshFamily(row.familyId, now);
      throw new AuthError(401, 'refresh_token_reused', 'Refresh token was already used; the session is revoked, sign in again');
    }
    const token = await this.issueTokens(user, row.familyId);
    return { user, token };
  }

  async authenticate(headers: { authorization?: string; 'x-api-key'?: string | string[] }): Promise<AuthContext | null> {
    const now = this.authenticateNow(headers);
    if (now !== undefined) return now;
    // Only a bearer token that is not in the verified-token cache gets here.
    const verified = await this.verifyAccessToken((BEARER_RE.exec(headers.authorization as string) as RegExpExecArray)[1]);
    return verified && { user: verified.user, via: 'access-token' };
  }

  authenticateNow(headers: { authorization?: string; 'x-api-key'?: string | string[] }): AuthContext | null | undefined {
    const authorization = headers.authorization;
    if (typeof authorization === 'string' && authorization.length > 0) {
      // An explicit bearer credential decides on its own: a bad token is a 401 even with an api key.
      const m = BEARER_RE.exec(authorization);
      if (!m) return null;
      const now = this.cfg.now();
      const claims = this.verifiedTokens.get(m[1], now);
      if (!claims) return undefined;
      const user = this.cachedUser(claims.userId, now);
      return user && user.exchangeId === claims.exchangeId ? { user, via: 'access-token' } : null;
    }
    const raw = headers['x-api-key'];
    const apiKey = Array.isArray(raw) ? (raw.length === 1 ? raw[0] : undefined) : raw;
    if (typeof apiKey === 'string' && apiKey.length > 0) {
      const key = this.userForApiKey(apiKey);
      return key ? { user: key.user, via: 'api-key', credentialId: key.id } : null;
    }
    return null;
  }

  async verifyAccessToken(token: string): Promise<{ user: UserRecord; expiresAt: number } | null> {
    if (typeof token !== 'string') return null;
    const now = this.cfg.now();
    let claims = this.verifiedTokens.get(token, now) ?? null;
    if (!claims) {
      claims = await this.access.verify(token);
      if (!claims) return null;
      this.verifiedTokens.set(token, claims, claims.expiresAt);
    }
    const user = this.cachedUser(claims.userId, now);
    if (!user || user.exchangeId !== claims.exchangeId) return null;
    return { user, expiresAt: claims.expiresAt };
  }

  private cachedUser(id: string, now: number): UserRecord | undefined {
    let user = this.users.get(id, now);
    if (!user) {
      user = this.store.findUserById(id);
      if (user) this.users.set(id, user, now + USER_TTL_MS);
    }
    return user;
  }

  getUserByExchangeId(exchangeId: number): UserRecord | undefined {
    return this.store.findUserByExchangeId(exchangeId);
  }

  getUserById(id: string): UserRecord | undefined {
    return this.store.findUserById(id);
  }

  /**
   * The user of a wallet, created when missing (no sign-in, no tokens): system accounts such as the demo
   * market makers and the demo wallet.
   */
  ensureUser(wallet: string): UserRecord {
    return this.findOrCreateUser(getAddress(wallet).toLowerCase());
  }

  findUserByAddress(address: string): UserRecord | undefined {
    return this.store.findUserByWallet(address) ?? this.store.findUserBySmartAccount?.(address);
  }

  /** Drops a cached user record: its row was changed outside this service (profile edits). */
  forgetUser(id: string): void {
    this.users.delete(id);
  }

  /** Operator action (CLI): grants or withdraws admin. */
  setRole(exchangeId: number, role: Role): UserRecord {
    if (role !== 'user' && role !== 'admin') throw new AuthError(400, 'invalid_role', 'role must be user or admin');
    if (!this.store.setRole(exchangeId, role, this.cfg.now())) {
      throw new AuthError(404, 'user_not_found', `No user with exchangeId ${exchangeId}`);
    }
    const user = this.store.findUserByExchangeId(exchangeId) as UserRecord;
    this.users.delete(user.id);
    return user;
  }

  // ---- deprecated API keys ----

  createApiKey(userId: string, body: { name?: string; expiresAt?: string | null }): { apiKey: ApiKeyRecord; key: string } {
    const now = this.cfg.now();
    if (!this.store.findUserById(userId)) throw new AuthError(404, 'user_not_found', 'User not found');
    const name = body?.name === undefined ? DEFAULT_API_KEY_NAME : parseApiKeyName(body.name);
    const expiresAt = body?.expiresAt === undefined ? null : parseApiKeyExpiry(body.expiresAt, now);
    const { key, prefix } = generateApiKey();
    const row = {
      id: randomUUID(),
      userId,
      name,
      prefix,
      keyHash: sha256Hex(key),
      createdAt: now,
      updatedAt: now,
      expiresAt,
      deletedAt: null,
    };
    this.store.insertApiKey(row);
    return { apiKey: toApiKeyRecord(row), key };
  }

  listApiKeys(
    userId: string,
    opts: { withDeleted: boolean; withExpired: boolean; limit: number; offset: number },
  ): { list: ApiKeyRecord[]; count: number } {
    const limit = Math.min(Math.max(Math.floor(opts.limit) || 0, 0), 1000);
    const offset = Math.max(Math.floor(opts.offset) || 0, 0);
    const { list, count } = this.store.listApiKeys(userId, {
      withDeleted: opts.withDeleted,
      withExpired: opts.withExpired,
      limit,
      offset,
      now: this.cfg.now(),
    });
    return { list: list.map(toApiKeyRecord), count };
  }

  updateApiKey(userId: string, apiKeyId: string, body: { name?: string; expiresAt?: string | null }): void {
    const now = this.cfg.now();
    this.liveApiKey(userId, apiKeyId);
    const patch: { name?: string; expiresAt?: number | null; updatedAt: number } = { updatedAt: now };
    if (body?.name !== undefined) patch.name = parseApiKeyName(body.name);
    if (body?.expiresAt !== undefined) patch.expiresAt = parseApiKeyExpiry(body.expiresAt, now);
    this.store.updateApiKey(userId, apiKeyId, patch);
  }

  deleteApiKey(userId: string, apiKeyId: string): void {
    const now = this.cfg.now();
    this.liveApiKey(userId, apiKeyId);
    this.store.updateApiKey(userId, apiKeyId, { deletedAt: now, updatedAt: now });
  }

  regenerateApiKey(userId: string, apiKeyId: string): { apiKey: ApiKeyRecord; key: string } {
    const now = this.cfg.now();
    this.liveApiKey(userId, apiKeyId);
    const { key, prefix } = generateApiKey();
    this.store.updateApiKey(userId, apiKeyId, { keyHash: sha256Hex(key), prefix, updatedAt: now });
    return { apiKey: toApiKeyRecord(this.liveApiKey(userId, apiKeyId)), key };
  }

  // ---- internals ----

  private liveApiKey(userId: string, apiKeyId: string) {
    const row = typeof apiKeyId === 'string' ? this.store.findApiKey(userId, apiKeyId) : undefined;
    if (!row || row.deletedAt !== null) throw new AuthError(404, 'api_key_not_found', 'API key not found');
    return row;
  }

  private userForApiKey(key: string): { user: UserRecord; id: string } | null {
    const row = this.store.findApiKeyByHash(sha256Hex(key));
    if (!row || row.deletedAt !== null) return null;
    const now = this.cfg.now();
    if (row.expiresAt !== null && row.expiresAt <= now) return null;
    const user = this.cachedUser(row.userId, now);
    return user ? { user, id: row.id } : null;
  }

  private findOrCreateUser(walletLower: string): UserRecord {
    return this.store.transaction(() => {
      const existing = this.store.findUserByWallet(walletLower);
      if (existing) return existing;
      const wallet = getAddress(walletLower);
      return this.store.createUser({
        id: randomUUID(),
        authId: randomUUID(),
        wallet,
        role: 'user',
        smartAccountAddress: deriveSmartAccountAddress(wallet),
        createdAt: this.cfg.now(),
      });
    });
  }

  private async issueTokens(user: UserRecord, familyId: string): Promise<TokenPair> {
    const now = this.cfg.now();
    const refreshToken = opaqueToken();
    this.store.insertRefreshToken({
      tokenHash: sha256Hex(refreshToken),
      familyId,
      userId: user.id,
      createdAt: now,
      expiresAt: now + this.cfg.refreshTokenTtlMs,
      rotatedAt: null,
      revokedAt: null,
    });
    const accessToken = await this.access.sign(user.id, user.exchangeId);
    return { accessToken, refreshToken };
  }
}
