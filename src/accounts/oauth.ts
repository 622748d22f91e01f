/**
 * OAuth for third-party integrations (authorization-code flow, wallet-signed consent):
 *
 *  1. an operator registers an integration (name, redirect URI, the scopes it may ask for) and receives
 *     its client secret once;
 *  2. the integration sends the user to the consent screen, which reads GET /api/oauth: that opens a
 *     short-lived pending request (its id is what the wallet signs);
 *  3. the user approves (signed "Oauth consent" over the request id) or denies; approval yields a
 *     single-use code in the redirect URL;
 *  4. the integration exchanges code + client secret for a scoped grant token (`pxo_…`), a bearer
 *     credential limited to its scopes (checked per route: src/api/scopes.ts) until it expires or the
 *     user revokes it.
 *
 * Secrets (client secret, code, grant) are stored as sha256 only. Storage is the OauthStore port (oauth-store.ts):
 * auth.db of one process, or PostgreSQL shared by every gateway.
 */
import { randomUUID } from 'node:crypto';
import { opaqueToken, sha256Hex } from '../auth/secrets.js';
import { SCOPES, type Scope } from '../auth/types.js';
import type { OauthIntegration, OauthRequest, OauthStore, StoredIntegration } from './oauth-store.js';

export type { OauthIntegration, OauthRequest, OauthRequestStatus, OauthStore } from './oauth-store.js';

/** Grants share the API keys' scope vocabulary (docs/security.md, "Scopes"); an integration may ask for any of them. */
export const OAUTH_SCOPES = SCOPES;
export type OauthScope = Scope;
export const GRANT_PREFIX = 'pxo_';

export class OauthError extends Error {
  constructor(readonly status: 400 | 401 | 403 | 404 | 409, readonly code: string, message: string) {
    super(message);
  }
}

export interface OauthOptions {
  /** how long a consent screen stays valid (default 10 min) */
  pendingTtlMs?: number;
  /** how long a code may wait for its exchange (default 2 min) */
  codeTtlMs?: number;
  /** grant lifetime (default 30 days) */
  grantTtlMs?: number;
}

const publicIntegration = ({ secretHash: _secret, ...integration }: StoredIntegration): OauthIntegration => integration;

/** https URL, or http on localhost (integrations under development). */
function validRedirectUri(uri: string): boolean {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return false;
  }
  if (u.hash !== '' || u.username !== '' || u.password !== '') return false;
  return u.protocol === 'https:' || (u.protocol === 'http:' && (u.hostname === 'localhost' || u.hostname === '127.0.0.1'));
}

export function withQuery(uri: string, params: Record<string, string>): string {
  const u = new URL(uri);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return u.toString();
}

export class OauthService {
  private readonly pendingTtlMs: number;
  private readonly codeTtlMs: number;
  private readonly grantTtlMs: number;

  constructor(private readonly store: OauthStore, opts: OauthOptions = {}) {
    this.pendingTtlMs = opts.pendingTtlMs ?? 10 * 60_000;
    this.codeTtlMs = opts.codeTtlMs ?? 2 * 60_000;
    this.grantTtlMs = opts.grantTtlMs ?? 30 * 86_400_000;
  }

  // ---- operator ----

  /** Registers an integration; the client secret is returned once. Throws OauthError(400) on bad input. */
  async registerIntegration(input: { name: string; redirectUri: string; scopes: string[]; description?: string }, now: number): Promise<{ integration: OauthIntegration; clientSecret: string }> {
    const name = input.name?.trim() ?? '';
    if (name.length === 0 || name.length > 100) throw new OauthError(400, 'INVALID_NAME', 'name must be 1 to 100 characters');
    if (!validRedirectUri(input.redirectUri)) throw new OauthError(400, 'INVALID_REDIRECT_URI', 'redirectUri must be an https URL (http only on localhost) without fragment or credentials');
    const scopes = this.parseScopes(input.scopes, OAUTH_SCOPES);
    if (scopes.length === 0) throw new OauthError(400, 'INVALID_SCOPE', `scopes must name at least one of ${OAUTH_SCOPES.join(', ')}`);
    const clientSecret = opaqueToken();
    const integration: OauthIntegration = { id: randomUUID(), name, description: input.description ?? '', redirectUri: input.redirectUri, scopes, createdAt: now };
    await this.store.insertIntegration({ ...integration, secretHash: sha256Hex(clientSecret) });
    return { integration, clientSecret };
  }

  async integrations(): Promise<OauthIntegration[]> {
    return (await this.store.integrations()).map(publicIntegration);
  }

  // ---- consent ----

  async integration(id: string): Promise<OauthIntegration | undefined> {
    const stored = await this.store.integration(id);
    return stored && publicIntegration(stored);
  }

  /** Opens a pending consent request for the integration and scopes (each must be allowed to it). */
  async openRequest(integrationId: string, scopes: string[], state: string, now: number): Promise<{ request: OauthRequest; integration: OauthIntegration }> {
    const integration = await this.integration(integrationId);
    if (!integration) throw new OauthError(404, 'INTEGRATION_NOT_FOUND', 'No integration with this id');
    const granted = this.parseScopes(scopes, integration.scopes);
    const request: OauthRequest = {
      id: randomUUID(), integrationId, scopes: granted.length > 0 ? granted : [...integration.scopes], state, status: 'pending',
      userId: null, createdAt: now, expiresAt: now + this.pendingTtlMs, decidedAt: null,
    };
    await this.store.openRequest(request, now);
    return { request, integration };
  }

  /** A pending, unexpired request (consent checks this before verifying the signature). */
  async pendingRequest(id: string, now: number): Promise<{ request: OauthRequest; integration: OauthIntegration }> {
    const request = await this.store.request(id);
    if (!request) throw new OauthError(404, 'OAUTH_REQUEST_NOT_FOUND', 'OAuth request not found');
    if (request.status !== 'pending') throw new OauthError(409, 'OAUTH_REQUEST_DECIDED', `OAuth request was already ${request.status}`);
    if (request.expiresAt <= now) throw new OauthError(400, 'OAUTH_REQUEST_EXPIRED', 'OAuth request expired; start again from the integration');
    return { request, integration: (await this.integration(request.integrationId))! };
  }

  /** Approves (after the route verified the signed consent); returns the redirect with a single-use code. */
  async approve(id: string, userId: string, now: number): Promise<{ request: OauthRequest; redirectUrl: string; code: string }> {
    const { integration } = await this.pendingRequest(id, now);
    const code = opaqueToken();
    const request = await this.store.approve(id, { userId, decidedAt: now, grantExpiresAt: now + this.grantTtlMs, codeHash: sha256Hex(code), codeExpiresAt: now + this.codeTtlMs });
    // Decided in between (another approval or a denial, perhaps through another gateway): that one won.
    if (!request) throw new OauthError(409, 'OAUTH_REQUEST_DECIDED', 'OAuth request was already decided');
    return { request, code, redirectUrl: withQuery(integration.redirectUri, { code, state: request.state }) };
  }

  async deny(id: string, userId: string | null, now: number): Promise<{ request: OauthRequest; redirectUrl: string }> {
    const { integration } = await this.pendingRequest(id, now);
    const request = await this.store.reject(id, userId, now);
    if (!request) throw new OauthError(409, 'OAUTH_REQUEST_DECIDED', 'OAuth request was already decided');
    return { request, redirectUrl: withQuery(integration.redirectUri, { error: 'access_denied', state: request.state }) };
  }

  /** The integration trades its code (once, before it expires) and secret for the grant token. */
  async exchangeCode(integrationId: string, clientSecret: string, code: string, now: number): Promise<{ accessToken: string; request: OauthRequest }> {
    const integration = await this.store.integration(integrationId);
    if (!integration || integration.secretHash !== sha256Hex(clientSecret)) throw new OauthError(401, 'INVALID_CLIENT', 'Unknown integration or wrong client secret');
    const accessToken = GRANT_PREFIX + opaqueToken();
    const request = await this.store.redeemCode(integrationId, sha256Hex(code), sha256Hex(accessToken), now);
    if (!request) throw new OauthError(400, 'INVALID_GRANT', 'The code is unknown, used, expired or belongs to another integration');
    return { accessToken, request };
  }

  /** The approved, unexpired request behind a grant token (undefined = not a valid grant). */
  async grant(token: string, now: number): Promise<OauthRequest | undefined> {
    if (!token.startsWith(GRANT_PREFIX)) return undefined;
    const request = await this.store.byGrant(sha256Hex(token));
    if (!request || request.expiresAt <= now || request.userId === null) return undefined;
    return request;
  }

  // ---- the user's own requests ----

  listForUser(userId: string, opts: { withRejected: boolean; limit: number; offset: number }): Promise<{ list: OauthRequest[]; count: number }> {
    return this.store.listForUser(userId, opts);
  }

  /** Revokes the user's approved request (its grant stops working at once). */
  async revoke(userId: string, id: string): Promise<void> {
    if (!(await this.store.revoke(id, userId))) throw new OauthError(404, 'OAUTH_REQUEST_NOT_FOUND', 'No active OAuth grant with this id');
  }

  private parseScopes(scopes: readonly string[], allowed: readonly string[]): OauthScope[] {
    const out: OauthScope[] = [];
    for (const s of scopes) {
      if (!allowed.includes(s)) throw new OauthError(400, 'INVALID_SCOPE', `Scope "${s}" is not ${allowed === OAUTH_SCOPES ? 'known' : 'allowed for this integration'} (allowed: ${allowed.join(', ')})`);
      if (!out.includes(s as OauthScope)) out.push(s as OauthScope);
    }
    return out;
  }
}
