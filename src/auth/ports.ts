/**
 * Ports of the auth module: persistence (AuthStore) and session revocation events (SessionEvents).
 *
 * AuthStore: Every method is async so that a networked database
 * (PostgreSQL) can implement it; the SQLite adapter answers synchronously underneath. Operations that
 * must be atomic are single methods (findOrCreateUser, rotateRefreshToken) rather than a transaction
 * callback, so each adapter chooses how.
 */
import type { ApiKeyRecord, Role, SessionRevoked, UserRecord } from './types.js';

export interface NewUser {
  id: string;
  authId: string;
  /** EIP-55 */
  wallet: string;
  role: Role;
  smartAccountAddress: string;
  createdAt: number;
}

export interface RefreshTokenRow {
  /** sha256 (hex) of the opaque token; the token itself is never stored */
  tokenHash: string;
  /** the session: every token rotated from one sign-in shares it */
  familyId: string;
  userId: string;
  createdAt: number;
  expiresAt: number;
  rotatedAt: number | null;
  revokedAt: number | null;
}

export interface ApiKeyRow extends ApiKeyRecord {
  userId: string;
  /** sha256 (hex) of the key */
  keyHash: string;
}

export interface ApiKeyListFilter {
  withDeleted: boolean;
  withExpired: boolean;
  limit: number;
  offset: number;
  now: number;
}

export type ApiKeyPatch = Partial<Pick<ApiKeyRow, 'name' | 'expiresAt' | 'deletedAt' | 'keyHash' | 'prefix'>> & { updatedAt: number };

export interface AuthStore {
  /** Creates or upgrades the tables; safe to run on every start. */
  migrate(): Promise<void>;

  findUserByWallet(wallet: string): Promise<UserRecord | undefined>;
  findUserBySmartAccount?(address: string): Promise<UserRecord | undefined>;
  findUserById(id: string): Promise<UserRecord | undefined>;
  findUserByExchangeId(exchangeId: number): Promise<UserRecord | undefined>;
  /** The user of `user.wallet`, inserted atomically when missing (the store assigns exchangeId 1, 2, 3, ...). */
  findOrCreateUser(user: NewUser): Promise<UserRecord>;
  setRole(exchangeId: number, role: Role, now: number): Promise<boolean>;

  insertRefreshToken(row: RefreshTokenRow): Promise<void>;
  findRefreshToken(tokenHash: string): Promise<RefreshTokenRow | undefined>;
  /**
   * Atomically marks the active token `tokenHash` rotated and inserts its successor `next` (same family);
   * false, and nothing changed, when the token was not active any more (rotated or revoked: lost a race).
   */
  rotateRefreshToken(tokenHash: string, next: RefreshTokenRow, now: number): Promise<boolean>;
  /** Revokes every token of the family not revoked yet; false when there was none. */
  revokeRefreshFamily(familyId: string, now: number): Promise<boolean>;
  /** Sessions revoked after `since` (ms), with their latest revocation time. */
  revokedFamiliesSince(since: number): Promise<Array<{ familyId: string; userId: string; revokedAt: number }>>;

  insertApiKey(row: ApiKeyRow): Promise<void>;
  findApiKeyByHash(keyHash: string): Promise<ApiKeyRow | undefined>;
  findApiKey(userId: string, id: string): Promise<ApiKeyRow | undefined>;
  listApiKeys(userId: string, filter: ApiKeyListFilter): Promise<{ list: ApiKeyRow[]; count: number }>;
  updateApiKey(userId: string, id: string, patch: ApiKeyPatch): Promise<boolean>;
}

/** How many outstanding sign-in nonces are kept (AUTH_NONCES_PER_IP, AUTH_NONCES_MAX). */
export interface NonceLimits {
  /** Outstanding nonces kept in all; beyond it the oldest go first. */
  capacity: number;
  /**
   * Outstanding nonces one client (IP) may hold; its own oldest goes first beyond it, so a flood from one
   * client cannot push out everyone else's nonces.
   */
  perClient: number;
}

/**
 * Sign-in nonces: issued by us, single-use, short-lived (the TTL and clock are the adapter's settings). In memory
 * with one process (nonce-store.ts); in PostgreSQL with AUTH_STORE=postgres (pg-nonce-store.ts), so a nonce
 * issued by one gateway is consumed on any, exactly once.
 */
export interface NonceStore {
  /** Creates the table where there is one; safe to run on every start. */
  migrate(): Promise<void>;
  /** A new nonce for `client` (the HTTP route passes the caller's IP); may push out that client's oldest. */
  issue(client?: string): Promise<string>;
  /** True when we issued it, it is unused and not expired. Does not consume it. */
  isValid(nonce: string): Promise<boolean>;
  /** Consumes the nonce atomically: of concurrent calls for one valid nonce exactly one gets true. */
  consume(nonce: string): Promise<boolean>;
  /** Outstanding nonces of one client (its expired ones included until swept or it asks again). */
  heldBy(client: string): Promise<number>;
  /** Drops expired nonces, then the oldest beyond the capacity. */
  sweep(): Promise<void>;
  close(): Promise<void>;
}

/** Session revocations as events: published where made, delivered to every node (session-events.ts). */
export type SessionRevokedListener = (event: SessionRevoked) => void;

export interface SessionEvents {
  /** Announces a revocation made here; delivered to every subscriber (this node's included). */
  publish(event: SessionRevoked): void;
  /** Returns the unsubscribe. */
  subscribe(listener: SessionRevokedListener): () => void;
}
