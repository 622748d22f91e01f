/**
 * OauthStore on PostgreSQL (AUTH_STORE=postgres): an integration registered, a consent opened, a code issued or a
 * grant revoked through one gateway holds on every other. Tables in pg-schema.ts.
 */
import type pg from 'pg';
import { listedStatuses, toRequest, toStoredIntegration, type Approval, type IntegrationRow, type OauthRequest, type OauthStore, type RequestRow, type StoredIntegration } from './oauth-store.js';

export class PgOauthStore implements OauthStore {
  constructor(private readonly pool: pg.Pool) {}

  async insertIntegration(i: StoredIntegration): Promise<void> {
    await this.pool.query(
      `INSERT INTO acct_oauth_integrations (id, name, description, redirect_uri, scopes, secret_hash, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [i.id, i.name, i.description, i.redirectUri, JSON.stringify(i.scopes), i.secretHash, i.createdAt],
    );
  }

  async integration(id: string): Promise<StoredIntegration | undefined> {
    const r = (await this.pool.query<IntegrationRow>('SELECT * FROM acct_oauth_integrations WHERE id = $1', [id])).rows[0];
    return r && toStoredIntegration(r);
  }

  async integrations(): Promise<StoredIntegration[]> {
    return (await this.pool.query<IntegrationRow>('SELECT * FROM acct_oauth_integrations ORDER BY created_at, id')).rows.map(toStoredIntegration);
  }

  async openRequest(r: OauthRequest, now: number): Promise<void> {
    // No transaction needed: a pending request past its expiry can never be decided, whoever deletes it.
    await this.pool.query("DELETE FROM acct_oauth_requests WHERE status = 'pending' AND expires_at <= $1", [now]);
    await this.pool.query(
      `INSERT INTO acct_oauth_requests (id, integration_id, scopes, state, status, created_at, expires_at)
       VALUES ($1, $2, $3, $4, 'pending', $5, $6)`,
      [r.id, r.integrationId, JSON.stringify(r.scopes), r.state, r.createdAt, r.expiresAt],
    );
  }

  async request(id: string): Promise<OauthRequest | undefined> {
    const r = (await this.pool.query<RequestRow>('SELECT * FROM acct_oauth_requests WHERE id = $1', [id])).rows[0];
    return r && toRequest(r);
  }

  async approve(id: string, a: Approval): Promise<OauthRequest | undefined> {
    const r = await this.pool.query<RequestRow>(
      `UPDATE acct_oauth_requests SET status = 'approved', user_id = $2, decided_at = $3, expires_at = $4, code_hash = $5, code_expires_at = $6
       WHERE id = $1 AND status = 'pending' AND expires_at > $3 RETURNING *`,
      [id, a.userId, a.decidedAt, a.grantExpiresAt, a.codeHash, a.codeExpiresAt],
    );
    return r.rows[0] && toRequest(r.rows[0]);
  }

  async reject(id: string, userId: string | null, now: number): Promise<OauthRequest | undefined> {
    const r = await this.pool.query<RequestRow>(
      "UPDATE acct_oauth_requests SET status = 'rejected', user_id = $2, decided_at = $3 WHERE id = $1 AND status = 'pending' AND expires_at > $3 RETURNING *",
      [id, userId, now],
    );
    return r.rows[0] && toRequest(r.rows[0]);
  }

  async redeemCode(integrationId: string, codeHash: string, grantHash: string, now: number): Promise<OauthRequest | undefined> {
    const r = await this.pool.query<RequestRow>(
      `UPDATE acct_oauth_requests SET code_hash = NULL, code_expires_at = NULL, grant_hash = $1
       WHERE integration_id = $2 AND code_hash = $3 AND status = 'approved' AND code_expires_at > $4 RETURNING *`,
      [grantHash, integrationId, codeHash, now],
    );
    return r.rows[0] && toRequest(r.rows[0]);
  }

  async byGrant(grantHash: string): Promise<OauthRequest | undefined> {
    const r = (await this.pool.query<RequestRow>("SELECT * FROM acct_oauth_requests WHERE grant_hash = $1 AND status = 'approved'", [grantHash])).rows[0];
    return r && toRequest(r);
  }

  async revoke(id: string, userId: string): Promise<boolean> {
    const r = await this.pool.query(
      "UPDATE acct_oauth_requests SET status = 'revoked', code_hash = NULL, grant_hash = NULL WHERE id = $1 AND user_id = $2 AND status = 'approved'",
      [id, userId],
    );
    return r.rowCount === 1;
  }

  async listForUser(userId: string, opts: { withRejected: boolean; limit: number; offset: number }): Promise<{ list: OauthRequest[]; count: number }> {
    const statuses = listedStatuses(opts.withRejected);
    const [list, count] = await Promise.all([
      this.pool.query<RequestRow>(
        'SELECT * FROM acct_oauth_requests WHERE user_id = $1 AND status = ANY($2) ORDER BY created_at DESC, id LIMIT $3 OFFSET $4',
        [userId, statuses, opts.limit, opts.offset],
      ),
      this.pool.query<{ n: string }>('SELECT COUNT(*) AS n FROM acct_oauth_requests WHERE user_id = $1 AND status = ANY($2)', [userId, statuses]),
    ]);
    return { list: list.rows.map(toRequest), count: Number(count.rows[0]!.n) };
  }
}
