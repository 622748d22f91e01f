/**
 * OAuth grant tokens as request credentials: `Authorization: Bearer pxo_…` authenticates as the user who
 * approved, limited to the grant's scopes (each route declares the scope it needs; src/api/scopes.ts checks).
 * Everything else goes to the wallet auth service unchanged.
 */
import type { AuthContext, AuthService } from '../auth/types.js';
import { GRANT_PREFIX, type OauthService } from './oauth.js';

const GRANT_BEARER = new RegExp(`^Bearer[ ]+(${GRANT_PREFIX}\\S+)\\s*$`, 'i');

/** The auth service, plus grant tokens. */
export function withOauthGrants(base: AuthService, oauth: OauthService, now: () => number): AuthService {
  // Everything but authenticate is the base service's own: inherit it (prototype) rather than forwarding
  // method by method, so a method added to AuthService later is never silently missing here.
  const wrapped = Object.create(base) as AuthService;
  const grantContext = async (token: string): Promise<AuthContext | null> => {
    const grant = await oauth.grant(token, now());
    const user = grant?.userId ? await base.getUserById(grant.userId) : undefined;
    return grant && user ? { user, via: 'oauth-grant', scopes: grant.scopes, credentialId: grant.id } : null;
  };
  wrapped.authenticate = async (headers): Promise<AuthContext | null> => {
    const m = typeof headers.authorization === 'string' ? GRANT_BEARER.exec(headers.authorization) : null;
    return m ? grantContext(m[1]!) : base.authenticate(headers);
  };
  // A grant's user is read from the auth store (async): grant requests take the authenticate() path.
  wrapped.authenticateNow = (headers) => {
    const m = typeof headers.authorization === 'string' ? GRANT_BEARER.exec(headers.authorization) : null;
    return m ? undefined : base.authenticateNow?.(headers);
  };
  return wrapped;
}
