/** OauthStore on the auth.db of one process (SQLite, synchronous underneath). */
import type { Database, Statement } from 'better-sqlite3';
import { toRequest, toStoredIntegration, type Approval, type IntegrationRow, type OauthRequest, type OauthStore, type RequestRow, type StoredIntegration } from './oauth-store.js';

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

const USER_FILTER = "user_id = @userId AND (status IN ('approved', 'revoked') OR (@withRejected = 1 AND status = 'rejected'))";

export class SqliteOauthStore implements OauthStore {
  private readonly st: {
    insertIntegration: Statement<[Record<string, unknown>]>;
    integration: Statement<[string], IntegrationRow>;
    integrations: Statement<[], IntegrationRow>;
    prunePending: Statement<[number]>;
    insertRequest: Statement<[Record<string, unknown>]>;
    request: Statement<[string], RequestRow>;
    approve: Statement<[Record<string, unknown>], RequestRow>;
    reject: Statement<[string | null, number, string, number], RequestRow>;
    redeem: Statement<[string, string, string, number], RequestRow>;
    byGrant: Statement<[string], RequestRow>;
    revoke: Statement<[string, string]>;
    listByUser: Statement<[Record<string, unknown>], RequestRow>;
    countByUser: Statement<[Record<string, unknown>], { n: number }>;
  };

  /** Creates the tables when missing. */
  constructor(private readonly db: Database) {
    db.exec(OAUTH_SCHEMA);
    this.st = {
      insertIntegration: db.prepare(
        `INSERT INTO acct_oauth_integrations (id, name, description, redirect_uri, scopes, secret_hash, created_at)
         VALUES (@id, @name, @description, @redirectUri, @scopes, @secretHash, @createdAt)`,
      ),
      integration: db.prepare('SELECT * FROM acct_oauth_integrations WHERE id = ?'),
      integrations: db.prepare('SELECT * FROM acct_oauth_integrations ORDER BY created_at, id'),
      prunePending: db.prepare("DELETE FROM acct_oauth_requests WHERE status = 'pending' AND expires_at <= ?"),
      insertRequest: db.prepare(
        `INSERT INTO acct_oauth_requests (id, integration_id, scopes, state, status, created_at, expires_at)
         VALUES (@id, @integrationId, @scopes, @state, 'pending', @createdAt, @expiresAt)`,
      ),
      request: db.prepare('SELECT * FROM acct_oauth_requests WHERE id = ?'),
      approve: db.prepare(
        `UPDATE acct_oauth_requests SET status = 'approved', user_id = @userId, decided_at = @decidedAt, expires_at = @grantExpiresAt,
           code_hash = @codeHash, code_expires_at = @codeExpiresAt
         WHERE id = @id AND status = 'pending' AND expires_at > @decidedAt RETURNING *`,
      ),
      reject: db.prepare(
        "UPDATE acct_oauth_requests SET status = 'rejected', user_id = ?, decided_at = ? WHERE id = ? AND status = 'pending' AND expires_at > ? RETURNING *",
      ),
      redeem: db.prepare(
        `UPDATE acct_oauth_requests SET code_hash = NULL, code_expires_at = NULL, grant_hash = ?
         WHERE integration_id = ? AND code_hash = ? AND status = 'approved' AND code_expires_at > ? RETURNING *`,
      ),
      byGrant: db.prepare("SELECT * FROM acct_oauth_requests WHERE grant_hash = ? AND status = 'approved'"),
      revoke: db.prepare("UPDATE acct_oauth_requests SET status = 'revoked', code_hash = NULL, grant_hash = NULL WHERE id = ? AND user_id = ? AND status = 'approved'"),
      listByUser: db.prepare(`SELECT * FROM acct_oauth_requests WHERE ${USER_FILTER} ORDER BY created_at DESC, id LIMIT @limit OFFSET @offset`),
      countByUser: db.prepare(`SELECT COUNT(*) AS n FROM acct_oauth_requests WHERE ${USER_FILTER}`),
    };
  }

  async insertIntegration(i: StoredIntegration): Promise<void> {
    this.st.insertIntegration.run({ ...i, scopes: JSON.stringify(i.scopes) });
  }

  async integration(id: string): Promise<StoredIntegration | undefined> {
    const r = this.st.integration.get(id);
    return r && toStoredIntegration(r);
  }

  async integrations(): Promise<StoredIntegration[]> {
    return this.st.integrations.all().map(toStoredIntegration);
  }

  async openRequest(request: OauthRequest, now: number): Promise<void> {
    this.db.transaction(() => {
      this.st.prunePending.run(now);
      this.st.insertRequest.run({ ...request, scopes: JSON.stringify(request.scopes) });
    })();
  }

  async request(id: string): Promise<OauthRequest | undefined> {
    const r = this.st.request.get(id);
    return r && toRequest(r);
  }

  async approve(id: string, a: Approval): Promise<OauthRequest | undefined> {
    const r = this.st.approve.get({ id, ...a });
    return r && toRequest(r);
  }

  async reject(id: string, userId: string | null, now: number): Promise<OauthRequest | undefined> {
    const r = this.st.reject.get(userId, now, id, now);
    return r && toRequest(r);
  }

  async redeemCode(integrationId: string, codeHash: string, grantHash: string, now: number): Promise<OauthRequest | undefined> {
    const r = this.st.redeem.get(grantHash, integrationId, codeHash, now);
    return r && toRequest(r);
  }

  async byGrant(grantHash: string): Promise<OauthRequest | undefined> {
    const r = this.st.byGrant.get(grantHash);
    return r && toRequest(r);
  }

  async revoke(id: string, userId: string): Promise<boolean> {
    return this.st.revoke.run(id, userId).changes === 1;
  }

  async listForUser(userId: string, opts: { withRejected: boolean; limit: number; offset: number }): Promise<{ list: OauthRequest[]; count: number }> {
    const p = { userId, withRejected: opts.withRejected ? 1 : 0 };
    return { list: this.st.listByUser.all({ ...p, limit: opts.limit, offset: opts.offset }).map(toRequest), count: this.st.countByUser.get(p)!.n };
  }
}
