/**
 * The ProfileStore contract, run against both adapters: SQLite (auth.db in memory) and PostgreSQL (a fresh database
 * per case, dropped after; skipped outside CI when PostgreSQL does not answer). Users are created through the auth
 * store, and what the profile store wrote is read back through the auth store (another code path); expected values
 * come from the inputs the cases write.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import Database from 'better-sqlite3';
import { Wallet } from 'ethers';
import pg from 'pg';
import { PgProfileStore } from '../../src/accounts/pg-profiles.js';
import type { ProfileStore } from '../../src/accounts/profiles.js';
import { SqliteProfileStore } from '../../src/accounts/sqlite-profiles.js';
import { PgAuthStore } from '../../src/auth/pg-auth-store.js';
import type { AuthStore, NewUser } from '../../src/auth/ports.js';
import { SqliteAuthStore } from '../../src/auth/sqlite-auth-store.js';
import { describeOnDialects } from '../store/dialects.js';

interface Opened {
  users: AuthStore;
  profiles: ProfileStore;
  /** user ids reported changed by `profiles` */
  changed: string[];
  /** Another profile store on the same database (another gateway). */
  another(): ProfileStore;
  dispose(): Promise<void>;
}

async function openSqlite(): Promise<Opened> {
  const db = new Database(':memory:');
  const users = new SqliteAuthStore(db);
  await users.migrate();
  const changed: string[] = [];
  return { users, changed, profiles: new SqliteProfileStore(db, (id) => changed.push(id)), another: () => new SqliteProfileStore(db), dispose: async () => void db.close() };
}

async function openPostgres(connectionString: string): Promise<Opened> {
  const users = new PgAuthStore({ connectionString, poolSize: 2 });
  await users.migrate();
  const pools = [new pg.Pool({ connectionString, max: 4 })];
  const changed: string[] = [];
  return {
    users, changed,
    profiles: new PgProfileStore(pools[0]!, (id) => changed.push(id)),
    another: () => {
      const pool = new pg.Pool({ connectionString, max: 4 });
      pools.push(pool);
      return new PgProfileStore(pool);
    },
    async dispose() {
      for (const p of pools) await p.end();
      await users.close();
    },
  };
}

let counter = 0;
function newUser(createdAt: number, wallet = Wallet.createRandom().address): NewUser {
  counter++;
  return { id: `user-${counter}`, authId: `auth-${counter}-${wallet.slice(2, 8).toLowerCase()}`, wallet, role: 'user', smartAccountAddress: Wallet.createRandom().address, createdAt };
}

await describeOnDialects('ProfileStore', { sqlite: openSqlite, postgres: openPostgres }, (withStore) => {
  it('edits the profile columns only, seen by another store and by the auth store', withStore(async (o) => {
    const u = await o.users.findOrCreateUser(newUser(1000));
    const social = [{ type: 'x', value: '@me' }];
    assert.equal(await o.profiles.updateProfile(u.id, { name: 'Ada', email: 'a@b.c', locale: 'de', dateTimeFormat: 'YYYY', social }, 5000), true);
    assert.deepEqual(o.changed, [u.id]);
    const back = (await o.users.findUserById(u.id))!;
    assert.deepEqual(
      { name: back.name, email: back.email, locale: back.locale, dateTimeFormat: back.dateTimeFormat, social: back.social, wallet: back.wallet, role: back.role },
      { name: 'Ada', email: 'a@b.c', locale: 'de', dateTimeFormat: 'YYYY', social, wallet: u.wallet, role: 'user' },
    );
    // Clearing with null; fields left out stay.
    assert.equal(await o.another().updateProfile(u.id, { email: null }, 6000), true);
    const cleared = (await o.users.findUserById(u.id))!;
    assert.equal(cleared.email, null);
    assert.equal(cleared.name, 'Ada');
    assert.equal(await o.profiles.updateProfile('nobody', { name: 'x' }, 7000), false);
  }));

  it('adds and removes favourites, once each; unknown user gives undefined', withStore(async (o) => {
    const u = await o.users.findOrCreateUser(newUser(1000));
    assert.deepEqual(await o.profiles.setFavorite(u.id, 'BTCUSDT', true, 1), ['BTCUSDT']);
    assert.deepEqual(await o.profiles.setFavorite(u.id, 'ETHUSDT', true, 2), ['BTCUSDT', 'ETHUSDT']);
    assert.deepEqual(await o.profiles.setFavorite(u.id, 'BTCUSDT', true, 3), ['BTCUSDT', 'ETHUSDT']);
    assert.deepEqual(await o.profiles.setFavorite(u.id, 'BTCUSDT', false, 4), ['ETHUSDT']);
    assert.deepEqual((await o.users.findUserById(u.id))!.favoriteInstruments, ['ETHUSDT']);
    assert.equal(await o.profiles.setFavorite('nobody', 'BTCUSDT', true, 5), undefined);
  }));

  it('two stores adding favourites at once lose neither', withStore(async (o) => {
    const u = await o.users.findOrCreateUser(newUser(1000));
    const other = o.another();
    const instruments = Array.from({ length: 8 }, (_, i) => `I${i}USDT`);
    await Promise.all(instruments.map((i, n) => (n % 2 ? other : o.profiles).setFavorite(u.id, i, true, n)));
    assert.deepEqual([...(await o.users.findUserById(u.id))!.favoriteInstruments].sort(), [...instruments].sort());
  }));

  it('finds users by handle, wallet and smart account; counts and sign-up times', withStore(async (o) => {
    const a = await o.users.findOrCreateUser(newUser(1000));
    const b = await o.users.findOrCreateUser(newUser(2000));
    const c = await o.users.findOrCreateUser(newUser(3000));
    const found = await o.profiles.findByAuthId(b.authId);
    assert.deepEqual(found, { id: b.id, authId: b.authId, name: null, avatar: null, level: 0, wallet: b.wallet, createdAt: 2000, exchangeId: b.exchangeId });
    assert.equal(await o.profiles.findByAuthId('nope'), undefined);
    assert.equal(await o.profiles.isRegisteredWallet(a.wallet.toUpperCase().replace('0X', '0x')), true);
    assert.equal(await o.profiles.isRegisteredWallet(Wallet.createRandom().address), false);
    assert.equal(await o.profiles.isKnownSmartAccount(c.smartAccountAddress.toLowerCase()), true);
    assert.equal(await o.profiles.isKnownSmartAccount(Wallet.createRandom().address), false);
    assert.equal(await o.profiles.userCount(), 3);
    assert.deepEqual(await o.profiles.signUpTimes(1000, 3000), [1000, 2000]);
    assert.deepEqual(await o.profiles.signUpTimes(1001, 3001), [2000, 3000]);
  }));

  it('searches names (substring, any case, wildcards literal) and wallets (prefix), oldest first, paged', withStore(async (o) => {
    const made = [];
    for (const [i, name] of ['Alice_1', 'alicia', 'Bob%', 'MALICE'].entries()) {
      const u = await o.users.findOrCreateUser(newUser(1000 + i));
      await o.profiles.updateProfile(u.id, { name }, 9000);
      made.push({ ...u, name });
    }
    const names = async (search: string, limit = 10, offset = 0) => {
      const r = await o.profiles.search({ search, limit, offset });
      return { names: r.list.map((p) => p.name), count: r.count };
    };
    assert.deepEqual(await names('ALI'), { names: ['Alice_1', 'alicia', 'MALICE'], count: 3 });
    assert.deepEqual(await names('ALI', 1, 1), { names: ['alicia'], count: 3 });
    assert.deepEqual(await names('ce_'), { names: ['Alice_1'], count: 1 });
    assert.deepEqual(await names('ob%'), { names: ['Bob%'], count: 1 });
    assert.deepEqual(await names('b_b'), { names: [], count: 0 });
    const w = made[2]!.wallet.toLowerCase();
    assert.deepEqual((await names(w.slice(0, 12))).names, made.filter((m) => m.wallet.toLowerCase().startsWith(w.slice(0, 12))).map((m) => m.name));
    assert.deepEqual((await names(w.slice(5, 20))).names, []);
    const byHandle = await o.profiles.search({ authId: made[3]!.authId, limit: 10, offset: 0 });
    assert.deepEqual(byHandle.list.map((p) => p.id), [made[3]!.id]);
    assert.equal(byHandle.list[0]!.createdAt, 1003);
  }));
});
