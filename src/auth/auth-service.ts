/**
 * AuthService: SIWE sign-in, JWT access tokens, rotating refresh tokens grouped into sessions (logout,
 * revocation), deprecated API keys. Wires the small parts in this folder together; holds no crypto or SQL
 * of its own.
 */
import { randomUUID } from 'node:crypto';
import { getAddress } from 'ethers';
import { AccessTokens, DEFAULT_TOKEN_ISSUER, type AccessClaims } from './access-tokens.js';
import { ApiKeyManager } from './api-key-manager.js';
import { BoundedCache } from './bounded-cache.js';
import { loadOrCreateSigningKey, type SigningKey } from './jwt-signing-key.js';
import { DEFAULT_NONCE_LIMITS, DEFAULT_NONCE_TTL_MS, MemoryNonceStore } from './nonce-store.js';
import { DEFAULT_ALLOWED_DOMAINS, OriginAllowList } from './origin-allow-list.js';
import { RefreshRotation } from './refresh-rotation.js';
import { RevokedSessions } from './revoked-sessions.js';
import { sha256Hex } from './secrets.js';
import { InProcessSessionEvents } from './session-events.js';
import { verifySiweSignIn } from './siwe-verification.js';
import { deriveSmartAccountAddress } from './smart-account.js';
import type { AuthStore, NonceLimits, NonceStore, SessionEvents } from './ports.js';
import { databaseUnreachable } from '../store/pg-pool.js';
import {
  AuthError,
  SCOPES,
  type ApiKeyBody,
  type ApiKeyRecord,
  type AuthContext,
  type AuthService,
  type Role,
  type Scope,
  type SessionRevoked,
  type SignInBody,
  type TokenPair,
  type UserRecord,
  type VerifiedAccessToken,
} from './types.js';

export interface AuthServiceOptions {
  /** users, sessions, API keys (SqliteAuthStore in one process, PgAuthStore in a cluster); migrated here */
  store: AuthStore;
  /** directory for the JWT signing key file (used when `signingKey` is not given) */
  dataDir: string;
  /** the JWT signing key, when it is kept elsewhere than `dataDir` (PostgreSQL in a cluster) */
  signingKey?: SigningKey;
  /** the exchange's chain id (decimal string); SIWE messages must carry it */
  chainId: string;
  /** default 300 */
  accessTokenTtlSec?: number;
  /** default 30 days */
  refreshTokenTtlSec?: number;
  /** how long a rotated refresh token still yields its successor (concurrent refreshes); default 10 */
  refreshGraceSec?: number;
  /** default 300; for the in-memory nonces (a given `nonces` store has its own) */
  nonceTtlSec?: number;
  /** outstanding nonces in all and per client; default DEFAULT_NONCE_LIMITS; for the in-memory nonces too */
  nonceLimits?: NonceLimits;
  /** sign-in nonces shared by every gateway (PgNonceStore in a cluster); migrated here, closed by the caller. Default: in memory */
  nonces?: NonceStore;
  /** SIWE domain/URI patterns (`host`, `host:port`, `host:*`); default evedex.com, localhost:*, 127.0.0.1:* */
  allowedDomains?: string[];
  /** JWT `iss`; default 'perpx' */
  issuer?: string;
  /** clock in ms; injectable for tests */
  now?: () => number;
  /** where session revocations are announced and learnt; default: this process only */
  sessionEvents?: SessionEvents;
}

const DEFAULTS = {
  accessTokenTtlSec: 300,
  refreshTokenTtlSec: 30 * 24 * 3600,
  refreshGraceSec: 10,
  nonceTtlSec: DEFAULT_NONCE_TTL_MS / 1000,
  issuer: DEFAULT_TOKEN_ISSUER,
};

/** Tokens are checked against clocks of other nodes too: revocations are remembered this much longer. */
const CLOCK_SLACK_MS = 60_000;

export async function createAuthService(opts: AuthServiceOptions): Promise<WalletAuthService> {
  const store = opts.store;
  await store.migrate();
  const now = opts.now ?? Date.now;
  const nonces = opts.nonces ?? new MemoryNonceStore((opts.nonceTtlSec ?? DEFAULTS.nonceTtlSec) * 1000, now, opts.nonceLimits ?? DEFAULT_NONCE_LIMITS);
  await nonces.migrate();
  const key = opts.signingKey ?? (await loadOrCreateSigningKey(opts.dataDir));
  const access = new AccessTokens(
    key,
    opts.issuer ?? DEFAULTS.issuer,
    opts.accessTokenTtlSec ?? DEFAULTS.accessTokenTtlSec,
    now,
  );
  const revoked = new RevokedSessions(access.ttlMs + CLOCK_SLACK_MS);
  // Sessions revoked before this start may still have unexpired access tokens out there.
  for (const r of await store.revokedFamiliesSince(now() - access.ttlMs - CLOCK_SLACK_MS)) revoked.add(r.familyId, r.revokedAt, now());
  return new WalletAuthService(store, access, {
    chainId: opts.chainId,
    rotation: new RefreshRotation({
      store,
      successorSecret: key.successorSecret,
      refreshTokenTtlMs: (opts.refreshTokenTtlSec ?? DEFAULTS.refreshTokenTtlSec) * 1000,
      graceMs: (opts.refreshGraceSec ?? DEFAULTS.refreshGraceSec) * 1000,
      now,
    }),
    nonces,
    origins: new OriginAllowList(opts.allowedDomains ?? DEFAULT_ALLOWED_DOMAINS),
    events: opts.sessionEvents ?? new InProcessSessionEvents(),
    revoked,
    now,
  });
}

interface ServiceConfig {
  chainId: string;
  rotation: RefreshRotation;
  nonces: NonceStore;
  origins: OriginAllowList;
  events: SessionEvents;
  revoked: RevokedSessions;
  now: () => number;
}

const BEARER_RE = /^Bearer[ ]+(\S+)\s*$/i;

/**
 * Every authenticated request presents a token; an ES256 verify plus a user read cost far more than the
 * rest of a cheap route. A token's signature and claims never change, so a verified token is
 * reused until its own exp (its session is still checked against the revoked set on every use). Users
 * change only through this service (setRole), which evicts them; the short TTL bounds staleness should
 * another process ever edit the database.
 */
const VERIFIED_TOKENS_MAX = 50_000;
const USERS_MAX = 50_000;
const USER_TTL_MS = 10_000;


type Headers = { authorization?: string; 'x-api-key'?: string | string[] };
type Credential = { bearer: string; apiKey?: undefined } | { bearer?: undefined; apiKey: string };

/** The credential a request presents; null when none or malformed. An explicit bearer decides on its own. */
function credentialOf(headers: Headers): Credential | null {
  const authorization = headers.authorization;
  if (typeof authorization === 'string' && authorization.length > 0) {
    const m = BEARER_RE.exec(authorization);
    return m ? { bearer: m[1] } : null;
  }
  const raw = headers['x-api-key'];
  const apiKey = Array.isArray(raw) ? (raw.length === 1 ? raw[0] : undefined) : raw;
  return typeof apiKey === 'string' && apiKey.length > 0 ? { apiKey } : null;
}

export class WalletAuthService implements AuthService {
  private readonly verifiedTokens = new BoundedCache<string, AccessClaims>(VERIFIED_TOKENS_MAX);
  private readonly users = new BoundedCache<string, UserRecord>(USERS_MAX);
  private readonly apiKeys: ApiKeyManager;

  constructor(
    private readonly store: AuthStore,
    private readonly access: AccessTokens,
    private readonly cfg: ServiceConfig,
  ) {
    this.apiKeys = new ApiKeyManager(store, cfg.now);
    // Every revocation, made here or announced by another node, refuses the session's tokens from now on.
    cfg.events.subscribe((e) => cfg.revoked.add(e.sessionId, e.revokedAt, cfg.now()));
  }

  async issueNonce(client?: string): Promise<{ nonce: string }> {
    return { nonce: await this.cfg.nonces.issue(client) };
  }

  async signIn(body: SignInBody): Promise<{ user: UserRecord; token: TokenPair }> {
    const wallet = await verifySiweSignIn(body, {
      chainId: this.cfg.chainId,
      origins: this.cfg.origins,
      nonces: this.cfg.nonces,
      now: this.cfg.now,
    });
    const user = await this.findOrCreateUser(wallet);
    const sessionId = randomUUID();
    const refresh = this.cfg.rotation.first(user.id, sessionId);
    await this.store.insertRefreshToken(refresh.row);
    const accessToken = await this.access.sign(user.id, user.exchangeId, sessionId, refresh.row.expiresAt);
    return { user, token: { accessToken, refreshToken: refresh.token } };
  }

  async refresh(refreshToken: string): Promise<{ user: UserRecord; token: TokenPair }> {
    const inactive = () => new AuthError(401, 'invalid_refresh_token', 'Refresh token is invalid or expired; sign in again');
    if (typeof refreshToken !== 'string' || refreshToken.length === 0) throw inactive();
    const outcome = await this.cfg.rotation.rotate(refreshToken);
    if (outcome.kind === 'inactive') throw inactive();
    if (outcome.kind === 'reused') {
      // A rotated token came back after the grace: either it leaked or a client replayed it. Both copies
      // of the session are suspect, so the whole family dies (OAuth 2.0 Security BCP, refresh rotation).
      await this.revokeSession(outcome.parent.familyId, outcome.parent.userId);
      throw new AuthError(401, 'refresh_token_reused', 'Refresh token was already used; the session is revoked, sign in again');
    }
    const { parent, child } = outcome;
    const user = await this.store.findUserById(parent.userId);
    if (!user) throw inactive();
    // A logout landing after the rotation revokes the child with the family, and this token by its sid.
    const accessToken = await this.access.sign(user.id, user.exchangeId, parent.familyId, child.row.expiresAt);
    return { user, token: { accessToken, refreshToken: child.token } };
  }

  async logout(token: string): Promise<void> {
    const invalid = () => new AuthError(401, 'invalid_token', 'Send the access token or the refresh token of the session to end');
    if (typeof token !== 'string' || token.length === 0) throw invalid();
    // An access token of an already revoked session still names it: logging out twice is not an error.
    const claims = await this.access.verify(token);
    if (claims) return this.revokeSession(claims.sessionId, claims.userId);
    const row = await this.store.findRefreshToken(sha256Hex(token));
    if (!row) throw invalid();
    await this.revokeSession(row.familyId, row.userId);
  }

  onRevoked(listener: (event: SessionRevoked) => void): () => void {
    return this.cfg.events.subscribe(listener);
  }

  async authenticate(headers: Headers): Promise<AuthContext | null> {
    const known = this.authenticateNow(headers);
    if (known !== undefined) return known;
    const cred = credentialOf(headers) as Credential;
    if (cred.bearer !== undefined) {
      const verified = await this.verifyAccessToken(cred.bearer);
      return verified && this.tokenContext(verified.user, verified.sessionId);
    }
    const row = await this.apiKeys.live(cred.apiKey);
    if (!row) return null;
    const user = await this.userById(row.userId, this.cfg.now());
    return user ? { user, via: 'api-key', scopes: row.scopes, credentialId: row.id } : null;
  }

  authenticateNow(headers: Headers): AuthContext | null | undefined {
    const cred = credentialOf(headers);
    if (!cred) return null;
    const now = this.cfg.now();
    if (cred.bearer !== undefined) {
      const claims = this.verifiedTokens.get(cred.bearer, now);
      if (!claims) return undefined;
      if (this.cfg.revoked.has(claims.sessionId)) return null;
      const user = this.users.get(claims.userId, now);
      if (!user) return undefined;
      return user.exchangeId === claims.exchangeId ? this.tokenContext(user, claims.sessionId) : null;
    }
    const row = this.apiKeys.liveNow(cred.apiKey, now);
    if (!row) return row;
    const user = this.users.get(row.userId, now);
    return user && { user, via: 'api-key', scopes: row.scopes, credentialId: row.id };
  }

  async verifyAccessToken(token: string): Promise<VerifiedAccessToken | null> {
    if (typeof token !== 'string') return null;
    const now = this.cfg.now();
    let claims = this.verifiedTokens.get(token, now) ?? null;
    if (!claims) {
      claims = await this.access.verify(token);
      if (!claims) return null;
      this.verifiedTokens.set(token, claims, claims.expiresAt);
    }
    const user = await this.userById(claims.userId, now);
    // Checked after the last wait: a revocation that landed meanwhile counts.
    if (!user || user.exchangeId !== claims.exchangeId || this.cfg.revoked.has(claims.sessionId)) return null;
    return { user, expiresAt: claims.expiresAt, sessionId: claims.sessionId, sessionExpiresAt: claims.sessionExpiresAt };
  }

  async getUserByExchangeId(exchangeId: number): Promise<UserRecord | undefined> {
    return this.store.findUserByExchangeId(exchangeId);
  }

  async getUserById(id: string): Promise<UserRecord | undefined> {
    return this.store.findUserById(id);
  }

  /**
   * The user of a wallet, created when missing (no sign-in, no tokens): system accounts such as the demo
   * market makers and the demo wallet.
   */
  async ensureUser(wallet: string): Promise<UserRecord> {
    return this.findOrCreateUser(getAddress(wallet).toLowerCase());
  }

  async findUserByAddress(address: string): Promise<UserRecord | undefined> {
    return (await this.store.findUserByWallet(address)) ?? (await this.store.findUserBySmartAccount?.(address));
  }

  /** Drops a cached user record: its row was changed outside this service (profile edits). */
  forgetUser(id: string): void {
    this.users.delete(id);
  }

  /** Operator action (CLI): grants or withdraws admin. */
  async setRole(exchangeId: number, role: Role): Promise<UserRecord> {
    if (role !== 'user' && role !== 'admin') throw new AuthError(400, 'invalid_role', 'role must be user or admin');
    if (!(await this.store.setRole(exchangeId, role, this.cfg.now()))) {
      throw new AuthError(404, 'user_not_found', `No user with exchangeId ${exchangeId}`);
    }
    const user = (await this.store.findUserByExchangeId(exchangeId)) as UserRecord;
    this.users.delete(user.id);
    return user;
  }

  // ---- deprecated API keys (src/auth/api-key-manager.ts) ----

  createApiKey(userId: string, body: ApiKeyBody): Promise<{ apiKey: ApiKeyRecord; key: string }> {
    return this.apiKeys.create(userId, body);
  }

  listApiKeys(
    userId: string,
    opts: { withDeleted: boolean; withExpired: boolean; limit: number; offset: number },
  ): Promise<{ list: ApiKeyRecord[]; count: number }> {
    return this.apiKeys.list(userId, opts);
  }

  updateApiKey(userId: string, apiKeyId: string, body: ApiKeyBody, caller?: readonly Scope[]): Promise<void> {
    return this.apiKeys.update(userId, apiKeyId, body, caller);
  }

  deleteApiKey(userId: string, apiKeyId: string): Promise<void> {
    return this.apiKeys.delete(userId, apiKeyId);
  }

  regenerateApiKey(userId: string, apiKeyId: string, caller?: readonly Scope[]): Promise<{ apiKey: ApiKeyRecord; key: string }> {
    return this.apiKeys.regenerate(userId, apiKeyId, caller);
  }

  // ---- internals ----

  private tokenContext(user: UserRecord, sessionId: string): AuthContext {
    return { user, via: 'access-token', scopes: SCOPES, sessionId };
  }

  private async userById(id: string, now: number): Promise<UserRecord | undefined> {
    let user = this.users.get(id, now);
    if (!user) {
      try {
        user = await this.store.findUserById(id);
      } catch (err) {
        // The shared database is down (cluster): the user last read stays good, since no edit can land meanwhile.
        const known = databaseUnreachable(err) ? this.users.stale(id) : undefined;
        if (known) return known;
        throw err;
      }
      if (user) this.users.set(id, user, now + USER_TTL_MS);
    }
    return user;
  }

  /** Revokes the session in the store and, when it was live, announces it (the revoked set learns it from there). */
  private async revokeSession(sessionId: string, userId: string): Promise<void> {
    const revokedAt = this.cfg.now();
    // Refused here at once, even should the announcement be lost or the session have been revoked before.
    this.cfg.revoked.add(sessionId, revokedAt, revokedAt);
    if (await this.store.revokeRefreshFamily(sessionId, revokedAt)) this.cfg.events.publish({ sessionId, userId, revokedAt });
  }

  private findOrCreateUser(walletLower: string): Promise<UserRecord> {
    const wallet = getAddress(walletLower);
    return this.store.findOrCreateUser({
      id: randomUUID(),
      authId: randomUUID(),
      wallet,
      role: 'user',
      smartAccountAddress: deriveSmartAccountAddress(wallet),
      createdAt: this.cfg.now(),
    });
  }
}
