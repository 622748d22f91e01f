import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SignJWT, generateKeyPair, importJWK, decodeJwt, type JWK } from 'jose';
import { SqliteAuthStore } from '../../src/auth/sqlite-auth-store.js';
import { createAuthService } from '../../src/auth/auth-service.js';
import { SIGNING_KEY_FILE } from '../../src/auth/jwt-signing-key.js';
import { AuthError } from '../../src/auth/types.js';
import { CHAIN_ID, clientSignIn, makeService, randomWallet, tempDir, testClock } from './helpers.js';

function b64url(obj: unknown): string {
  return Buffer.from(JSON.stringify(obj)).toString('base64url');
}

async function refreshFails(p: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => err instanceof AuthError && err.status === 401 && err.code === code);
}

test('access token: claims, verification, expiry', async () => {
  const { auth, clock, cleanup } = await makeService({ accessTokenTtlSec: 300, issuer: 'test-issuer' });
  try {
    const { user, token } = await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce));
    const claims = decodeJwt(token.accessToken);
    assert.equal(claims.sub, user.id);
    assert.equal(claims.exid, user.exchangeId);
    assert.equal(claims.typ, 'access');
    assert.equal(claims.iss, 'test-issuer');
    assert.equal((claims.exp as number) - (claims.iat as number), 300);

    const v = await auth.verifyAccessToken(token.accessToken);
    assert.equal(v?.user.id, user.id);
    assert.equal(v?.expiresAt, (claims.exp as number) * 1000);

    const ctx = await auth.authenticate({ authorization: `Bearer ${token.accessToken}` });
    assert.equal(ctx?.via, 'access-token');
    assert.equal(ctx?.user.id, user.id);
    assert.equal(await auth.authenticate({}), null);
    assert.equal(await auth.authenticate({ authorization: 'Bearer garbage' }), null);
    assert.equal(await auth.authenticate({ authorization: token.accessToken }), null); // no scheme

    clock.advance(299_000);
    assert.ok(await auth.verifyAccessToken(token.accessToken));
    clock.advance(2_000);
    assert.equal(await auth.verifyAccessToken(token.accessToken), null);
    assert.equal(await auth.authenticate({ authorization: `Bearer ${token.accessToken}` }), null);
  } finally {
    cleanup();
  }
});

test('tampered, foreign-key, alg:none, wrong typ and wrong issuer tokens are refused', async () => {
  const { auth, dataDir, cleanup } = await makeService();
  try {
    const { user, token } = await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce));
    const [h, p, s] = token.accessToken.split('.');
    const payload = decodeJwt(token.accessToken);

    // payload changed, signature kept
    const tampered = [h, b64url({ ...payload, exid: 999 }), s].join('.');
    assert.equal(await auth.verifyAccessToken(tampered), null);
    // one signature character flipped
    const flipped = [h, p, (s[0] === 'A' ? 'B' : 'A') + s.slice(1)].join('.');
    assert.equal(await auth.verifyAccessToken(flipped), null);

    // alg: none
    const none = [b64url({ alg: 'none', typ: 'JWT' }), b64url(payload), ''].join('.');
    assert.equal(await auth.verifyAccessToken(none), null);

    // same claims, another ES256 key
    const other = await generateKeyPair('ES256');
    const foreign = await new SignJWT({ ...payload }).setProtectedHeader({ alg: 'ES256' }).sign(other.privateKey);
    assert.equal(await auth.verifyAccessToken(foreign), null);

    // HS256 with the public key as the secret (algorithm confusion)
    const jwk = JSON.parse(readFileSync(join(dataDir, SIGNING_KEY_FILE), 'utf8')) as JWK;
    const hs = await new SignJWT({ ...payload })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(JSON.stringify({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y })));
    assert.equal(await auth.verifyAccessToken(hs), null);

    // our own key, but not an access token / not our issuer
    const ours = await importJWK(jwk, 'ES256');
    const sign = (claims: Record<string, unknown>) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'ES256' }).setSubject(user.id).setIssuedAt().setExpirationTime('5m');
    const sid = payload.sid;
    assert.equal(await auth.verifyAccessToken(await sign({ exid: user.exchangeId, sid, typ: 'refresh' }).setIssuer('perpx').sign(ours)), null);
    assert.equal(await auth.verifyAccessToken(await sign({ exid: user.exchangeId, sid, typ: 'access' }).setIssuer('someone').sign(ours)), null);
    // no session id: a token that could never be revoked is not accepted
    assert.equal(await auth.verifyAccessToken(await sign({ exid: user.exchangeId, typ: 'access' }).setIssuer('perpx').sign(ours)), null);
    // control: a correctly minted token with that key passes
    assert.ok(await auth.verifyAccessToken(await sign({ exid: user.exchangeId, sid, typ: 'access' }).setIssuer('perpx').sign(ours)));
  } finally {
    cleanup();
  }
});

test('refresh rotates; reusing a rotated token revokes the whole family', async () => {
  const { auth, cleanup } = await makeService();
  try {
    const first = await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce));
    const second = await auth.refresh(first.token.refreshToken);
    assert.equal(second.user.id, first.user.id);
    assert.notEqual(second.token.refreshToken, first.token.refreshToken);
    assert.ok(await auth.verifyAccessToken(second.token.accessToken));

    const third = await auth.refresh(second.token.refreshToken);

    // `first` was rotated already: replay → family revoked
    await refreshFails(auth.refresh(first.token.refreshToken), 'refresh_token_reused');
    // ... so even the newest token of the family is dead now
    await refreshFails(auth.refresh(third.token.refreshToken), 'invalid_refresh_token');

    await refreshFails(auth.refresh('not-a-token'), 'invalid_refresh_token');
    await refreshFails(auth.refresh(''), 'invalid_refresh_token');

    // another session (family) of the same user is unaffected
    const other = await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce));
    await auth.refresh(other.token.refreshToken);
  } finally {
    cleanup();
  }
});

test('refresh tokens expire; only their hashes are stored', async () => {
  const { auth, clock, db, cleanup } = await makeService({ refreshTokenTtlSec: 3600 });
  try {
    const { token } = await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce));
    const rows = db.prepare('SELECT token_hash FROM auth_refresh_tokens').all() as Array<{ token_hash: string }>;
    assert.ok(rows.length > 0);
    assert.ok(rows.every((r) => r.token_hash !== token.refreshToken && /^[0-9a-f]{64}$/.test(r.token_hash)));
    clock.advance(3_601_000);
    await refreshFails(auth.refresh(token.refreshToken), 'invalid_refresh_token');
  } finally {
    cleanup();
  }
});

test('the signing key is created once (mode 0600) and reused by a second instance on the same data dir', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const db = new Database(':memory:');
    const clock = testClock();
    const a = await createAuthService({ store: new SqliteAuthStore(db), dataDir: dir, chainId: CHAIN_ID, now: clock.now });
    const { token, user } = await a.signIn(await clientSignIn(randomWallet(), (await a.issueNonce()).nonce));
    const file = join(dir, SIGNING_KEY_FILE);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const before = readFileSync(file, 'utf8');

    const b = await createAuthService({ store: new SqliteAuthStore(db), dataDir: dir, chainId: CHAIN_ID, now: clock.now });
    assert.equal(readFileSync(file, 'utf8'), before);
    assert.equal((await b.verifyAccessToken(token.accessToken))?.user.id, user.id);
    // and the refresh token issued by `a` works through `b` (shared database)
    await b.refresh(token.refreshToken);

    // a fresh data dir means a fresh key: `a`'s tokens do not verify there
    const other = tempDir();
    try {
      const c = await createAuthService({ store: new SqliteAuthStore(db), dataDir: other.dir, chainId: CHAIN_ID, now: clock.now });
      assert.equal(await c.verifyAccessToken(token.accessToken), null);
    } finally {
      other.cleanup();
    }
  } finally {
    cleanup();
  }
});

test('verified tokens and users are cached, but a role change shows at once and a cached token still expires', async () => {
  const { auth, clock, db, cleanup } = await makeService({ accessTokenTtlSec: 60 });
  try {
    const { user, token } = await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce));
    const bearer = { authorization: `Bearer ${token.accessToken}` };
    assert.equal((await auth.authenticate(bearer))?.user.role, 'user');
    // Served from the caches now: a role change through the service must still be visible immediately.
    await auth.setRole(user.exchangeId, 'admin');
    assert.equal((await auth.authenticate(bearer))?.user.role, 'admin');
    // A user edited behind the service's back (another process) shows within the user TTL.
    db.prepare("UPDATE auth_users SET role = 'user' WHERE id = ?").run(user.id);
    clock.advance(10_001);
    assert.equal((await auth.authenticate(bearer))?.user.role, 'user');
    // The cache never outlives the token.
    clock.advance(50_000);
    assert.equal(await auth.authenticate(bearer), null);
    // A token that differs from the cached one in one character is verified (and refused), not looked up.
    const [h, p, s] = token.accessToken.split('.');
    assert.equal(await auth.verifyAccessToken([h, p, s.slice(0, -1) + (s.endsWith('A') ? 'B' : 'A')].join('.')), null);
  } finally {
    cleanup();
  }
});
