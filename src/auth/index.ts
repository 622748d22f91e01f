/** Public surface of the auth module. */
export { createAuthService, WalletAuthService, type AuthServiceOptions } from './auth-service.js';
export { AuthError, SCOPES, isScope } from './types.js';
export type { AuthService, AuthContext, UserRecord, TokenPair, SignInBody, ApiKeyRecord, Role, Scope, SessionRevoked, VerifiedAccessToken } from './types.js';
export { InProcessSessionEvents } from './session-events.js';
export { NatsSessionEvents, type NatsSessionEventsOptions } from './nats-session-events.js';
export type { SessionEvents } from './ports.js';
export type { AuthStore, NonceStore, NonceLimits } from './ports.js';
export { MemoryNonceStore, DEFAULT_NONCE_TTL_MS } from './nonce-store.js';
export { PgNonceStore, type PgNonceStoreOptions } from './pg-nonce-store.js';
export { SqliteAuthStore } from './sqlite-auth-store.js';
export { PgAuthStore, type PgAuthStoreOptions } from './pg-auth-store.js';
export { DEFAULT_ALLOWED_DOMAINS } from './origin-allow-list.js';
export { deriveSmartAccountAddress } from './smart-account.js';
export { MarketDataTokens, type MarketDataTokenCheck } from './market-data-tokens.js';
export { loadOrCreateSigningKey, type SigningKey } from './jwt-signing-key.js';
export { PgSharedSecrets } from './pg-shared-secrets.js';
export { DEFAULT_TOKEN_ISSUER } from './access-tokens.js';
