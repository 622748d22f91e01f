/** Operator commands on the account tables, for the CLI (they open the data directory's auth database). */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { OauthService, type OauthIntegration } from './oauth.js';

/** Registers an OAuth integration in `<dataDir>/auth.db`; the client secret is returned once. Throws OauthError on bad input. */
export function registerOauthIntegration(
  dataDir: string,
  input: { name: string; redirectUri: string; scopes: string[]; description?: string },
  now = Date.now(),
): { integration: OauthIntegration; clientSecret: string } {
  const db = new Database(join(dataDir, 'auth.db'));
  try {
    db.pragma('journal_mode = WAL');
    return new OauthService(db).registerIntegration(input, now);
  } finally {
    db.close();
  }
}
