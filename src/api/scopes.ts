/**
 * Scopes of API keys and OAuth grants (docs/security.md, "Scopes"). Every authenticated route declares the scope
 * it needs in its config (`config: { auth: true, scope: 'trade' }`); authentication (authenticate.ts) refuses
 * a key or grant without it. A wallet session (access JWT) holds every scope. A route that declares none, or
 * `'wallet-session'`, accepts only a wallet session.
 */
import type { FastifyRequest } from 'fastify';
import { DEFAULT_API_KEY_SCOPES } from '../auth/api-keys.js';
import { SCOPES, type AuthContext, type Scope } from '../auth/types.js';
import { ApiError } from './errors.js';

/** What a route needs: a scope, or a wallet session (no API key or grant at all). */
export type RouteScope = Scope | 'wallet-session';

/** The scopes of an API key created without any (the public client sends none). */
export { DEFAULT_API_KEY_SCOPES };

/** What the request's credential may do (the auth service sets an API key's own scopes on its context). */
export function scopesOf(ctx: AuthContext): readonly Scope[] {
  return ctx.via === 'access-token' ? SCOPES : ctx.scopes;
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

/**
 * Minting a credential (creating or regenerating an API key, or giving one more scopes): the caller must hold
 * every scope the key will have (`keyScopes`, asked only of API keys), so a key cannot widen itself. A grant never mints keys: the key would outlive
 * the grant's revocation.
 */
export function requireScopesToMint(request: FastifyRequest, keyScopes: () => readonly Scope[]): void {
  const ctx = request.auth;
  if (!ctx || ctx.via === 'access-token') return;
  if (ctx.via === 'oauth-grant') throw insufficient('An OAuth grant cannot create, regenerate or widen API keys; sign in with the wallet');
  const held = scopesOf(ctx);
  const missing = keyScopes().filter((s) => !held.includes(s));
  if (missing.length > 0) throw insufficient(`This API key cannot give a key scopes it lacks itself: ${missing.join(', ')}`);
}

/**
 * The scopes an API-key body asks for. Keys given none get the default, and so does an empty list, which is
 * read as "none given" here (the stricter reading when deciding what the caller must hold).
 */
export function requestedKeyScopes(body: unknown): readonly Scope[] {
  const asked = (body as { scopes?: unknown } | null | undefined)?.scopes;
  if (!Array.isArray(asked) || asked.length === 0) return DEFAULT_API_KEY_SCOPES;
  return SCOPES.filter((s) => asked.includes(s));
}

/** The OpenAPI security requirement of a route needing `need` (schemes declared in openapi.ts). */
export function securityFor(need: RouteScope | undefined): Array<Record<string, string[]>> {
  if (need === undefined || need === 'wallet-session') return [{ bearerAuth: [] }];
  return [{ bearerAuth: [] }, { apiKey: [] }, { oauthGrant: [need] }];
}
