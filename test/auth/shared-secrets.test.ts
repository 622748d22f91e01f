/**
 * The secrets gateways share in PostgreSQL (AUTH_STORE=postgres): processes starting together on a fresh database
 * (no table yet) all end with one signing key and one operator token, and a later start reads the same ones.
 * Oracles: the stored row read with plain SQL, and a JWT signed by one process verified by jose with another's key.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jwtVerify, SignJWT } from 'jose';
import pg from 'pg';
import { PgSharedSecrets } from '../../src/auth/pg-shared-secrets.js';
import { skipUnless } from '../services.js';
import { createPostgresTestDatabase } from '../store/dialects.js';

const skip = await skipUnless('postgres');

describe('shared secrets in PostgreSQL', { skip }, () => {
  let database: Awaited<ReturnType<typeof createPostgresTestDatabase>>;
  before(async () => {
    database = await createPostgresTestDatabase();
  });
  after(async () => {
    await database?.drop();
  });

  /** One gateway's start: creates the table and reads (or creates) both secrets. */
  async function start() {
    const secrets = new PgSharedSecrets({ connectionString: database.connectionString });
    try {
      await secrets.migrate();
      return { key: await secrets.signingKey(), operatorToken: await secrets.operatorToken() };
    } finally {
      await secrets.close();
    }
  }

  test('processes starting at once on an empty database end with the same key and token', async () => {
    const started = await Promise.all(Array.from({ length: 5 }, start));
    const rows = new pg.Pool({ connectionString: database.connectionString, max: 1 });
    let stored: Record<string, string>;
    try {
      const r = await rows.query<{ name: string; value: string }>('SELECT name, value FROM auth_shared_secrets');
      stored = Object.fromEntries(r.rows.map((x) => [x.name, x.value]));
    } finally {
      await rows.end();
    }
    assert.deepEqual(Object.keys(stored).sort(), ['jwt-signing-key', 'operator-token']);
    const storedKid = (JSON.parse(stored['jwt-signing-key']!) as { kid: string }).kid;
    for (const s of started) {
      assert.equal(s.key.kid, storedKid);
      assert.equal(s.operatorToken, stored['operator-token']);
    }
    assert.match(stored['operator-token']!, /^[A-Za-z0-9_-]{43}$/);

    // What one gateway signs, every other verifies.
    const jwt = await new SignJWT({ sub: 'u' }).setProtectedHeader({ alg: 'ES256', kid: started[0]!.key.kid }).setIssuedAt().sign(started[0]!.key.privateKey);
    for (const s of started) assert.equal((await jwtVerify(jwt, s.key.publicKey)).payload.sub, 'u');

    // A restart reads the same secrets.
    const later = await start();
    assert.equal(later.key.kid, storedKid);
    assert.equal(later.operatorToken, stored['operator-token']);
    assert.equal((await jwtVerify(jwt, later.key.publicKey)).payload.sub, 'u');
  });
});
