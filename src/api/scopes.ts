/**
 * Scopes of API keys and OAuth grants (docs/security/scopes.md). Every authenticated route declares the scope
 * it needs in its config (`config: { auth: true, scope: 'trade' }`); authentication (authenticate.ts) refuses
 * a key or grant without it. A wallet session (access JWT) holds every scope. A route that declares none, or
 * `'wallet-session'`, accepts only a wallet session.
 */
import { SCOPES, type AuthContext, type Scope } from '../auth/types.js';
import { ApiError } from './errors.js';

/** What a route needs: a scope, or a wallet session (no API key or grant at all). */
export type RouteScope = Scope | 'wallet-session';

/** The scopes of an API key created without any (the public client sends none). */
export const DEFAULT_API_KEY_SCOPES: readonly Scope[] = ['read', 'trade'];

/** What the request's credential may do. */
export function scopesOf(ctx: AuthContext): readonly Scope[] {
  if (ctx.via === 'access-token') return SCOPES;
  if (ctx.via === 'api-key') return ctx.scopes ?? DEFAULT_API_KEY_SCOPES;
  return ctx.scopes ?? [];
}

const insufficient = (message: string) => new ApiError(403, 'INSUFFICIENT_SCOPE', message);
const credential = (ctx: AuthContext) => (ctx.via === 'api-key' ? 'API key' : 'OAuth grant');

/** The 403 for a credential that may not call a route needing `need` (undefined = none declared); null = allowed. */
export function scopeRefusal(ctx: AuthContext, need: RouteScope | undefined): ApiError | null {
  if (ctx.via === 'access-token') return null;
  if (need === undefined || need === 'wallet-session') {
    return insufficient(`An ${credential(ctx)} cannot call this route; sign in with the wallet`);
  }
  return scopesOf(ctx).includes(need) ? null : insufficient(`This ${credential(ctx)} lacks the "${need}" scope`);
}

/** The OpenAPI security requirement of a route needing `need` (schemes declared in openapi.ts). */
export function securityFor(need: RouteScope | undefined): Array<Record<string, string[]>> {
  if (need === undefined || need === 'wallet-session') return [{ bearerAuth: [] }];
  return [{ bearerAuth: [] }, { apiKey: [] }, { oauthGrant: [need] }];
}
