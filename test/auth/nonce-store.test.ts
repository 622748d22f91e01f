/**
 * The NonceStore contract on both adapters: in memory (the single process, listed as the sqlite dialect) and
 * PostgreSQL (a fresh database per case; several stores on it play several gateways). Bounds per client, in all,
 * by time; single use; exactly one winner when gateways race on one nonce. The HTTP-level flood test is in
 * test/app/rate-limits.test.ts, sign-in across gateways in test/cluster/sign-in-any-gateway.test.ts.
 */
import assert from 'node:assert/strict';
import { it, test } from 'node:test';
import { MemoryNonceStore } from '../../src/auth/nonce-store.js';
import { PgNonceStore } from '../../src/auth/pg-nonce-store.js';
import type { NonceLimits, NonceStore } from '../../src/auth/ports.js';
import { eventually } from '../app/client.js';
import { createPostgresTestDatabase, describeOnDialects, postgresAvailable } from '../store/dialects.js';
import { testClock, type Clock } from './helpers.js';

const TTL_MS = 60_000;

interface Gateways {
  /** `count` stores sharing one set of nonces (one memory, or one database), as that many gateways would. */
  open(count: number, limits: NonceLimits, clock: Clock): Promise<NonceStore[]>;
  dispose(): Promise<void>;
}

async function inMemory(): Promise<Gateways> {
  return {
    async open(count, limits, clock) {
      const store = new MemoryNonceStore(TTL_MS, clock.now, limits);
      await store.migrate();
      return Array.from({ length: count }, () => store);
    },
    dispose: async () => undefined,
  };
}

async function onPostgres(connectionString: string): Promise<Gateways> {
  const opened: PgNonceStore[] = [];
  return {
    async open(count, limits, clock) {
      const stores = Array.from({ length: count }, () => new PgNonceStore({ connectionString, ttlMs: TTL_MS, limits, now: clock.now, sweepEveryMs: 0, poolSize: 2 }));
      opened.push(...stores);
      // All at once, as gateways starting together: the migration lock keeps their CREATEs apart.
      await Promise.all(stores.map((s) => s.migrate()));
      return stores;
    },
    async dispose() {
      for (const s of opened) await s.close();
    },
  };
}

const valid = (store: NonceStore, nonces: string[]) => Promise.all(nonces.map((n) => store.isValid(n)));

await describeOnDialects('nonce store contract', { sqlite: inMemory, postgres: onPostgres }, (withStore) => {
  it('issues distinct nonces of 20 alphanumerics, valid on every gateway', withStore(async (g) => {
    const [one, two] = await g.open(2, { capacity: 100, perClient: 10 }, testClock());
    const issued = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? one : two).issue('a')));
    assert.equal(new Set(issued).size, 10);
    for (const n of issued) assert.match(n, /^[A-Za-z0-9]{20}$/);
    assert.deepEqual(await valid(one, issued), issued.map(() => true));
    assert.deepEqual(await valid(two, issued), issued.map(() => true));
    assert.equal(await one.isValid('unknownnonce12345678'), false);
  }));

  it('a nonce issued on one gateway is consumed once on another, then refused on both', withStore(async (g) => {
    const [one, two] = await g.open(2, { capacity: 100, perClient: 10 }, testClock());
    const nonce = await one.issue('a');
    assert.equal(await two.consume(nonce), true);
    assert.equal(await two.consume(nonce), false, 'single use, same gateway');
    assert.equal(await one.consume(nonce), false, 'single use, the issuing gateway');
    assert.equal(await one.isValid(nonce), false);
    assert.equal(await one.heldBy('a'), 0);
  }));

  it('gateways racing on one nonce: exactly one consume wins, every time', withStore(async (g) => {
    const gateways = await g.open(4, { capacity: 1000, perClient: 100 }, testClock());
    const nonces = await Promise.all(Array.from({ length: 25 }, () => gateways[0]!.issue('racer')));
    const rounds = await Promise.all(nonces.map((n) => Promise.all(gateways.flatMap((s) => [s.consume(n), s.consume(n)]))));
    assert.deepEqual(rounds.map((r) => r.filter(Boolean).length), nonces.map(() => 1), 'one winner per nonce among 8 consumes on 4 gateways');
  }));

  it('a client over its cap loses its own oldest nonces, never another client\'s', withStore(async (g) => {
    const [one, two] = await g.open(2, { capacity: 10, perClient: 3 }, testClock());
    const others = [await one.issue('b'), await two.issue('c'), await one.issue('d')];
    const flood: string[] = [];
    for (let i = 0; i < 30; i++) flood.push(await (i % 2 ? one : two).issue('a'));
    assert.deepEqual(await valid(one, others), [true, true, true]);
    assert.equal((await valid(two, flood)).lastIndexOf(false), 26, 'all but the newest 3 are gone, on both gateways');
    assert.equal(await one.heldBy('a'), 3);
  }));

  it('a flood from one client on four gateways at once: every issue answers, then the cap holds', withStore(async (g) => {
    const gateways = await g.open(4, { capacity: 1000, perClient: 3 }, testClock());
    const flood = await Promise.all(Array.from({ length: 400 }, (_, i) => gateways[i % 4]!.issue('a')));
    assert.equal(new Set(flood).size, 400, 'no issue failed (a deadlock or conflict would reject)');
    assert.ok((await gateways[0]!.heldBy('a')) <= 3 + 4, 'at most one over the cap per concurrent gateway');
    const last = await gateways[1]!.issue('a');
    assert.equal(await gateways[2]!.heldBy('a'), 3, 'the next issue alone brings it back to the cap');
    assert.equal(await gateways[3]!.isValid(last), true);
  }));

  it('expired nonces are refused, do not count against the cap, and are swept', withStore(async (g) => {
    const clock = testClock();
    const [one, two] = await g.open(2, { capacity: 10, perClient: 2 }, clock);
    const old = [await one.issue('a'), await two.issue('a')];
    const idle = await one.issue('b');
    clock.advance(TTL_MS - 1);
    assert.deepEqual(await valid(two, [...old, idle]), [true, true, true], 'valid up to the TTL');
    clock.advance(2); // past the TTL
    assert.deepEqual(await valid(two, [...old, idle]), [false, false, false]);
    assert.equal(await two.consume(old[0]!), false, 'an expired nonce is not consumed');
    const fresh = await two.issue('a');
    assert.equal(await one.heldBy('a'), 1, 'the expired ones were cleared, not counted');
    assert.equal(await one.heldBy('b'), 1, 'another client\'s expired nonce stays until swept');
    await one.sweep();
    assert.equal(await two.heldBy('b'), 0, 'swept');
    assert.equal(await one.consume(fresh), true, 'the sweep keeps what has not expired');
    assert.equal(await one.heldBy('a'), 0);
  }));

  it('capacity bounds all outstanding nonces once swept (oldest first)', withStore(async (g) => {
    const [one, two] = await g.open(2, { capacity: 5, perClient: 2 }, testClock());
    const issued: string[] = [];
    for (let i = 0; i < 8; i++) issued.push(await (i % 2 ? one : two).issue(`client-${i}`));
    await two.sweep();
    assert.deepEqual(await valid(one, issued), [false, false, false, true, true, true, true, true]);
    assert.equal(await one.heldBy('client-0'), 0, 'an evicted nonce leaves its client\'s count');
  }));
});

test('on PostgreSQL each gateway sweeps expired nonces by itself once migrated', { skip: !(await postgresAvailable()) && 'postgres not reachable' }, async () => {
  const database = await createPostgresTestDatabase();
  const clock = testClock();
  const store = new PgNonceStore({ connectionString: database.connectionString, ttlMs: TTL_MS, now: clock.now, sweepEveryMs: 20 });
  try {
    await store.migrate();
    await store.issue('a');
    await store.issue('b');
    assert.equal(await store.heldBy('b'), 1, 'not swept while valid');
    clock.advance(TTL_MS);
    await eventually(async () => (await store.heldBy('a')) + (await store.heldBy('b')), (n) => n === 0, 'the expired rows swept');
  } finally {
    await store.close();
    await database.drop();
  }
});
