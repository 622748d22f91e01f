/** Contract between the auth module and its users (HTTP gateway, real-time server). */

export type Role = 'user' | 'admin';

/**
 * What a credential may do (docs/security.md, "Scopes"): `read` account data, `trade` (orders, positions,
 * TpSl), `withdraw` funds, manage the `account` (profile, API keys). Routes declare the one they need; a
 * wallet session (access JWT) holds them all; API keys and OAuth grants hold the ones they were given.
 */
export const SCOPES = Object.freeze(['read', 'trade', 'withdraw', 'account'] as const);
export type Scope = (typeof SCOPES)[number];

export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && (SCOPES as readonly string[]).includes(value);
}

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
  /** what this credential may do: all scopes for an access token, the key's or grant's own otherwise */
  scopes: readonly Scope[];
  /** access tokens only: the session (refresh-token family) the token belongs to */
  sessionId?: string;
  /** api-key: the key's id; oauth-grant: the grant's id. Per-credential rate budgets are counted under it. */
  credentialId?: string;
}

/** Verified access token: its user, expiry (ms) and session (refresh-token family id). */
export interface VerifiedAccessToken {
  user: UserRecord;
  expiresAt: number;
  sessionId: string;
  /** ms: when the session ends unless refreshed (a real-time subscription lives until then) */
  sessionExpiresAt: number;
}

/** A session was revoked (logout, refresh-token reuse): its access tokens are refused from now on. */
export interface SessionRevoked {
  sessionId: string;
  userId: string;
  /** ms */
  revokedAt: number;
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
  scopes: Scope[];
}

export interface ApiKeyBody {
  name?: string;
  expiresAt?: string | null;
  /** create only; default read + trade */
  scopes?: string[];
}

export interface AuthService {
  /** A sign-in nonce for `client` (the caller's IP: outstanding nonces per client are capped). */
  issueNonce(client?: string): Promise<{ nonce: string }>;
  /** SIWE sign-in; first sign-in creates the user (and a session). Throws AuthError. */
  signIn(body: SignInBody): Promise<{ user: UserRecord; token: TokenPair }>;
  /** Rotates the refresh token. Throws AuthError(401) for an inactive/reused/expired token. */
  refresh(refreshToken: string): Promise<{ user: UserRecord; token: TokenPair }>;
  /**
   * Ends the session of `token` (an access token or a refresh token of it): its refresh tokens are
   * revoked and its access tokens refused at once. Throws AuthError(401) for a token of no session.
   */
  logout(token: string): Promise<void>;
  /** Calls `listener` for each revoked session (here or, later, on another node); returns an unsubscribe. */
  onRevoked?(listener: (event: SessionRevoked) => void): () => void;
  /** From request headers: `authorization: Bearer <access JWT>` or `x-api-key`. null when missing/invalid. */
  authenticate(headers: { authorization?: string; 'x-api-key'?: string | string[] }): Promise<AuthContext | null>;
  /**
   * authenticate()'s answer when it can be given without waiting (a token or API key seen recently, a
   * malformed header); undefined when only authenticate() can tell. Optional: callers fall back to authenticate().
   */
  authenticateNow?(headers: { authorization?: string; 'x-api-key'?: string | string[] }): AuthContext | null | undefined;
  /** Verifies an access JWT (real-time private channels); null when invalid, expired or its session revoked. */
  verifyAccessToken(token: string): Promise<VerifiedAccessToken | null>;
  getUserByExchangeId(exchangeId: number): Promise<UserRecord | undefined>;
  getUserById(id: string): Promise<UserRecord | undefined>;
  /** The user whose wallet or smart account is `address` (case-insensitive). */
  findUserByAddress?(address: string): Promise<UserRecord | undefined>;

  // deprecated API keys. `caller`: the scopes of the request's credential; a key it regenerates or updates
  // must not be wider (the route checks a new key's requested scopes before the body is read).
  createApiKey(userId: string, body: ApiKeyBody): Promise<{ apiKey: ApiKeyRecord; key: string }>;
  listApiKeys(userId: string, opts: { withDeleted: boolean; withExpired: boolean; limit: number; offset: number }): Promise<{ list: ApiKeyRecord[]; count: number }>;
  updateApiKey(userId: string, apiKeyId: string, body: ApiKeyBody, caller?: readonly Scope[]): Promise<void>;
  deleteApiKey(userId: string, apiKeyId: string): Promise<void>;
  regenerateApiKey(userId: string, apiKeyId: string, caller?: readonly Scope[]): Promise<{ apiKey: ApiKeyRecord; key: string }>;
}
