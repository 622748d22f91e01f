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
 * Secrets (client secret, code, grant) are stored as sha256 only.
 */
import { randomUUID } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';
import { opaqueToken, sha256Hex } from '../auth/secrets.js';
import { SCOPES, type Scope } from '../auth/types.js';

/** Grants share the API keys' scope vocabulary (docs/security.md, "Scopes"); an integration may ask for any of them. */
export const OAUTH_SCOPES = SCOPES;
export type OauthScope = Scope;
export const GRANT_PREFIX = 'pxo_';

export interface OauthIntegration {
  id: string;
  name: string;
  description: string;
  redirectUri: string;
  scopes: OauthScope[];
  createdAt: number;
}

export type OauthRequestStatus = 'pending' | 'approved' | 'rejected' | 'revoked';

export interface OauthRequest {
  id: string;
  integrationId: string;
  scopes: OauthScope[];
  state: string;
  status: OauthRequestStatus;
  /** set when a signed-in user decided */
  userId: string | null;
  createdAt: number;
  /** pending: the consent must happen before; approved: the grant is valid until */
  expiresAt: number;
  decidedAt: number | null;
}

export class OauthError extends Error {
  constructor(readonly status: 400 | 401 | 403 | 404 | 409, readonly code: string, message: string) {
    super(message);
  }
}

export const OAUTH_SCHEMA = `
CREATE TABLE IF NOT EXISTS acct_oauth_integrations (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  redirect_uri TEXT NOT NULL,
  scopes TEXT NOT NULL,
  secret_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS acct_oauth_requests (
  id TEXT PRIMARY KEY,
  integration_id TEXT NOT NULL,
  scopes TEXT NOT NULL,
  state TEXT NOT NULL,
  status TEXT NOT NULL,
  user_id TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  decided_at INTEGER,
  code_hash TEXT UNIQUE,
  code_expires_at INTEGER,
  grant_hash TEXT UNIQUE
);
CREATE INDEX IF NOT EXISTS acct_oauth_requests_user ON acct_oauth_requests(user_id, created_at);
CREATE INDEX IF NOT EXISTS acct_oauth_requests_pending ON acct_oauth_requests(status, expires_at);
`;

export interface OauthOptions {
  /** how long a consent screen stays valid (default 10 min) */
  pendingTtlMs?: number;
  /** how long a code may wait for its exchange (default 2 min) */
  codeTtlMs?: number;
  /** grant lifetime (default 30 days) */
  grantTtlMs?: number;
}

interface IntegrationRow { id: string; name: string; description: string; redirect_uri: string; scopes: string; secret_hash: string; created_at: number }
interface RequestRow {
  id: string; integration_id: string; scopes: string; state: string; status: OauthRequestStatus; user_id: string | null;
  created_at: number; expires_at: number; decided_at: number | null; code_hash: string | null; code_expires_at: number | null; grant_hash: string | null;
}

const toIntegration = (r: IntegrationRow): OauthIntegration => ({
  id: r.id, name: r.name, description: r.description, redirectUri: r.redirect_uri, scopes: JSON.parse(r.scopes) as OauthScope[], createdAt: r.created_at,
});
const toRequest = (r: RequestRow): OauthRequest => ({
  id: r.id, integrationId: r.integration_id, scopes: JSON.parse(r.scopes) as OauthScope[], state: r.state, status: r.status, userId: r.user_id,
  createdAt: r.created_at, expiresAt: r.expires_at, decidedAt: r.decided_at,
});

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
  private readonly st: Record<string, Statement>;
  private readonly pendingTtlMs: number;
  private readonly codeTtlMs: number;
  private readonly grantTtlMs: number;

  constructor(private readonly db: Database, opts: OauthOptions = {}) {
    db.exec(OAUTH_SCHEMA);
    this.pendingTtlMs = opts.pendingTtlMs ?? 10 * 60_000;
    this.codeTtlMs = opts.codeTtlMs ?? 2 * 60_000;
    this.grantTtlMs = opts.grantTtlMs ?? 30 * 86_400_000;
    this.st = {
      insertIntegration: db.prepare(
        `INSERT INTO acct_oauth_integrations (id, name, description, redirect_uri, scopes, secret_hash, created_at)
         VALUES (@id, @name, @description, @redirectUri, @scopes, @secretHash, @createdAt)`,
      ),
      integration: db.prepare('SELECT * FROM acct_oauth_integrations WHERE id = ?'),
      integrations: db.prepare('SELECT * FROM acct_oauth_integrations ORDER BY created_at, id'),
      insertRequest: db.prepare(
        `INSERT INTO acct_oauth_requests (id, integration_id, scopes, state, status, created_at, expires_at)
         VALUES (@id, @integrationId, @scopes, @state, 'pending', @createdAt, @expiresAt)`,
      ),
      prunePending: db.prepare("DELETE FROM acct_oauth_requests WHERE status = 'pending' AND expires_at <= ?"),
      request: db.prepare('SELECT * FROM acct_oauth_requests WHERE id = ?'),
      approve: db.prepare(
        `UPDATE acct_oauth_requests SET status = 'approved', user_id = ?, decided_at = ?, expires_at = ?, code_hash = ?, code_expires_at = ?
         WHERE id = ? AND status = 'pending'`,
      ),
      reject: db.prepare("UPDATE acct_oauth_requests SET status = 'rejected', user_id = ?, decided_at = ? WHERE id = ? AND status = 'pending'"),
      byCode: db.prepare('SELECT * FROM acct_oauth_requests WHERE code_hash = ?'),
      issueGrant: db.prepare('UPDATE acct_oauth_requests SET code_hash = NULL, code_expires_at = NULL, grant_hash = ? WHERE id = ? AND code_hash = ?'),
      byGrant: db.prepare("SELECT * FROM acct_oauth_requests WHERE grant_hash = ? AND status = 'approved'"),
      revoke: db.prepare("UPDATE acct_oauth_requests SET status = 'revoked', code_hash = NULL, grant_hash = NULL WHERE id = ? AND user_id = ? AND status = 'approved'"),
      listByUser: db.prepare(
        `SELECT * FROM acct_oauth_requests WHERE user_id = @userId AND (status IN ('approved', 'revoked') OR (@withRejected = 1 AND status = 'rejected'))
         ORDER BY created_at DESC, id LIMIT @limit OFFSET @offset`,
      ),
      countByUser: db.prepare(
        `SELECT COUNT(*) AS n FROM acct_oauth_requests WHERE user_id = @userId AND (status IN ('approved', 'revoked') OR (@withRejected = 1 AND status = 'rejected'))`,
      ),
    };
  }

  // ---- operator ----

  /** Registers an integration; the client secret is returned once. Throws OauthError(400) on bad input. */
  registerIntegration(input: { name: string; redirectUri: string; scopes: string[]; description?: string }, now: number): { integration: OauthIntegration; clientSecret: string } {
    const name = input.name?.trim() ?? '';
    if (name.length === 0 || name.length > 100) throw new OauthError(400, 'INVALID_NAME', 'name must be 1 to 100 characters');
    if (!validRedirectUri(input.redirectUri)) throw new OauthError(400, 'INVALID_REDIRECT_URI', 'redirectUri must be an https URL (http only on localhost) without fragment or credentials');
    const scopes = this.parseScopes(input.scopes, OAUTH_SCOPES);
    if (scopes.length === 0) throw new OauthError(400, 'INVALID_SCOPE', `scopes must name at least one of ${OAUTH_SCOPES.join(', ')}`);
    const clientSecret = opaqueToken();
    const integration: OauthIntegration = { id: randomUUID(), name, description: input.description ?? '', redirectUri: input.redirectUri, scopes, createdAt: now };
    this.st.insertIntegration!.run({ ...integration, scopes: JSON.stringify(scopes), secretHash: sha256Hex(clientSecret) });
    return { integration, clientSecret };
  }

  integrations(): OauthIntegration[] {
    return (this.st.integrations!.all() as IntegrationRow[]).map(toIntegration);
  }

  // ---- consent ----

  integration(id: string): OauthIntegration | undefined {
    const r = this.st.integration!.get(id) as IntegrationRow | undefined;
    return r && toIntegration(r);
  }

  /** Opens a pending consent request for the integration and scopes (each must be allowed to it). */
  openRequest(integrationId: string, scopes: string[], state: string, now: number): { request: OauthRequest; integration: OauthIntegration } {
    const integration = this.integration(integrationId);
    if (!integration) throw new OauthError(404, 'INTEGRATION_NOT_FOUND', 'No integration with this id');
    const granted = this.parseScopes(scopes, integration.scopes);
    const request: OauthRequest = {
      id: randomUUID(), integrationId, scopes: granted.length > 0 ? granted : [...integration.scopes], state, status: 'pending',
      userId: null, createdAt: now, expiresAt: now + this.pendingTtlMs, decidedAt: null,
    };
    this.db.transaction(() => {
      this.st.prunePending!.run(now);
      this.st.insertRequest!.run({ ...request, scopes: JSON.stringify(request.scopes) });
    })();
    return { request, integration };
  }

  /** A pending, unexpired request (consent checks this before verifying the signature). */
  pendingRequest(id: string, now: number): { request: OauthRequest; integration: OauthIntegration } {
    const r = this.st.request!.get(id) as RequestRow | undefined;
    if (!r) throw new OauthError(404, 'OAUTH_REQUEST_NOT_FOUND', 'OAuth request not found');
    if (r.status !== 'pending') throw new OauthError(409, 'OAUTH_REQUEST_DECIDED', `OAuth request was already ${r.status}`);
    if (r.expires_at <= now) throw new OauthError(400, 'OAUTH_REQUEST_EXPIRED', 'OAuth request expired; start again from the integration');
    return { request: toRequest(r), integration: this.integration(r.integration_id)! };
  }

  /** Approves (after the route verified the signed consent); returns the redirect with a single-use code. */
  approve(id: string, userId: string, now: number): { request: OauthRequest; redirectUrl: string; code: string } {
    return this.db.transaction(() => {
      const { integration } = this.pendingRequest(id, now);
      const code = opaqueToken();
      if (this.st.approve!.run(userId, now, now + this.grantTtlMs, sha256Hex(code), now + this.codeTtlMs, id).changes !== 1) {
        throw new OauthError(409, 'OAUTH_REQUEST_DECIDED', 'OAuth request was already decided');
      }
      const request = toRequest(this.st.request!.get(id) as RequestRow);
      return { request, code, redirectUrl: withQuery(integration.redirectUri, { code, state: request.state }) };
    })();
  }

  deny(id: string, userId: string | null, now: number): { request: OauthRequest; redirectUrl: string } {
    return this.db.transaction(() => {
      const { integration } = this.pendingRequest(id, now);
      this.st.reject!.run(userId, now, id);
      const request = toRequest(this.st.request!.get(id) as RequestRow);
      return { request, redirectUrl: withQuery(integration.redirectUri, { error: 'access_denied', state: request.state }) };
    })();
  }

  /** The integration trades its code (once, before it expires) and secret for the grant token. */
  exchangeCode(integrationId: string, clientSecret: string, code: string, now: number): { accessToken: string; request: OauthRequest } {
    return this.db.transaction(() => {
      const integ = this.st.integration!.get(integrationId) as IntegrationRow | undefined;
      if (!integ || integ.secret_hash !== sha256Hex(clientSecret)) throw new OauthError(401, 'INVALID_CLIENT', 'Unknown integration or wrong client secret');
      const codeHash = sha256Hex(code);
      const r = this.st.byCode!.get(codeHash) as RequestRow | undefined;
      if (!r || r.integration_id !== integrationId || r.status !== 'approved' || (r.code_expires_at ?? 0) <= now) {
        throw new OauthError(400, 'INVALID_GRANT', 'The code is unknown, used, expired or belongs to another integration');
      }
      const accessToken = GRANT_PREFIX + opaqueToken();
      this.st.issueGrant!.run(sha256Hex(accessToken), r.id, codeHash);
      return { accessToken, request: toRequest(r) };
    })();
  }

  /** The approved, unexpired request behind a grant token (undefined = not a valid grant). */
  grant(token: string, now: number): OauthRequest | undefined {
    if (!token.startsWith(GRANT_PREFIX)) return undefined;
    const r = this.st.byGrant!.get(sha256Hex(token)) as RequestRow | undefined;
    if (!r || r.expires_at <= now || r.user_id === null) return undefined;
    return toRequest(r);
  }

  // ---- the user's own requests ----

  listForUser(userId: string, opts: { withRejected: boolean; limit: number; offset: number }): { list: OauthRequest[]; count: number } {
    const p = { userId, withRejected: opts.withRejected ? 1 : 0 };
    return {
      list: (this.st.listByUser!.all({ ...p, limit: opts.limit, offset: opts.offset }) as RequestRow[]).map(toRequest),
      count: (this.st.countByUser!.get(p) as { n: number }).n,
    };
  }

  /** Revokes the user's approved request (its grant stops working at once). */
  revoke(userId: string, id: string): void {
    if (this.st.revoke!.run(id, userId).changes !== 1) throw new OauthError(404, 'OAUTH_REQUEST_NOT_FOUND', 'No active OAuth grant with this id');
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
