/**
 * PostgreSQL transactions on a pool, and schema migrations under an advisory lock: processes starting together
 * (gateways of a cluster) each run their CREATE … IF NOT EXISTS, which alone can race, so each takes the lock first.
 */
import type pg from 'pg';

/** Runs `fn` on one client inside BEGIN … COMMIT; any error rolls back and is thrown again. */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const result = await fn(c);
    await c.query('COMMIT');
    return result;
  } catch (err) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    c.release();
  }
}

/** Runs `sql` (the schema) in one transaction holding the advisory lock `lockId` (one per schema). */
export async function migrateUnderLock(pool: pg.Pool, lockId: number, sql: string): Promise<void> {
  await inTransaction(pool, async (c) => {
    await c.query('SELECT pg_advisory_xact_lock($1)', [lockId]);
    await c.query(sql);
  });
}
