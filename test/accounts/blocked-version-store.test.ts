/**
 * The BlockedVersionStore contract (mobile-app version rules) on both adapters: SQLite (in memory) and PostgreSQL
 * (a fresh database per case, dropped after; skipped outside CI when PostgreSQL does not answer). Expected values
 * are the rules the cases write and version orders worked out by hand.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { MOBILE_APP_SCHEMA, SqliteBlockedVersionStore, type BlockedVersionStore } from '../../src/accounts/mobile-app.js';
import { PgBlockedVersionStore } from '../../src/accounts/pg-mobile-app.js';
import { migrateAccountTables } from '../../src/accounts/pg-schema.js';
import { describeOnDialects } from '../store/dialects.js';

interface Opened {
  store: BlockedVersionStore;
  /** Another store on the same database (another gateway). */
  another: BlockedVersionStore;
  dispose(): Promise<void>;
}

async function openSqlite(): Promise<Opened> {
  const db = new Database(':memory:');
  db.exec(MOBILE_APP_SCHEMA);
  return { store: new SqliteBlockedVersionStore(db), another: new SqliteBlockedVersionStore(db), dispose: async () => void db.close() };
}

async function openPostgres(connectionString: string): Promise<Opened> {
  const pools = [new pg.Pool({ connectionString, max: 2 }), new pg.Pool({ connectionString, max: 2 })];
  await Promise.all(pools.map(migrateAccountTables));
  return {
    store: new PgBlockedVersionStore(pools[0]!),
    another: new PgBlockedVersionStore(pools[1]!),
    async dispose() {
      for (const p of pools) await p.end();
    },
  };
}

const rejects = (p: Promise<unknown>, code: string) => assert.rejects(p, (e: { code?: string }) => e.code === code);

await describeOnDialects('BlockedVersionStore', { sqlite: openSqlite, postgres: openPostgres }, (withStore) => {
  it('creates a rule, patches it keeping the rest, and another store reads it', withStore(async (o) => {
    const created = await o.store.put('r1', { platform: 'ios', versionMin: '1.0.0', versionMax: '1.4.0', blockMessage: 'update' }, 1000);
    assert.deepEqual(created, {
      id: 'r1', platform: 'ios', versionMin: '1.0.0', versionMax: '1.4.0', blockType: '2', blockMessage: 'update',
      blockHead: '', blockButton: '', blockButtonLink: '', createdAt: 1000, updatedAt: 1000,
    });
    const patched = await o.another.put('r1', { blockType: '1', versionMin: null }, 2000);
    assert.deepEqual(patched, { ...created, blockType: '1', versionMin: null, updatedAt: 2000 });
    assert.deepEqual(await o.store.get('r1'), patched);
    await o.store.put('a0', { platform: 'web' }, 3000);
    await o.store.put('z9', { platform: 'android' }, 3000);
    assert.deepEqual((await o.another.list()).map((r) => r.id), ['z9', 'r1', 'a0']);
  }));

  it('refuses bad input and writes nothing then', withStore(async (o) => {
    await rejects(o.store.put('new', { blockMessage: 'x' }, 1), 'PLATFORM_REQUIRED');
    await rejects(o.store.put('new', { platform: 'ios', versionMin: 'v1' }, 1), 'INVALID_VERSION');
    await rejects(o.store.put('new', { platform: 'ios', versionMin: '2.0.0', versionMax: '1.9.9' }, 1), 'INVALID_VERSION_RANGE');
    assert.deepEqual(await o.store.list(), []);
    const kept = await o.store.put('r', { platform: 'ios', versionMax: '2.0.0' }, 1);
    await rejects(o.store.put('r', { versionMin: '3.0.0' }, 2), 'INVALID_VERSION_RANGE');
    assert.deepEqual(await o.store.get('r'), kept);
    await rejects(o.store.check('ios', 'latest'), 'INVALID_VERSION');
  }));

  it('answers the hardest active rule covering a version, bounds inclusive', withStore(async (o) => {
    await o.store.put('soft', { platform: 'android', versionMin: '1.0.0', versionMax: '2.0.0', blockType: '1' }, 1);
    await o.store.put('hard', { platform: 'android', versionMin: '1.5.0', versionMax: '1.5.9', blockType: '2' }, 1);
    await o.store.put('off', { platform: 'android', versionMin: '0.1.0', blockType: '0' }, 1);
    await o.store.put('ios', { platform: 'ios', blockType: '2' }, 1);
    const id = async (version: string) => (await o.another.check('android', version))?.id;
    assert.equal(await id('0.9.9'), undefined);
    assert.equal(await id('1.0.0'), 'soft');
    assert.equal(await id('1.5.0'), 'hard');
    assert.equal(await id('1.5.9'), 'hard');
    assert.equal(await id('1.10.0'), 'soft');
    assert.equal(await id('2.0.0'), 'soft');
    assert.equal(await id('2.0.1'), undefined);
    assert.equal((await o.store.check('web', '1.0.0'))?.id, undefined);
  }));
});
