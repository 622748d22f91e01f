/**
 * The secrets every gateway of a cluster must share, kept in PostgreSQL (AUTH_STORE=postgres): the JWT signing
 * key (a private JWK) and the operator token. The first process to start creates each one; a process starting
 * at the same time keeps the first one written (INSERT … ON CONFLICT DO NOTHING, then read back), so all agree.
 */
import type { JWK } from 'jose';
import pg from 'pg';
import { migrateUnderLock } from '../store/pg-transaction.js';
import { newSigningJwk, signingKeyFromJwk, type SigningKey } from './jwt-signing-key.js';
import { opaqueToken } from './secrets.js';
import { resilientPgPool } from '../store/pg-pool.js';

/** Serializes the table's creation by processes starting together (CREATE IF NOT EXISTS alone can race). */
const SECRETS_MIGRATION_LOCK = 0x70657273; // "pers"

const SCHEMA = `
CREATE TABLE IF NOT EXISTS auth_shared_secrets (
  name text PRIMARY KEY,
  value text NOT NULL,
  created_at bigint NOT NULL
);
`;

export const SIGNING_KEY_SECRET = 'jwt-signing-key';
export const OPERATOR_TOKEN_SECRET = 'operator-token';

export class PgSharedSecrets {
  private readonly pool: pg.Pool;

  constructor(opts: { connectionString: string }) {
    this.pool = resilientPgPool({ connectionString: opts.connectionString, max: 2 });
  }

  async migrate(): Promise<void> {
    await migrateUnderLock(this.pool, SECRETS_MIGRATION_LOCK, SCHEMA);
  }

  /** The stored value of `name`, storing `candidate()` first when there is none yet. */
  async loadOrCreate(name: string, candidate: () => Promise<string> | string): Promise<string> {
    const existing = await this.read(name);
    if (existing !== undefined) return existing;
    await this.pool.query('INSERT INTO auth_shared_secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING', [
      name,
      await candidate(),
      Date.now(),
    ]);
    const stored = await this.read(name);
    if (stored === undefined) throw new Error(`shared secret ${name} missing after insert`);
    return stored;
  }

  async signingKey(): Promise<SigningKey> {
    const text = await this.loadOrCreate(SIGNING_KEY_SECRET, async () => JSON.stringify(await newSigningJwk()));
    return signingKeyFromJwk(JSON.parse(text) as JWK);
  }

  async operatorToken(): Promise<string> {
    return this.loadOrCreate(OPERATOR_TOKEN_SECRET, opaqueToken);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private async read(name: string): Promise<string | undefined> {
    const r = await this.pool.query<{ value: string }>('SELECT value FROM auth_shared_secrets WHERE name = $1', [name]);
    return r.rows[0]?.value;
  }
}
