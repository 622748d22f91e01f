/**
 * Persistence port of the auth module. Synchronous on purpose: the AuthService API-key methods
 * are synchronous (src/auth/types.ts) and better-sqlite3 is. A PostgreSQL adapter would need
 * those methods made async first, or a write-through cache in front of it.
 */
import type { ApiKeyRecord, Role, UserRecord } from './types.js';

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

export interface AuthStore {
  /** Creates the tables when missing; safe to run on every start. */
  migrate(): void;
  /** Runs `fn` atomically. */
  transaction<T>(fn: () => T): T;

  findUserByWallet(wallet: string): UserRecord | undefined;
  findUserBySmartAccount?(address: string): UserRecord | undefined;
  findUserById(id: string): UserRecord | undefined;
  findUserByExchangeId(exchangeId: number): UserRecord | undefined;
  /** Inserts the user; the store assigns exchangeId (1, 2, 3, ...). */
  createUser(user: NewUser): UserRecord;
  setRole(exchangeId: number, role: Role, now: number): boolean;

  insertRefreshToken(row: RefreshTokenRow): void;
  findRefreshToken(tokenHash: string): RefreshTokenRow | undefined;
  /** Marks an active token rotated; false when it was not active any more (lost a race). */
  markRefreshTokenRotated(tokenHash: string, now: number): boolean;
  revokeRefreshFamily(familyId: string, now: number): void;

  insertApiKey(row: ApiKeyRow): void;
  findApiKeyByHash(keyHash: string): ApiKeyRow | undefined;
  findApiKey(userId: string, id: string): ApiKeyRow | undefined;
  listApiKeys(userId: string, filter: ApiKeyListFilter): { list: ApiKeyRow[]; count: number };
  updateApiKey(
    userId: string,
    id: string,
    patch: Partial<Pick<ApiKeyRow, 'name' | 'expiresAt' | 'deletedAt' | 'keyHash' | 'prefix'>> & { updatedAt: number },
  ): boolean;
}
