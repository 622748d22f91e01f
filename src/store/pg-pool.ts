/**
 * A node-postgres pool that survives its server going away. The pool listens for errors on idle clients only:
 * a client checked out between two queries (a transaction in progress, a connection a caller holds) that learns
 * the server died ("terminating connection due to unexpected postmaster exit") emits 'error' with nobody
 * listening, an uncaught exception that ends the process. Every client gets a listener for its whole life;
 * the caller's next query on it fails, it is not returned to use (the pool drops unqueryable clients), and the
 * next checkout connects anew once the server is back.
 */
import pg from 'pg';

export function resilientPgPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool(config);
  pool.on('connect', (client) => client.on('error', () => {}));
  // An idle pooled connection the server ends (restart, admin termination) errors on the pool; it is replaced.
  pool.on('error', () => {});
  return pool;
}
