/** Operator commands on the account tables, for the CLI (they open the data directory's auth database). */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { OauthService, type OauthIntegration } from './oauth.js';
import { SqliteOauthStore } from './sqlite-oauth.js';

/**
 * Registers an OAuth integration in `<dataDir>/auth.db` (AUTH_STORE=sqlite; with PostgreSQL register through a
 * gateway: `perpx oauth-register`); the client secret is returned once. Throws OauthError on bad input.
 */
export async function registerOauthIntegration(
  dataDir: string,
  input: { name: string; redirectUri: string; scopes: string[]; description?: string },
  now = Date.now(),
): Promise<{ integration: OauthIntegration; clientSecret: string }> {
  const db = new Database(join(dataDir, 'auth.db'));
  try {
    db.pragma('journal_mode = WAL');
    return await new OauthService(new SqliteOauthStore(db)).registerIntegration(input, now);
  } finally {
    db.close();
  }
}
