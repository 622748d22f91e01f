/**
 * A node-postgres pool that survives its server going away. The pool listens for errors on idle clients only:
 * a client checked out between two queries (a transaction in progress, a connection a caller holds) that learns
 * the server died ("terminating connection due to unexpected postmaster exit") emits 'error' with nobody
 * listening, an uncaught exception that ends the process. Every client gets a listener for its whole life;
 * the caller's next query on it fails, it is not returned to use (the pool drops unqueryable clients), and the
 * next checkout connects anew once the server is back. `databaseUnreachable` tells such failures from others.
 */
import pg from 'pg';

export function resilientPgPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool(config);
  pool.on('connect', (client) => client.on('error', () => {}));
  // An idle pooled connection the server ends (restart, admin termination) errors on the pool; it is replaced.
  pool.on('error', () => {});
  return pool;
}

/**
 * A database server that cannot be reached or dropped the connection (PostgreSQL down or restarting): Node's
 * socket errno codes, PostgreSQL's connection-exception (08…) and shutdown (57P01–57P03) SQLSTATEs, and the two
 * failures node-postgres raises without a code.
 */
const UNREACHABLE_CODES = /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|08\d{3}|08P01|57P0[123])$/;
const UNREACHABLE_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

/** The reason `err` (or an error it wraps) says its database is unreachable, if it does. */
export function databaseUnreachable(err: unknown): string | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && UNREACHABLE_CODES.test(code)) return code;
    if (UNREACHABLE_MESSAGES.test(e.message)) return e.message;
    if (e instanceof AggregateError) return e.errors.map(databaseUnreachable).find((r) => r !== undefined);
  }
  return undefined;
}
