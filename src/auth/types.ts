/** Contract between the auth module and its users (HTTP gateway, real-time server). */

export type Role = 'user' | 'admin';

/**
 * What an API key or OAuth grant may do (docs/security/scopes.md). Routes declare the one they need; a wallet
 * session (access JWT) holds them all.
 */
export type Scope = 'read' | 'trade' | 'withdraw' | 'account';
export const SCOPES: readonly Scope[] = ['read', 'trade', 'withdraw', 'account'];

export interface UserRecord {
  /** uuid */
  id: string;
  /** uuid, public handle (profiles) */
  authId: string;
  /** integer, used in per-user channel names and as the engine's userId */
  exchangeId: number;
  /** EIP-55 checksummed address */
  wallet: string;
  role: Role;
  name: string | null;
  email: string | null;
  avatar: string | null;
  level: number;
  locale: string;
  dateTimeFormat: string;
  favoriteInstruments: string[];
  social: Array<{ type: string; value: string }>;
  smartAccountAddress: string;
  createdAt: number;
  updatedAt: number;
}

export interface AuthContext {
  user: UserRecord;
  /** how the request authenticated */
  via: 'access-token' | 'api-key' | 'oauth-grant';
  /**
   * API keys and OAuth grants: what the credential may do. Ignored for access tokens (a wallet session may do
   * everything); an API key without it has the default scopes (src/api/scopes.ts).
   */
  scopes?: readonly Scope[];
  /** api-key: the key's id; oauth-grant: the grant's id. Per-credential rate budgets are counted under it. */
  credentialId?: string;
}

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
}

export interface SignInBody {
  wallet: string;
  message: string;
  nonce: string;
  signature: string;
}

/** Thrown by AuthService; the gateway maps it onto `{error:{code,message}}` with `status`. */
export class AuthError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  /** first characters of the key, for display; the key itself is never stored */
  prefix: string;
  createdAt: number;
  updatedAt: number;
  expiresAt: number | null;
  deletedAt: number | null;
}

export interface AuthService {
  /** A sign-in nonce for `client` (the caller's IP: outstanding nonces per client are capped). */
  issueNonce(client?: string): { nonce: string };
  /** SIWE sign-in; first sign-in creates the user. Throws AuthError. */
  signIn(body: SignInBody): Promise<{ user: UserRecord; token: TokenPair }>;
  /** Rotates the refresh token. Throws AuthError(401) for an inactive/reused/expired token. */
  refresh(refreshToken: string): Promise<{ user: UserRecord; token: TokenPair }>;
  /** From request headers: `authorization: Bearer <access JWT>` or `x-api-key`. null when missing/invalid. */
  authenticate(headers: { authorization?: string; 'x-api-key'?: string | string[] }): Promise<AuthContext | null>;
  /**
   * authenticate()'s answer when it can be given without waiting (a token verified before, an API key, a
   * malformed header); undefined when only authenticate() can tell (a token not verified yet). Optional:
   * callers fall back to authenticate().
   */
  authenticateNow?(headers: { authorization?: string; 'x-api-key'?: string | string[] }): AuthContext | null | undefined;
  /** Verifies an access JWT (real-time private channels); returns the user and the token's expiry (ms). */
  verifyAccessToken(token: string): Promise<{ user: UserRecord; expiresAt: number } | null>;
  getUserByExchangeId(exchangeId: number): UserRecord | undefined;
  getUserById(id: string): UserRecord | undefined;
  /** The user whose wallet or smart account is `address` (case-insensitive). */
  findUserByAddress?(address: string): UserRecord | undefined;

  // deprecated API keys
  createApiKey(userId: string, body: { name?: string; expiresAt?: string | null }): { apiKey: ApiKeyRecord; key: string };
  listApiKeys(userId: string, opts: { withDeleted: boolean; withExpired: boolean; limit: number; offset: number }): { list: ApiKeyRecord[]; count: number };
  updateApiKey(userId: string, apiKeyId: string, body: { name?: string; expiresAt?: string | null }): void;
  deleteApiKey(userId: string, apiKeyId: string): void;
  regenerateApiKey(userId: string, apiKeyId: string): { apiKey: ApiKeyRecord; key: string };
}
