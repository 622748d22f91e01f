/**
 * The OAuth flow (OauthService) on both OauthStore adapters: SQLite (auth.db in memory) and PostgreSQL (a fresh
 * database per case, dropped after; skipped outside CI when PostgreSQL does not answer). `another()` is a service on
 * a second connection to the same database (another gateway): what one writes the other must honour at once, and
 * two of them racing on one request or one code let exactly one win. Expected values come from the inputs.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { OauthError, OauthService, type OauthOptions } from '../../src/accounts/oauth.js';
import { PgOauthStore } from '../../src/accounts/pg-oauth.js';
import { migrateAccountTables } from '../../src/accounts/pg-schema.js';
import { SqliteOauthStore } from '../../src/accounts/sqlite-oauth.js';
import { createPostgresTestDatabase, postgresAvailable } from '../store/dialects.js';

const TTL: OauthOptions = { pendingTtlMs: 1_000, codeTtlMs: 500, grantTtlMs: 10_000 };
/** Past 2^32 ms, as real clocks are: PostgreSQL's int8 comes back as a string and must be read exactly. */
const T0 = 1_780_000_000_000;

interface Opened {
  oauth: OauthService;
  /** A service on another connection to the same database (another gateway). */
  another(): OauthService;
  dispose(): Promise<void>;
}

async function openSqlite(): Promise<Opened> {
  const db = new Database(':memory:');
  return {
    oauth: new OauthService(new SqliteOauthStore(db), TTL),
    another: () => new OauthService(new SqliteOauthStore(db), TTL),
    dispose: async () => void db.close(),
  };
}

async function openPostgres(): Promise<Opened> {
  const database = await createPostgresTestDatabase();
  const pools: pg.Pool[] = [];
  const service = async () => {
    const pool = new pg.Pool({ connectionString: database.connectionString, max: 2 });
    pools.push(pool);
    await migrateAccountTables(pool);
    return new OauthService(new PgOauthStore(pool), TTL);
  };
  const [first, second] = await Promise.all([service(), service()]);
  return {
    oauth: first,
    another: () => second,
    async dispose() {
      for (const p of pools) await p.end();
      await database.drop();
    },
  };
}

const ADAPTERS = [
  { name: 'sqlite', open: openSqlite, available: async () => true },
  { name: 'postgres', open: openPostgres, available: postgresAvailable },
] as const;

async function rejects(p: Promise<unknown>, status: number, code: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => e instanceof OauthError && e.status === status && e.code === code, `${status} ${code}`);
}

const TRACKER = { name: 'Tracker', redirectUri: 'https://tracker.example.com/cb', scopes: ['read', 'trade'], description: 'reads' };

for (const adapter of ADAPTERS) {
  describe(`OAuth on ${adapter.name}`, { skip: !(await adapter.available()) && `${adapter.name} not reachable` }, () => {
    const withStores = (fn: (o: Opened) => Promise<void>) => async () => {
      const o = await adapter.open();
      try {
        await fn(o);
      } finally {
        await o.dispose();
      }
    };

    it('an integration registered on one gateway is listed and usable on the other; bad input stores nothing', withStores(async (o) => {
      await rejects(o.oauth.registerIntegration({ ...TRACKER, redirectUri: 'http://tracker.example.com/cb' }, T0), 400, 'INVALID_REDIRECT_URI');
      await rejects(o.oauth.registerIntegration({ ...TRACKER, scopes: ['admin'] }, T0), 400, 'INVALID_SCOPE');
      await rejects(o.oauth.registerIntegration({ ...TRACKER, name: ' ' }, T0), 400, 'INVALID_NAME');
      assert.deepEqual(await o.another().integrations(), []);

      const { integration, clientSecret } = await o.oauth.registerIntegration(TRACKER, T0);
      const expected = { id: integration.id, name: 'Tracker', description: 'reads', redirectUri: TRACKER.redirectUri, scopes: ['read', 'trade'], createdAt: T0 };
      assert.deepEqual(integration, expected);
      assert.deepEqual(await o.another().integrations(), [expected], 'listed without the secret hash');
      assert.deepEqual(await o.another().integration(integration.id), expected);
      assert.match(clientSecret, /^\S{20,}$/);
      const opened = await o.another().openRequest(integration.id, ['read', 'read'], 'st', T0);
      assert.deepEqual(opened.request.scopes, ['read']);
      await rejects(o.another().openRequest(integration.id, ['withdraw'], '', T0), 400, 'INVALID_SCOPE');
      await rejects(o.another().openRequest('00000000-0000-4000-8000-000000000000', [], '', T0), 404, 'INTEGRATION_NOT_FOUND');
    }));

    it('consent on one gateway, code exchanged and grant used on the other; single use; revocation ends it everywhere', withStores(async (o) => {
      const g1 = o.oauth;
      const g2 = o.another();
      const { integration, clientSecret } = await g1.registerIntegration(TRACKER, T0);
      const other = await g1.registerIntegration({ ...TRACKER, name: 'Other' }, T0);
      const { request } = await g2.openRequest(integration.id, [], 'xyz', T0);
      assert.deepEqual((await g1.pendingRequest(request.id, T0 + 1)).request, request);

      const approved = await g1.approve(request.id, 'user-b', T0 + 10);
      const redirect = new URL(approved.redirectUrl);
      assert.deepEqual([redirect.searchParams.get('code'), redirect.searchParams.get('state')], [approved.code, 'xyz']);
      assert.deepEqual([approved.request.status, approved.request.userId, approved.request.decidedAt, approved.request.expiresAt], ['approved', 'user-b', T0 + 10, T0 + 10 + 10_000]);
      await rejects(g2.approve(request.id, 'user-b', T0 + 11), 409, 'OAUTH_REQUEST_DECIDED');
      await rejects(g2.deny(request.id, null, T0 + 11), 409, 'OAUTH_REQUEST_DECIDED');

      await rejects(g2.exchangeCode(integration.id, 'wrong', approved.code, T0 + 20), 401, 'INVALID_CLIENT');
      await rejects(g2.exchangeCode(other.integration.id, other.clientSecret, approved.code, T0 + 20), 400, 'INVALID_GRANT');
      const { accessToken } = await g2.exchangeCode(integration.id, clientSecret, approved.code, T0 + 20);
      assert.match(accessToken, /^pxo_/);
      await rejects(g1.exchangeCode(integration.id, clientSecret, approved.code, T0 + 21), 400, 'INVALID_GRANT');

      for (const g of [g1, g2]) {
        const grant = await g.grant(accessToken, T0 + 30);
        assert.deepEqual([grant?.id, grant?.userId, grant?.scopes], [request.id, 'user-b', ['read', 'trade']]);
      }
      assert.equal(await g1.grant(`${accessToken}x`, T0 + 30), undefined);
      assert.equal(await g1.grant(accessToken.slice(4), T0 + 30), undefined, 'without the prefix');

      await rejects(g2.revoke('user-a', request.id), 404, 'OAUTH_REQUEST_NOT_FOUND');
      await g2.revoke('user-b', request.id);
      assert.equal(await g1.grant(accessToken, T0 + 40), undefined, 'revoked on the other gateway');
      await rejects(g1.revoke('user-b', request.id), 404, 'OAUTH_REQUEST_NOT_FOUND');
      assert.equal((await g1.listForUser('user-b', { withRejected: false, limit: 10, offset: 0 })).list[0]?.status, 'revoked');
    }));

    it('expiry: of the consent screen, of the code, of the grant', withStores(async (o) => {
      const { integration, clientSecret } = await o.oauth.registerIntegration(TRACKER, T0);
      const late = await o.oauth.openRequest(integration.id, [], '', T0);
      await rejects(o.another().approve(late.request.id, 'u', T0 + 1_000), 400, 'OAUTH_REQUEST_EXPIRED');
      await rejects(o.another().deny(late.request.id, null, T0 + 1_000), 400, 'OAUTH_REQUEST_EXPIRED');
      // Opening another request prunes the expired pending one.
      await o.oauth.openRequest(integration.id, [], '', T0 + 1_000);
      await rejects(o.another().pendingRequest(late.request.id, T0 + 1_000), 404, 'OAUTH_REQUEST_NOT_FOUND');

      const slow = await o.oauth.openRequest(integration.id, [], '', T0 + 2_000);
      const slowCode = (await o.oauth.approve(slow.request.id, 'u', T0 + 2_000)).code;
      await rejects(o.another().exchangeCode(integration.id, clientSecret, slowCode, T0 + 2_500), 400, 'INVALID_GRANT');

      const r = await o.oauth.openRequest(integration.id, [], '', T0 + 3_000);
      const code = (await o.oauth.approve(r.request.id, 'u', T0 + 3_000)).code;
      const { accessToken } = await o.another().exchangeCode(integration.id, clientSecret, code, T0 + 3_499);
      assert.ok(await o.oauth.grant(accessToken, T0 + 3_000 + 9_999));
      assert.equal(await o.oauth.grant(accessToken, T0 + 3_000 + 10_000), undefined);
    }));

    it('two gateways racing: one approval of a request wins, one exchange of a code wins', withStores(async (o) => {
      const { integration, clientSecret } = await o.oauth.registerIntegration(TRACKER, T0);
      const gateways = [o.oauth, o.another()];
      for (let round = 0; round < 10; round++) {
        const { request } = await o.oauth.openRequest(integration.id, [], '', T0);
        const approvals = await Promise.allSettled(gateways.map((g, i) => (i === 0 ? g.approve(request.id, 'u', T0 + 1) : g.deny(request.id, 'u', T0 + 1))));
        assert.equal(approvals.filter((a) => a.status === 'fulfilled').length, 1, `round ${round}: one decision`);
        const lost = approvals.find((a) => a.status === 'rejected') as PromiseRejectedResult;
        assert.ok(lost.reason instanceof OauthError && lost.reason.status === 409, String(lost.reason));
        const winner = approvals.find((a) => a.status === 'fulfilled') as PromiseFulfilledResult<{ code?: string }>;
        if (winner.value.code === undefined) continue;
        const code = winner.value.code;
        const exchanges = await Promise.allSettled(gateways.map((g) => g.exchangeCode(integration.id, clientSecret, code, T0 + 2)));
        assert.equal(exchanges.filter((e) => e.status === 'fulfilled').length, 1, `round ${round}: one grant`);
      }
    }));

    it("a user's list: approved and revoked (rejected on request), newest first, paged; others' stay out", withStores(async (o) => {
      const { integration } = await o.oauth.registerIntegration(TRACKER, T0);
      const decide = async (at: number, userId: string, how: 'approve' | 'deny' | 'revoke') => {
        const { request } = await o.oauth.openRequest(integration.id, [], '', at);
        if (how === 'deny') await o.oauth.deny(request.id, userId, at);
        else await o.oauth.approve(request.id, userId, at);
        if (how === 'revoke') await o.oauth.revoke(userId, request.id);
        return request.id;
      };
      const a = await decide(T0 + 1, 'u1', 'approve');
      const b = await decide(T0 + 3, 'u1', 'revoke');
      const c = await decide(T0 + 2, 'u1', 'deny');
      await decide(T0 + 4, 'u2', 'approve');
      await o.oauth.openRequest(integration.id, [], '', T0 + 5);
      const ids = async (withRejected: boolean, limit = 10, offset = 0) => {
        const r = await o.another().listForUser('u1', { withRejected, limit, offset });
        return { ids: r.list.map((x) => [x.id, x.status]), count: r.count };
      };
      assert.deepEqual(await ids(false), { ids: [[b, 'revoked'], [a, 'approved']], count: 2 });
      assert.deepEqual(await ids(true), { ids: [[b, 'revoked'], [c, 'rejected'], [a, 'approved']], count: 3 });
      assert.deepEqual(await ids(true, 1, 1), { ids: [[c, 'rejected']], count: 3 });
      assert.deepEqual(await ids(false, 10, 5), { ids: [], count: 2 });
    }));
  });
}
