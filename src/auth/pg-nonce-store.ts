/**
 * Sign-in nonces in PostgreSQL (AUTH_STORE=postgres, the auth store's database): a nonce issued by one gateway is
 * consumed on any, exactly once (one conditional DELETE: of gateways racing on a nonce, the row lock lets one
 * delete it and the others find nothing). The per-client cap holds for all gateways together; the capacity is
 * kept by the sweep, which every gateway runs (concurrent sweeps delete the same rows harmlessly).
 */
import pg from 'pg';
import { migrateUnderLock } from '../store/pg-transaction.js';
import { checkNonceLimits, DEFAULT_NONCE_LIMITS, newNonce, UNNAMED_CLIENT } from './nonce-store.js';
import type { NonceLimits, NonceStore } from './ports.js';

/** Serializes the table's creation by gateways starting together (CREATE IF NOT EXISTS alone can race). */
const NONCES_MIGRATION_LOCK = 0x7065726e; // "pern"

// seq orders "oldest first" exactly, where issue times tie within a millisecond.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS auth_nonces (
  nonce text PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  client text NOT NULL,
  expires_at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS auth_nonces_client ON auth_nonces (client, seq);
CREATE INDEX IF NOT EXISTS auth_nonces_seq ON auth_nonces (seq);
CREATE INDEX IF NOT EXISTS auth_nonces_expiry ON auth_nonces (expires_at);
`;

/**
 * Inserts the new nonce and, in the same statement, drops the client's expired nonces and its live ones beyond
 * the newest perClient-1 ($4). The DELETE reads the statement's snapshot, which never holds the new row. Two
 * gateways issuing to one client at the same moment may leave it one over the cap until its next request.
 */
const ISSUE = `
WITH fresh AS (INSERT INTO auth_nonces (nonce, client, expires_at) VALUES ($1, $2, $3::bigint + $5::bigint)),
kept AS (SELECT nonce FROM auth_nonces WHERE client = $2 AND expires_at > $3::bigint ORDER BY seq DESC LIMIT $4)
DELETE FROM auth_nonces WHERE client = $2 AND nonce NOT IN (SELECT nonce FROM kept)`;

export interface PgNonceStoreOptions {
  connectionString: string;
  ttlMs: number;
  limits?: NonceLimits;
  /** clock in ms; injectable for tests. Gateways' clocks should agree (NTP): expiry is checked on the consuming one. */
  now?: () => number;
  /** How often this process sweeps once migrated (default 60 s; 0: never, the caller sweeps). */
  sweepEveryMs?: number;
  /** Pool size (default 4). */
  poolSize?: number;
}

export class PgNonceStore implements NonceStore {
  private readonly pool: pg.Pool;
  private readonly limits: NonceLimits;
  private readonly now: () => number;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly opts: PgNonceStoreOptions) {
    this.limits = opts.limits ?? DEFAULT_NONCE_LIMITS;
    checkNonceLimits(this.limits);
    this.now = opts.now ?? Date.now;
    this.pool = new pg.Pool({ connectionString: opts.connectionString, max: opts.poolSize ?? 4 });
    // An idle client the server ends (restart, admin kill) errors on the pool; the pool replaces it.
    this.pool.on('error', () => {});
  }

  async migrate(): Promise<void> {
    await migrateUnderLock(this.pool, NONCES_MIGRATION_LOCK, SCHEMA);
    const every = this.opts.sweepEveryMs ?? 60_000;
    if (every > 0 && !this.sweeper) {
      // A failed sweep (database briefly away) is retried at the next tick; expired rows are refused meanwhile.
      this.sweeper = setInterval(() => void this.sweep().catch(() => undefined), every);
      this.sweeper.unref();
    }
  }

  async issue(client: string = UNNAMED_CLIENT): Promise<string> {
    const nonce = newNonce();
    await this.pool.query(ISSUE, [nonce, client, this.now(), this.limits.perClient - 1, this.opts.ttlMs]);
    return nonce;
  }

  async isValid(nonce: string): Promise<boolean> {
    const r = await this.pool.query('SELECT 1 FROM auth_nonces WHERE nonce = $1 AND expires_at > $2', [nonce, this.now()]);
    return r.rowCount === 1;
  }

  async consume(nonce: string): Promise<boolean> {
    const r = await this.pool.query('DELETE FROM auth_nonces WHERE nonce = $1 AND expires_at > $2 RETURNING nonce', [nonce, this.now()]);
    return r.rowCount === 1;
  }

  async heldBy(client: string): Promise<number> {
    const r = await this.pool.query<{ n: string }>('SELECT count(*) AS n FROM auth_nonces WHERE client = $1', [client]);
    return Number(r.rows[0]!.n);
  }

  async sweep(): Promise<void> {
    await this.pool.query('DELETE FROM auth_nonces WHERE expires_at <= $1', [this.now()]);
    await this.pool.query(
      'DELETE FROM auth_nonces WHERE seq <= (SELECT seq FROM auth_nonces ORDER BY seq DESC OFFSET $1 LIMIT 1)',
      [this.limits.capacity],
    );
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    await this.pool.end();
  }
}
