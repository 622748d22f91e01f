/**
 * The AuthStore contract, run against both adapters: SQLite (a fresh in-memory database) and PostgreSQL (a fresh
 * database per case, dropped after; test/services.ts: skipped outside CI when PostgreSQL does not answer, failed
 * under CI). Expected values come from the inputs the cases write, never from the store.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import Database from 'better-sqlite3';
import { Wallet } from 'ethers';
import { PgAuthStore } from '../../src/auth/pg-auth-store.js';
import type { ApiKeyRow, AuthStore, NewUser, RefreshTokenRow } from '../../src/auth/ports.js';
import { SqliteAuthStore } from '../../src/auth/sqlite-auth-store.js';
import { describeOnDialects } from '../store/dialects.js';

interface OpenedStore {
  store: AuthStore;
  /** A second store on the same database (another gateway, or a restart). */
  another(): Promise<AuthStore>;
  dispose(): Promise<void>;
}

async function openSqlite(): Promise<OpenedStore> {
  const db = new Database(':memory:');
  const store = new SqliteAuthStore(db);
  await store.migrate();
  return {
    store,
    another: async () => {
      const s = new SqliteAuthStore(db);
      await s.migrate();
      return s;
    },
    dispose: async () => void db.close(),
  };
}

async function openPostgres(connectionString: string): Promise<OpenedStore> {
  const opened: PgAuthStore[] = [];
  const open = async () => {
    const s = new PgAuthStore({ connectionString, poolSize: 4 });
    opened.push(s);
    await s.migrate();
    return s;
  };
  const store = await open();
  return {
    store,
    another: open,
    async dispose() {
      for (const s of opened) await s.close();
    },
  };
}

let counter = 0;
function newUser(createdAt = 1_700_000_000_000): NewUser {
  const wallet = Wallet.createRandom().address;
  counter++;
  return { id: `user-${counter}-${wallet}`, authId: `auth-${counter}-${wallet}`, wallet, role: 'user', smartAccountAddress: Wallet.createRandom().address, createdAt };
}

function refreshRow(over: Partial<RefreshTokenRow> = {}): RefreshTokenRow {
  counter++;
  return { tokenHash: `hash-${counter}`, familyId: 'family-a', userId: 'user-a', createdAt: 1000, expiresAt: 99_000, rotatedAt: null, revokedAt: null, ...over };
}

function apiKey(over: Partial<ApiKeyRow> = {}): ApiKeyRow {
  counter++;
  return {
    id: `key-${counter}`, userId: 'user-a', name: `key ${counter}`, prefix: `pk${counter}`, keyHash: `key-hash-${counter}`,
    createdAt: 1000 + counter, updatedAt: 1000 + counter, expiresAt: null, deletedAt: null, scopes: ['read', 'trade'], ...over,
  };
}

await describeOnDialects('auth store contract', { sqlite: openSqlite, postgres: openPostgres }, (withStore) => {
  it('migrates again without harm, and a second store on the same database sees the same rows', withStore(async ({ store, another }) => {
    const u = await store.findOrCreateUser(newUser());
    await store.migrate();
    const second = await another();
    assert.deepEqual(await second.findUserById(u.id), u);
  }));

  it('creates each wallet once, numbering users 1, 2, 3 and finding them by any key', withStore(async ({ store }) => {
    const inputs = [newUser(111), newUser(222), newUser(333)];
    const users = [];
    for (const input of inputs) users.push(await store.findOrCreateUser(input));
    assert.deepEqual(users.map((u) => u.exchangeId), [1, 2, 3]);
    const [first] = users;
    assert.equal(first!.wallet, inputs[0]!.wallet);
    assert.equal(first!.createdAt, 111);
    assert.equal(first!.updatedAt, 111);
    assert.equal(first!.role, 'user');
    assert.deepEqual(first!.favoriteInstruments, []);
    assert.deepEqual(first!.social, []);
    assert.equal(first!.locale, 'en');
    // The same wallet in other letter case is the same user; its second creation changes nothing.
    const again = await store.findOrCreateUser({ ...newUser(999), wallet: inputs[0]!.wallet.toLowerCase() });
    assert.deepEqual(again, first);
    assert.deepEqual(await store.findUserByWallet(inputs[1]!.wallet.toUpperCase().replace('0X', '0x')), users[1]);
    assert.deepEqual(await store.findUserById(inputs[2]!.id), users[2]);
    assert.deepEqual(await store.findUserByExchangeId(2), users[1]);
    assert.deepEqual(await store.findUserBySmartAccount!(inputs[2]!.smartAccountAddress.toLowerCase()), users[2]);
    assert.equal(await store.findUserByExchangeId(4), undefined);
    assert.equal(await store.findUserById('nobody'), undefined);
    assert.equal(await store.findUserByWallet(Wallet.createRandom().address), undefined);
  }));

  it('two gateways signing in one new wallet at once get the same single user', withStore(async ({ store, another }) => {
    const other = await another();
    const input = newUser();
    const [a, b] = await Promise.all([store.findOrCreateUser(input), other.findOrCreateUser({ ...newUser(), wallet: input.wallet })]);
    assert.deepEqual(a, b);
    const next = await store.findOrCreateUser(newUser());
    assert.equal(next.exchangeId, a.exchangeId + 1);
  }));

  it('sets a role by exchange id, and says when there was no such user', withStore(async ({ store }) => {
    const u = await store.findOrCreateUser(newUser(100));
    assert.equal(await store.setRole(u.exchangeId, 'admin', 500), true);
    const after = await store.findUserById(u.id);
    assert.equal(after!.role, 'admin');
    assert.equal(after!.updatedAt, 500);
    assert.equal(await store.setRole(u.exchangeId + 10, 'admin', 600), false);
  }));

  it('rotates a refresh token once: the second rotation of the same token changes nothing', withStore(async ({ store }) => {
    const first = refreshRow();
    await store.insertRefreshToken(first);
    assert.deepEqual(await store.findRefreshToken(first.tokenHash), first);
    const next = refreshRow({ createdAt: 2000 });
    assert.equal(await store.rotateRefreshToken(first.tokenHash, next, 2000), true);
    assert.deepEqual(await store.findRefreshToken(first.tokenHash), { ...first, rotatedAt: 2000 });
    assert.deepEqual(await store.findRefreshToken(next.tokenHash), next);
    const loser = refreshRow();
    assert.equal(await store.rotateRefreshToken(first.tokenHash, loser, 3000), false);
    assert.equal(await store.findRefreshToken(loser.tokenHash), undefined);
    assert.equal(await store.findRefreshToken('unknown'), undefined);
  }));

  it('of two rotations of one token racing from two gateways, exactly one wins', withStore(async ({ store, another }) => {
    const other = await another();
    const token = refreshRow();
    await store.insertRefreshToken(token);
    const [a, b] = [refreshRow(), refreshRow()];
    const results = await Promise.all([store.rotateRefreshToken(token.tokenHash, a, 2000), other.rotateRefreshToken(token.tokenHash, b, 2000)]);
    assert.deepEqual([...results].sort(), [false, true]);
    const winner = results[0] ? a : b;
    const loser = results[0] ? b : a;
    assert.deepEqual(await store.findRefreshToken(winner.tokenHash), winner);
    assert.equal(await store.findRefreshToken(loser.tokenHash), undefined);
  }));

  it('revokes a whole session once, lists it among the recent revocations, and refuses its rotation', withStore(async ({ store }) => {
    const a1 = refreshRow({ familyId: 'fam-1', userId: 'u1' });
    const a2 = refreshRow({ familyId: 'fam-1', userId: 'u1' });
    const b1 = refreshRow({ familyId: 'fam-2', userId: 'u2' });
    const old = refreshRow({ familyId: 'fam-3', userId: 'u3' });
    for (const r of [a1, a2, b1, old]) await store.insertRefreshToken(r);
    assert.equal(await store.revokeRefreshFamily('fam-3', 100), true);
    assert.equal(await store.revokeRefreshFamily('fam-1', 5000), true);
    assert.equal(await store.revokeRefreshFamily('fam-1', 6000), false, 'nothing left to revoke');
    assert.equal(await store.revokeRefreshFamily('fam-none', 6000), false);
    assert.equal((await store.findRefreshToken(a2.tokenHash))!.revokedAt, 5000);
    assert.equal((await store.findRefreshToken(b1.tokenHash))!.revokedAt, null);
    assert.equal(await store.rotateRefreshToken(a1.tokenHash, refreshRow({ familyId: 'fam-1' }), 7000), false);
    assert.deepEqual(await store.revokedFamiliesSince(1000), [{ familyId: 'fam-1', userId: 'u1', revokedAt: 5000 }]);
    const all = await store.revokedFamiliesSince(0);
    assert.deepEqual(all.sort((x, y) => x.revokedAt - y.revokedAt).map((r) => r.familyId), ['fam-3', 'fam-1']);
  }));

  it('keeps API keys per user: lookup by hash, list with filters, paging and count, patch', withStore(async ({ store }) => {
    const live = apiKey({ scopes: ['read', 'withdraw'] });
    const deleted = apiKey({ deletedAt: 1500 });
    const expired = apiKey({ expiresAt: 1200 });
    const later = apiKey({ expiresAt: 9000 });
    const foreign = apiKey({ userId: 'user-b' });
    for (const k of [live, deleted, expired, later, foreign]) await store.insertApiKey(k);
    assert.deepEqual(await store.findApiKeyByHash(live.keyHash), live);
    assert.deepEqual(await store.findApiKey('user-a', later.id), later);
    assert.equal(await store.findApiKey('user-a', foreign.id), undefined, 'another user\'s key is not found');
    const list = (o: { withDeleted?: boolean; withExpired?: boolean; limit?: number; offset?: number }) =>
      store.listApiKeys('user-a', { withDeleted: o.withDeleted ?? false, withExpired: o.withExpired ?? false, limit: o.limit ?? 10, offset: o.offset ?? 0, now: 2000 });
    // Newest first (created_at DESC).
    assert.deepEqual(await list({}), { list: [later, live], count: 2 });
    assert.deepEqual((await list({ withDeleted: true, withExpired: true })).list.map((k) => k.id), [later.id, expired.id, deleted.id, live.id]);
    assert.deepEqual(await list({ withExpired: true, limit: 1, offset: 1 }), { list: [expired], count: 3 });
    assert.equal(await store.updateApiKey('user-a', live.id, { name: 'renamed', expiresAt: 7000, updatedAt: 3000 }), true);
    assert.deepEqual(await store.findApiKey('user-a', live.id), { ...live, name: 'renamed', expiresAt: 7000, updatedAt: 3000 });
    assert.equal(await store.updateApiKey('user-b', live.id, { name: 'stolen', updatedAt: 3000 }), false);
    assert.equal(await store.updateApiKey('user-a', 'key-none', { name: 'x', updatedAt: 3000 }), false);
    assert.equal((await store.findApiKey('user-a', live.id))!.name, 'renamed');
  }));
});
