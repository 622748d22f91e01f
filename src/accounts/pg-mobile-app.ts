/** BlockedVersionStore on PostgreSQL (AUTH_STORE=postgres): one set of mobile-app rules for every gateway. */
import type pg from 'pg';
import { inTransaction } from '../store/pg-transaction.js';
import { coveringRule, patchedRule, type BlockedVersion, type BlockedVersionPatch, type BlockedVersionStore, type Platform } from './mobile-app.js';

export class PgBlockedVersionStore implements BlockedVersionStore {
  constructor(private readonly pool: pg.Pool) {}

  async get(id: string): Promise<BlockedVersion | undefined> {
    const r = (await this.pool.query<{ body: string }>('SELECT body FROM acct_mobile_blocked_versions WHERE id = $1', [id])).rows[0];
    return r && (JSON.parse(r.body) as BlockedVersion);
  }

  async list(): Promise<BlockedVersion[]> {
    const r = await this.pool.query<{ body: string }>('SELECT body FROM acct_mobile_blocked_versions ORDER BY platform, id');
    return r.rows.map((x) => JSON.parse(x.body) as BlockedVersion);
  }

  async put(id: string, patch: BlockedVersionPatch, now: number): Promise<BlockedVersion> {
    return inTransaction(this.pool, async (c) => {
      // FOR UPDATE: two operators patching one rule through two gateways must not lose either patch.
      const row = (await c.query<{ body: string }>('SELECT body FROM acct_mobile_blocked_versions WHERE id = $1 FOR UPDATE', [id])).rows[0];
      const next = patchedRule(id, row && (JSON.parse(row.body) as BlockedVersion), patch, now);
      await c.query(
        `INSERT INTO acct_mobile_blocked_versions (id, body, platform, updated_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (id) DO UPDATE SET body = excluded.body, platform = excluded.platform, updated_at = excluded.updated_at`,
        [id, JSON.stringify(next), next.platform, now],
      );
      return next;
    });
  }

  async check(platform: Platform, version: string): Promise<BlockedVersion | undefined> {
    const r = await this.pool.query<{ body: string }>('SELECT body FROM acct_mobile_blocked_versions WHERE platform = $1 ORDER BY id', [platform]);
    return coveringRule(r.rows.map((x) => JSON.parse(x.body) as BlockedVersion), version);
  }
}
