/**
 * Revocations broadcast on NATS (the machine's server, test/services.ts): two nodes, each on its own connection,
 * as two gateways are. A logout on one refuses the session's token on the other without a database read.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { decodeJwt } from 'jose';
import { createAuthService } from '../../src/auth/auth-service.js';
import { NatsSessionEvents } from '../../src/auth/nats-session-events.js';
import { PgAuthStore } from '../../src/auth/pg-auth-store.js';
import type { SessionRevoked } from '../../src/auth/types.js';
import { waitFor } from '../realtime/helpers.js';
import { NATS_TEST_URL, skipUnless } from '../services.js';
import { createPostgresTestDatabase } from '../store/dialects.js';
import { CHAIN_ID, clientSignIn, randomWallet, tempDir, testClock } from './helpers.js';

const subject = () => `perpx.test_${randomBytes(6).toString('hex')}.sessions.revoked`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function twoConnections(): Promise<[NatsConnection, NatsConnection]> {
  return [await connect({ servers: NATS_TEST_URL, name: 'gateway 1' }), await connect({ servers: NATS_TEST_URL, name: 'gateway 2' })];
}

describe('session revocations on NATS', async () => {
  const skip = (await skipUnless('nats')) || (await skipUnless('postgres'));

  it('reach every other node once, and the publishing node once, at once', { skip }, async () => {
    const [nc1, nc2] = await twoConnections();
    const name = subject();
    const node1 = new NatsSessionEvents({ nc: nc1, subject: name });
    const node2 = new NatsSessionEvents({ nc: nc2, subject: name });
    try {
      await Promise.all([node1.ready(), node2.ready()]);
      const seen1: SessionRevoked[] = [];
      const seen2: SessionRevoked[] = [];
      node1.subscribe((e) => seen1.push(e));
      node2.subscribe((e) => seen2.push(e));
      const first = { sessionId: 's-1', userId: 'u-1', revokedAt: 1000 };
      const second = { sessionId: 's-2', userId: 'u-2', revokedAt: 2000 };
      node1.publish(first);
      // The publisher's own listeners have acted by the time publish returns.
      assert.deepEqual(seen1, [first]);
      await waitFor(() => seen2.length === 1);
      node2.publish(second);
      // And so have node 2's, before its revocation travels to node 1.
      assert.deepEqual(seen2, [first, second]);
      await waitFor(() => seen1.length === 2 && seen2.length === 2);
      assert.deepEqual(seen2, [first, second]);
      // Node 1 got its own revocation once (no echo from the subject), then node 2's.
      assert.deepEqual(seen1, [first, second]);
      // Garbage on the subject is ignored; a later well-formed event still arrives, so nothing was delivered for it.
      nc2.publish(name, new TextEncoder().encode('{"sessionId": 5}'));
      const third = { sessionId: 's-3', userId: 'u-3', revokedAt: 3000 };
      node2.publish(third);
      await waitFor(() => seen1.length === 3);
      assert.deepEqual(seen1, [first, second, third]);
    } finally {
      node1.close();
      node2.close();
      await Promise.all([nc1.drain(), nc2.drain()]);
    }
  });

  it('two gateways on one PostgreSQL store: a logout on one refuses the token the other had cached', { skip }, async () => {
    const database = await createPostgresTestDatabase();
    const [nc1, nc2] = await twoConnections();
    const name = subject();
    const stores = [new PgAuthStore({ connectionString: database.connectionString }), new PgAuthStore({ connectionString: database.connectionString })];
    const clock = testClock();
    const dirs = [tempDir(), tempDir()];
    const events = [new NatsSessionEvents({ nc: nc1, subject: name }), new NatsSessionEvents({ nc: nc2, subject: name })];
    try {
      await Promise.all(events.map((e) => e.ready()));
      // One signing key for both (a cluster shares it): the same data directory here.
      const gateway = (i: number) => createAuthService({ store: stores[i]!, dataDir: dirs[0]!.dir, chainId: CHAIN_ID, now: clock.now, sessionEvents: events[i] });
      const g1 = await gateway(0);
      const g2 = await gateway(1);
      const session = await g1.signIn(await clientSignIn(randomWallet(), (await g1.issueNonce()).nonce));
      // Gateway 2 knows the user from the shared store, and caches the verified token.
      assert.ok(await g2.authenticate(bearer(session.token.accessToken)));
      assert.ok(g2.authenticateNow(bearer(session.token.accessToken)));
      const ended: string[] = [];
      g2.onRevoked((e) => ended.push(e.sessionId));
      await g1.logout(session.token.refreshToken);
      await waitFor(() => ended.length === 1);
      assert.deepEqual(ended, [decodeJwt(session.token.accessToken).sid]);
      assert.equal(g2.authenticateNow(bearer(session.token.accessToken)), null);
      assert.equal(await g2.authenticate(bearer(session.token.accessToken)), null);
      // The refresh token is dead on gateway 2 too: the store is shared.
      await assert.rejects(g2.refresh(session.token.refreshToken));
    } finally {
      for (const e of events) e.close();
      await Promise.all([nc1.drain(), nc2.drain()]);
      for (const s of stores) await s.close();
      for (const d of dirs) d.cleanup();
      await database.drop();
    }
  });
});
