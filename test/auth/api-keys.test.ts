import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AuthError } from '../../src/auth/types.js';
import { clientSignIn, makeService, randomWallet } from './helpers.js';

test('api key: create → authenticate → update → regenerate → delete → fails', async () => {
  const { auth, db, cleanup } = await makeService();
  try {
    const { user } = await auth.signIn(await clientSignIn(randomWallet(), auth.issueNonce().nonce));
    const { apiKey, key } = auth.createApiKey(user.id, { name: 'bot' });
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

    auth.updateApiKey(user.id, apiKey.id, { name: 'renamed' });
    assert.equal(auth.listApiKeys(user.id, { withDeleted: false, withExpired: false, limit: 10, offset: 0 }).list[0].name, 'renamed');

    const regenerated = auth.regenerateApiKey(user.id, apiKey.id);
    assert.notEqual(regenerated.key, key);
    assert.equal(regenerated.apiKey.id, apiKey.id);
    assert.equal(await auth.authenticate({ 'x-api-key': key }), null);
    assert.equal((await auth.authenticate({ 'x-api-key': regenerated.key }))?.user.id, user.id);

    auth.deleteApiKey(user.id, apiKey.id);
    assert.equal(await auth.authenticate({ 'x-api-key': regenerated.key }), null);
    assert.equal(auth.listApiKeys(user.id, { withDeleted: false, withExpired: false, limit: 10, offset: 0 }).count, 0);
    const withDeleted = auth.listApiKeys(user.id, { withDeleted: true, withExpired: false, limit: 10, offset: 0 });
    assert.equal(withDeleted.count, 1);
    assert.ok(withDeleted.list[0].deletedAt);

    assert.throws(() => auth.deleteApiKey(user.id, apiKey.id), (e: unknown) => e instanceof AuthError && e.status === 404);
    assert.throws(() => auth.regenerateApiKey(user.id, apiKey.id), (e: unknown) => e instanceof AuthError && e.status === 404);
  } finally {
    cleanup();
  }
});

test('api key: expiry, ownership, validation, paging', async () => {
  const { auth, clock, cleanup } = await makeService();
  try {
    const alice = (await auth.signIn(await clientSignIn(randomWallet(), auth.issueNonce().nonce))).user;
    const bob = (await auth.signIn(await clientSignIn(randomWallet(), auth.issueNonce().nonce))).user;

    const soon = new Date(clock.now() + 60_000).toISOString();
    const { apiKey, key } = auth.createApiKey(alice.id, { expiresAt: soon });
    assert.equal(apiKey.name, 'API key');
    assert.equal(apiKey.expiresAt, Date.parse(soon));
    assert.ok(await auth.authenticate({ 'x-api-key': key }));
    clock.advance(61_000);
    assert.equal(await auth.authenticate({ 'x-api-key': key }), null);
    assert.equal(auth.listApiKeys(alice.id, { withDeleted: false, withExpired: false, limit: 10, offset: 0 }).count, 0);
    assert.equal(auth.listApiKeys(alice.id, { withDeleted: false, withExpired: true, limit: 10, offset: 0 }).count, 1);

    // extending the expiry revives it
    auth.updateApiKey(alice.id, apiKey.id, { expiresAt: null });
    assert.ok(await auth.authenticate({ 'x-api-key': key }));

    // bob cannot see or touch alice's key
    assert.equal(auth.listApiKeys(bob.id, { withDeleted: true, withExpired: true, limit: 10, offset: 0 }).count, 0);
    assert.throws(() => auth.deleteApiKey(bob.id, apiKey.id), (e: unknown) => e instanceof AuthError && e.status === 404);

    assert.throws(() => auth.createApiKey(alice.id, { expiresAt: 'tomorrow' }), (e: unknown) => e instanceof AuthError && e.status === 400);
    assert.throws(
      () => auth.createApiKey(alice.id, { expiresAt: new Date(clock.now() - 1000).toISOString() }),
      (e: unknown) => e instanceof AuthError && e.status === 400,
    );
    assert.throws(() => auth.createApiKey(alice.id, { name: '' }), (e: unknown) => e instanceof AuthError && e.status === 400);

    for (let i = 0; i < 4; i++) {
      clock.advance(1);
      auth.createApiKey(alice.id, { name: `k${i}` });
    }
    const page = auth.listApiKeys(alice.id, { withDeleted: false, withExpired: false, limit: 2, offset: 1 });
    assert.equal(page.count, 5);
    assert.deepEqual(page.list.map((k) => k.name), ['k2', 'k1']);
  } finally {
    cleanup();
  }
});
