/**
 * Concurrent refresh: within the grace window (REFRESH_GRACE_SEC) the same parent refresh token yields the same
 * child and a fresh access token each time; past it, after logout, or once the child moved on, presenting the
 * parent is reuse and revokes the family. Whatever happens, at most one refresh token of a family is live.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import type Database from 'better-sqlite3';
import { AuthError, type SessionRevoked } from '../../src/auth/types.js';
import { clientSignIn, makeService, randomWallet } from './helpers.js';

const GRACE_SEC = 10;

async function fails401(p: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => err instanceof AuthError && err.status === 401 && err.code === code);
}

/** Refresh tokens of the session neither rotated nor revoked, read straight from the table. */
function liveTokens(db: Database.Database, accessToken: string): number {
  const sid = decodeJwt(accessToken).sid as string;
  const row = db
    .prepare('SELECT COUNT(*) AS n FROM auth_refresh_tokens WHERE family_id = ? AND rotated_at IS NULL AND revoked_at IS NULL')
    .get(sid) as { n: number };
  return row.n;
}

test('six concurrent refreshes of one parent: all succeed with the same child and distinct fresh access tokens; one token stays live', async () => {
  const { auth, db, cleanup } = await makeService({ refreshGraceSec: GRACE_SEC });
  try {
    const s = await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce));
    const results = await Promise.all(Array.from({ length: 6 }, () => auth.refresh(s.token.refreshToken)));
    const children = new Set(results.map((r) => r.token.refreshToken));
    assert.equal(children.size, 1, 'one child for every presentation of the parent');
    assert.ok(!children.has(s.token.refreshToken));
    const accessTokens = new Set(results.map((r) => r.token.accessToken));
    assert.equal(accessTokens.size, 6, 'each answer carries its own access token');
    for (const r of results) {
      const verified = await auth.verifyAccessToken(r.token.accessToken);
      assert.equal(verified?.user.id, s.user.id);
      assert.equal(verified?.sessionId, decodeJwt(s.token.accessToken).sid);
    }
    assert.equal(liveTokens(db, s.token.accessToken), 1);

    // The child is stored as its hash only, like every refresh token.
    const [child] = children;
    const dump = JSON.stringify(db.prepare('SELECT * FROM auth_refresh_tokens').all());
    assert.ok(!dump.includes(child));

    // The child rotates normally, and the session goes on.
    const next = await auth.refresh(child);
    assert.ok(await auth.verifyAccessToken(next.token.accessToken));
    assert.equal(liveTokens(db, s.token.accessToken), 1);
  } finally {
    cleanup();
  }
});

test('the grace window is exact: the same child until it ends, then the parent is reuse and revokes the family', async () => {
  const { auth, clock, db, cleanup } = await makeService({ refreshGraceSec: GRACE_SEC });
  try {
    const s = await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce));
    const revoked: SessionRevoked[] = [];
    auth.onRevoked((e) => revoked.push(e));
    const first = await auth.refresh(s.token.refreshToken);
    clock.advance(GRACE_SEC * 1000 - 1);
    const late = await auth.refresh(s.token.refreshToken);
    assert.equal(late.token.refreshToken, first.token.refreshToken);
    assert.deepEqual(revoked, []);

    clock.advance(1);
    await fails401(auth.refresh(s.token.refreshToken), 'refresh_token_reused');
    assert.deepEqual((revoked as SessionRevoked[]).map((e) => e.sessionId), [decodeJwt(s.token.accessToken).sid]);
    await fails401(auth.refresh(first.token.refreshToken), 'invalid_refresh_token');
    assert.equal(await auth.verifyAccessToken(first.token.accessToken), null);
    assert.equal(await auth.verifyAccessToken(late.token.accessToken), null);
    assert.equal(liveTokens(db, s.token.accessToken), 0);
  } finally {
    cleanup();
  }
});

test('after logout the parent yields nothing within the grace, and the family stays revoked', async () => {
  const { auth, db, cleanup } = await makeService({ refreshGraceSec: GRACE_SEC });
  try {
    const s = await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce));
    const child = await auth.refresh(s.token.refreshToken);
    await auth.logout(child.token.accessToken);
    await fails401(auth.refresh(s.token.refreshToken), 'invalid_refresh_token');
    await fails401(auth.refresh(child.token.refreshToken), 'invalid_refresh_token');
    assert.equal(liveTokens(db, s.token.accessToken), 0);

    // A logout racing the concurrent refreshes: whatever lands first, nothing of the session survives.
    const t = await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce));
    const settled = await Promise.allSettled([
      auth.refresh(t.token.refreshToken),
      auth.logout(t.token.accessToken),
      auth.refresh(t.token.refreshToken),
    ]);
    for (const r of settled) {
      if (r.status !== 'fulfilled' || r.value === undefined) continue;
      await fails401(auth.refresh(r.value.token.refreshToken), 'invalid_refresh_token');
      assert.equal(await auth.verifyAccessToken(r.value.token.accessToken), null);
    }
    assert.equal(liveTokens(db, t.token.accessToken), 0);
  } finally {
    cleanup();
  }
});

test('once the child was rotated itself, its parent is reuse even within the grace (no second live branch)', async () => {
  const { auth, db, cleanup } = await makeService({ refreshGraceSec: GRACE_SEC });
  try {
    const s = await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce));
    const child = await auth.refresh(s.token.refreshToken);
    await auth.refresh(child.token.refreshToken);
    await fails401(auth.refresh(s.token.refreshToken), 'refresh_token_reused');
    assert.equal(liveTokens(db, s.token.accessToken), 0);
  } finally {
    cleanup();
  }
});

test('access tokens carry the session expiry (sexp): the live refresh token\'s, moving with each rotation', async () => {
  const { auth, clock, cleanup } = await makeService({ refreshGraceSec: GRACE_SEC, refreshTokenTtlSec: 3600, accessTokenTtlSec: 5 });
  try {
    const signInAt = clock.now();
    const s = await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce));
    assert.equal(decodeJwt(s.token.accessToken).sexp, Math.floor((signInAt + 3_600_000) / 1000));
    const verified = await auth.verifyAccessToken(s.token.accessToken);
    assert.equal(verified?.sessionExpiresAt, Math.floor((signInAt + 3_600_000) / 1000) * 1000);

    clock.advance(60_000);
    const r = await auth.refresh(s.token.refreshToken);
    assert.equal(decodeJwt(r.token.accessToken).sexp, Math.floor((signInAt + 60_000 + 3_600_000) / 1000));
  } finally {
    cleanup();
  }
});
