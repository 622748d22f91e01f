import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { sha256Hex } from '../../src/auth/secrets.js';
import { AuthError } from '../../src/auth/types.js';
import { clientSignIn, makeService, randomWallet } from './helpers.js';

test('api key: create → authenticate → update → regenerate → delete → fails', async () => {
  const { auth, db, cleanup } = await makeService();
  try {
    const { user } = await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce));
    const { apiKey, key } = await auth.createApiKey(user.id, { name: 'bot' });
    assert.equal(apiKey.name, 'bot');
    assert.ok(key.startsWith(apiKey.prefix));
    assert.equal(apiKey.deletedAt, null);
    // only the hash is stored
    const stored = db.prepare('SELECT key_hash FROM auth_api_keys').all() as Array<{ key_hash: string }>;
    assert.ok(stored.every((r) => r.key_hash !== key && /^[0-9a-f]{64}$/.test(r.key_hash)));

    const ctx = await auth.authenticate({ 'x-api-key': key });
    assert.equal(ctx?.via, 'api-key');
    assert.equal(ctx?.user.id, user.id);
    assert.equal((await auth.authenticate({ 'x-api-key': [key] }))?.user.id, user.id);
    assert.equal(await auth.authenticate({ 'x-api-key': key + 'x' }), null);

    await auth.updateApiKey(user.id, apiKey.id, { name: 'renamed' });
    assert.equal((await auth.listApiKeys(user.id, { withDeleted: false, withExpired: false, limit: 10, offset: 0 })).list[0].name, 'renamed');

    const regenerated = await auth.regenerateApiKey(user.id, apiKey.id);
    assert.notEqual(regenerated.key, key);
    assert.equal(regenerated.apiKey.id, apiKey.id);
    assert.equal(await auth.authenticate({ 'x-api-key': key }), null);
    assert.equal((await auth.authenticate({ 'x-api-key': regenerated.key }))?.user.id, user.id);

    await auth.deleteApiKey(user.id, apiKey.id);
    assert.equal(await auth.authenticate({ 'x-api-key': regenerated.key }), null);
    assert.equal((await auth.listApiKeys(user.id, { withDeleted: false, withExpired: false, limit: 10, offset: 0 })).count, 0);
    const withDeleted = await auth.listApiKeys(user.id, { withDeleted: true, withExpired: false, limit: 10, offset: 0 });
    assert.equal(withDeleted.count, 1);
    assert.ok(withDeleted.list[0].deletedAt);

    await assert.rejects(auth.deleteApiKey(user.id, apiKey.id), (e: unknown) => e instanceof AuthError && e.status === 404);
    await assert.rejects(auth.regenerateApiKey(user.id, apiKey.id), (e: unknown) => e instanceof AuthError && e.status === 404);
  } finally {
    cleanup();
  }
});

test('api key: expiry, ownership, validation, paging', async () => {
  const { auth, clock, cleanup } = await makeService();
  try {
    const alice = (await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce))).user;
    const bob = (await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce))).user;

    const soon = new Date(clock.now() + 60_000).toISOString();
    const { apiKey, key } = await auth.createApiKey(alice.id, { expiresAt: soon });
    assert.equal(apiKey.name, 'API key');
    assert.equal(apiKey.expiresAt, Date.parse(soon));
    assert.ok(await auth.authenticate({ 'x-api-key': key }));
    clock.advance(61_000);
    assert.equal(await auth.authenticate({ 'x-api-key': key }), null);
    assert.equal((await auth.listApiKeys(alice.id, { withDeleted: false, withExpired: false, limit: 10, offset: 0 })).count, 0);
    assert.equal((await auth.listApiKeys(alice.id, { withDeleted: false, withExpired: true, limit: 10, offset: 0 })).count, 1);

    // extending the expiry revives it
    await auth.updateApiKey(alice.id, apiKey.id, { expiresAt: null });
    assert.ok(await auth.authenticate({ 'x-api-key': key }));

    // bob cannot see or touch alice's key
    assert.equal((await auth.listApiKeys(bob.id, { withDeleted: true, withExpired: true, limit: 10, offset: 0 })).count, 0);
    await assert.rejects(auth.deleteApiKey(bob.id, apiKey.id), (e: unknown) => e instanceof AuthError && e.status === 404);

    await assert.rejects(auth.createApiKey(alice.id, { expiresAt: 'tomorrow' }), (e: unknown) => e instanceof AuthError && e.status === 400);
    await assert.rejects(
      auth.createApiKey(alice.id, { expiresAt: new Date(clock.now() - 1000).toISOString() }),
      (e: unknown) => e instanceof AuthError && e.status === 400,
    );
    await assert.rejects(auth.createApiKey(alice.id, { name: '' }), (e: unknown) => e instanceof AuthError && e.status === 400);

    for (let i = 0; i < 4; i++) {
      clock.advance(1);
      await auth.createApiKey(alice.id, { name: `k${i}` });
    }
    const page = await auth.listApiKeys(alice.id, { withDeleted: false, withExpired: false, limit: 2, offset: 1 });
    assert.equal(page.count, 5);
    assert.deepEqual(page.list.map((k) => k.name), ['k2', 'k1']);
  } finally {
    cleanup();
  }
});

test('api key scopes: default read+trade, chosen at creation and validated, carried by the request context; a key never yields a wider one', async () => {
  const { auth, cleanup } = await makeService();
  try {
    const { user, token } = await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce));
    const jwt = await auth.authenticate({ authorization: `Bearer ${token.accessToken}` });
    assert.deepEqual(jwt?.scopes, ['read', 'trade', 'withdraw', 'account']);

    const plain = await auth.createApiKey(user.id, { name: 'bot' });
    assert.deepEqual(plain.apiKey.scopes, ['read', 'trade']);
    assert.deepEqual((await auth.authenticate({ 'x-api-key': plain.key }))?.scopes, ['read', 'trade']);
    // answered from memory the second time, with the same scopes
    assert.deepEqual(auth.authenticateNow({ 'x-api-key': plain.key })?.scopes, ['read', 'trade']);

    const wide = await auth.createApiKey(user.id, { scopes: ['withdraw', 'read', 'withdraw', 'account'] });
    assert.deepEqual(wide.apiKey.scopes, ['read', 'withdraw', 'account']);
    assert.deepEqual((await auth.authenticate({ 'x-api-key': wide.key }))?.scopes, ['read', 'withdraw', 'account']);
    const listed = await auth.listApiKeys(user.id, { withDeleted: false, withExpired: false, limit: 10, offset: 0 });
    assert.deepEqual(listed.list.map((k) => k.scopes).sort(), [['read', 'trade'], ['read', 'withdraw', 'account']].sort());

    const invalid = (e: unknown) => e instanceof AuthError && e.status === 400 && e.code === 'invalid_scopes';
    await assert.rejects(auth.createApiKey(user.id, { scopes: ['admin'] }), invalid);
    await assert.rejects(auth.createApiKey(user.id, { scopes: [] }), invalid);
    await assert.rejects(auth.createApiKey(user.id, { scopes: 'read' as unknown as string[] }), invalid);
    await assert.rejects(auth.updateApiKey(user.id, plain.apiKey.id, { scopes: ['read'] }), invalid);

    // A read+trade+account key may manage keys, but not regenerate (get the secret of) or re-date a wider one.
    // (A new key's requested scopes are checked by the route before the body is read: src/api/scopes.ts.)
    const manager = await auth.createApiKey(user.id, { scopes: ['read', 'trade', 'account'] });
    const caller = (await auth.authenticate({ 'x-api-key': manager.key }))?.scopes;
    const insufficient = (e: unknown) => e instanceof AuthError && e.status === 403 && e.code === 'INSUFFICIENT_SCOPE';
    await assert.rejects(auth.regenerateApiKey(user.id, wide.apiKey.id, caller), insufficient);
    await assert.rejects(auth.updateApiKey(user.id, wide.apiKey.id, { expiresAt: null }, caller), insufficient);
    // the refused regeneration left the wide key working; a key within the caller's scopes may be regenerated
    assert.ok(await auth.authenticate({ 'x-api-key': wide.key }));
    assert.deepEqual((await auth.regenerateApiKey(user.id, plain.apiKey.id, caller)).apiKey.scopes, ['read', 'trade']);
    await auth.updateApiKey(user.id, plain.apiKey.id, { name: 'renamed' }, caller);
  } finally {
    cleanup();
  }
});

test('keys stored before scopes existed keep working with read+trade after the upgrade', async () => {
  const db = new Database(':memory:');
  // auth_api_keys as the previous version created it
  db.exec(`CREATE TABLE auth_api_keys (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, name TEXT NOT NULL, prefix TEXT NOT NULL,
    key_hash TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, expires_at INTEGER, deleted_at INTEGER)`);
  const key = 'perpx_legacy-key-0123456789';
  db.prepare('INSERT INTO auth_api_keys VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL)').run(randomUUID(), 'owner', 'old', key.slice(0, 12), sha256Hex(key), 1, 1);
  const { auth, cleanup } = await makeService({ db });
  try {
    const { user } = await auth.signIn(await clientSignIn(randomWallet(), (await auth.issueNonce()).nonce));
    db.prepare("UPDATE auth_api_keys SET user_id = ? WHERE user_id = 'owner'").run(user.id);
    assert.deepEqual((await auth.authenticate({ 'x-api-key': key }))?.scopes, ['read', 'trade']);
    assert.deepEqual((await auth.listApiKeys(user.id, { withDeleted: false, withExpired: false, limit: 10, offset: 0 })).list[0].scopes, ['read', 'trade']);
  } finally {
    cleanup();
  }
});
