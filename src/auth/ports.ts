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

/** Session revocations as events: published where made, delivered to every node (session-events.ts). */
export type SessionRevokedListener = (event: SessionRevoked) => void;

export interface SessionEvents {
  /** Announces a revocation made here; delivered to every subscriber (this node's included). */
  publish(event: SessionRevoked): void;
  /** Returns the unsubscribe. */
  subscribe(listener: SessionRevokedListener): () => void;
}
