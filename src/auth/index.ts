/** Public surface of the auth module. */
export { createAuthService, WalletAuthService, type AuthServiceOptions } from './auth-service.js';
export { AuthError, SCOPES, isScope } from './types.js';
export type { AuthService, AuthContext, UserRecord, TokenPair, SignInBody, ApiKeyRecord, Role, Scope, SessionRevoked, VerifiedAccessToken } from './types.js';
export { InProcessSessionEvents, type SessionEvents } from './session-events.js';
export type { AuthStore } from './store.js';
export { SqliteAuthStore } from './sqlite-auth-store.js';
export { DEFAULT_ALLOWED_DOMAINS } from './origin-allow-list.js';
export { deriveSmartAccountAddress } from './smart-account.js';
