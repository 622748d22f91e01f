/**
 * Sessions: every sign-in starts one (a refresh-token family); its access tokens name it (`sid`); logout
 * and refresh-token reuse revoke it, which refuses its access tokens at once, not only after their TTL.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { SqliteAuthStore } from '../../src/auth/sqlite-auth-store.js';
import { createAuthService } from '../../src/auth/auth-service.js';
import { RevokedSessions } from '../../src/auth/revoked-sessions.js';
import { InProcessSessionEvents } from '../../src/auth/session-events.js';
import { AuthError, type SessionRevoked } from '../../src/auth/types.js';
import { CHAIN_ID, clientSignIn, makeService, randomWallet } from './helpers.js';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function fails401(p: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => err instanceof AuthError && err.status === 401 && err.code === code);
}

test('logout with the access token refuses that token at once (cached or not) and its refresh token; another session of the same user is unaffected', async () => {
  const { auth, cleanup } = await makeService({ accessTokenTtlSec: 300 });
  try {
    const wallet = randomWallet();
    const one = await auth.signIn(await clientSignIn(wallet, (await auth.issueNonce()).nonce));
    const two = await auth.signIn(await clientSignIn(wallet, (await auth.issueNonce()).nonce));
    const sid = decodeJwt(one.token.accessToken).sid;
    assert.equal(typeof sid, 'string');
    assert.notEqual(sid, decodeJwt(two.token.accessToken).sid, 'each sign-in is its own session');

    // Verified once, so the next request is answered from the verified-token cache.
    const ctx = await auth.authenticate(bearer(one.token.accessToken));
    assert.equal(ctx?.sessionId, sid);
    assert.deepEqual(ctx?.scopes, ['read', 'trade', 'withdraw', 'account']);
    assert.equal(auth.authenticateNow(bearer(one.token.accessToken))?.user.id, one.user.id);
    assert.equal((await auth.verifyAccessToken(one.token.accessToken))?.sessionId, sid);

    const events: SessionRevoked[] = [];
    auth.onRevoked((e) => events.push(e));
    await auth.logout(one.token.accessToken);
    assert.deepEqual(events.map((e) => [e.sessionId, e.userId]), [[sid, one.user.id]]);

    assert.equal(auth.authenticateNow(bearer(one.token.accessToken)), null);
    assert.equal(await auth.authenticate(bearer(one.token.accessToken)), null);
    assert.equal(await auth.verifyAccessToken(one.token.accessToken), null);
    await fails401(auth.refresh(one.token.refreshToken), 'invalid_refresh_token');

    // the other session lives on
    assert.equal((await auth.authenticate(bearer(two.token.accessToken)))?.user.id, one.user.id);
    const rotated = await auth.refresh(two.token.refreshToken);
    assert.ok(await auth.verifyAccessToken(rotated.token.accessToken));

    // logging out of an ended session again is no error and announces nothing new
    await auth.logout(one.token.accessToken);
    await auth.logout(one.token.refreshToken);
    assert.equal(events.length, 1);
  } finally {
    cleanup();
  }
});

test('logout with the refresh token ends the session; anything else is a 401', async () => {
  const { auth, cleanup } = await makeService();
  try {
    const s = await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce));
    const next = await auth.refresh(s.token.refreshToken);
    assert.ok(await auth.authenticate(bearer(next.token.accessToken)));
    await auth.logout(next.token.refreshToken);
    assert.equal(await auth.authenticate(bearer(next.token.accessToken)), null);
    await fails401(auth.refresh(next.token.refreshToken), 'invalid_refresh_token');

    await fails401(auth.logout('not-a-token'), 'invalid_token');
    await fails401(auth.logout(''), 'invalid_token');
    // a token of another deployment (another signing key) names no session here
    const other = await makeService();
    try {
      const foreign = await other.auth.signIn(await clientSignIn(randomWallet(), (await other.auth.issueNonce()).nonce));
      await fails401(auth.logout(foreign.token.accessToken), 'invalid_token');
    } finally {
      other.cleanup();
    }
  } finally {
    cleanup();
  }
});

test('refresh-token reuse revokes the session: announced as a revocation, and the access token of the winning refresh is refused too', async () => {
  // No grace window: the second presentation is reuse at once (test/auth/refresh-grace.test.ts: with one).
  const { auth, cleanup } = await makeService({ refreshGraceSec: 0 });
  try {
    const s = await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce));
    const events: SessionRevoked[] = [];
    auth.onRevoked((e) => events.push(e));
    const winner = await auth.refresh(s.token.refreshToken);
    assert.ok(await auth.authenticate(bearer(winner.token.accessToken)));
    await fails401(auth.refresh(s.token.refreshToken), 'refresh_token_reused');
    assert.deepEqual(events.map((e) => [e.sessionId, e.userId]), [[decodeJwt(s.token.accessToken).sid, s.user.id]]);
    assert.equal(await auth.authenticate(bearer(winner.token.accessToken)), null);
    assert.equal(await auth.authenticate(bearer(s.token.accessToken)), null);
    await fails401(auth.refresh(winner.token.refreshToken), 'invalid_refresh_token');
  } finally {
    cleanup();
  }
});

test('without a grace window, concurrent refreshes of one token: one wins at most, and the session ends (a replay cannot fork it)', async () => {
  const { auth, cleanup } = await makeService({ refreshGraceSec: 0 });
  try {
    const s = await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce));
    const results = await Promise.allSettled([auth.refresh(s.token.refreshToken), auth.refresh(s.token.refreshToken), auth.refresh(s.token.refreshToken)]);
    assert.ok(results.filter((r) => r.status === 'fulfilled').length <= 1);
    for (const r of results) {
      if (r.status === 'fulfilled') {
        await fails401(auth.refresh(r.value.token.refreshToken), 'invalid_refresh_token');
        assert.equal(await auth.verifyAccessToken(r.value.token.accessToken), null);
      }
    }

    // A logout racing a refresh in flight: whichever lands first, nothing of the session survives.
    const t = await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce));
    const [refreshed] = await Promise.allSettled([auth.refresh(t.token.refreshToken), auth.logout(t.token.accessToken)]);
    if (refreshed.status === 'fulfilled') {
      await fails401(auth.refresh(refreshed.value.token.refreshToken), 'invalid_refresh_token');
      assert.equal(await auth.verifyAccessToken(refreshed.value.token.accessToken), null);
    }
    assert.equal(await auth.verifyAccessToken(t.token.accessToken), null);
  } finally {
    cleanup();
  }
});

test('revocations outlive a restart, and reach other nodes through the session-events port', async () => {
  const { auth, db, dataDir, clock, cleanup } = await makeService({ accessTokenTtlSec: 300 });
  try {
    const s = await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce));
    await auth.logout(s.token.accessToken);
    // A service started later on the same database refuses the revoked session's still-unexpired token.
    const restarted = await createAuthService({ store: new SqliteAuthStore(db), dataDir, chainId: CHAIN_ID, now: clock.now, accessTokenTtlSec: 300 });
    assert.equal(await restarted.verifyAccessToken(s.token.accessToken), null);

    // Two gateways on one database and one event bus: a logout on one refuses a token the other had cached.
    const bus = new InProcessSessionEvents();
    const a = await createAuthService({ store: new SqliteAuthStore(db), dataDir, chainId: CHAIN_ID, now: clock.now, sessionEvents: bus });
    const b = await createAuthService({ store: new SqliteAuthStore(db), dataDir, chainId: CHAIN_ID, now: clock.now, sessionEvents: bus });
    const t = await a.signIn(await clientSignIn(randomWallet(), (await a.issueNonce()).nonce));
    assert.ok(await b.authenticate(bearer(t.token.accessToken)));
    assert.ok(b.authenticateNow(bearer(t.token.accessToken)));
    const seenByB: string[] = [];
    b.onRevoked((e) => seenByB.push(e.sessionId));
    await a.logout(t.token.refreshToken);
    assert.equal(b.authenticateNow(bearer(t.token.accessToken)), null);
    assert.deepEqual(seenByB, [decodeJwt(t.token.accessToken).sid]);
  } finally {
    cleanup();
  }
});

test('revoked sessions are remembered as long as their tokens can live, then forgotten (memory stays bounded)', () => {
  const revoked = new RevokedSessions(1000);
  revoked.add('a', 0, 0);
  revoked.add('b', 500, 500);
  assert.ok(revoked.has('a') && revoked.has('b'));
  revoked.add('c', 1200, 1200); // 'a' lapsed at 1000
  assert.deepEqual([revoked.has('a'), revoked.has('b'), revoked.has('c')], [false, true, true]);
  revoked.add('old', 0, 1200); // announced too late to matter: its tokens have expired
  assert.equal(revoked.has('old'), false);
  assert.equal(revoked.size, 2);
});
