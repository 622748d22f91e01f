/**
 * resilientPgPool against the machine's PostgreSQL: a checked-out client whose backend is terminated between two
 * queries (what every open connection sees when PostgreSQL dies) does not crash the process, and the pool serves
 * the next checkout; databaseUnreachable tells such failures from ordinary ones.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { databaseUnreachable, resilientPgPool } from '../../src/store/pg-pool.js';
import { PG_ADMIN_URL, skipUnless } from '../services.js';

const skip = await skipUnless('postgres');

test('a checked-out client whose backend is terminated is dropped, not an uncaught error', { skip }, async () => {
  const pool = resilientPgPool({ connectionString: PG_ADMIN_URL, max: 2 });
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    const held = await pool.connect();
    const pid = (await held.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const errored = new Promise<Error>((resolve) => held.once('error', resolve));
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    const err = await errored; // with no listener of its own this would be an uncaught exception
    assert.equal(databaseUnreachable(err), '57P01');
    await assert.rejects(held.query('SELECT 1'), (e: Error) => databaseUnreachable(e) !== undefined);
    held.release(err);
    const again = await pool.query<{ one: number }>('SELECT 1 AS one');
    assert.equal(again.rows[0].one, 1, 'the pool connects anew');
  } finally {
    await admin.end();
    await pool.end();
  }
});

test('databaseUnreachable: connection failures yes, query errors no', () => {
  const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });
  assert.equal(databaseUnreachable(withCode('ECONNREFUSED')), 'ECONNREFUSED');
  assert.equal(databaseUnreachable(withCode('57P03')), '57P03');
  assert.equal(databaseUnreachable(withCode('08006')), '08006');
  assert.equal(databaseUnreachable(new Error('wrapper', { cause: withCode('ECONNRESET') })), 'ECONNRESET');
  assert.equal(databaseUnreachable(new Error('Connection terminated unexpectedly')), 'Connection terminated unexpectedly');
  assert.equal(databaseUnreachable(withCode('23505', 'duplicate key')), undefined);
  assert.equal(databaseUnreachable(withCode('ENOSPC')), undefined);
  assert.equal(databaseUnreachable('ECONNREFUSED'), undefined);
});
