/** NonceStore bounds: per client, in all, by time (the HTTP-level flood test is in test/app/rate-limits.test.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NonceStore } from '../../src/auth/nonce-store.js';
import { testClock } from './helpers.js';

test('a client over its cap loses its own oldest nonces, never another client\'s', () => {
  const clock = testClock();
  const store = new NonceStore(60_000, clock.now, { capacity: 10, perClient: 3 });
  const others = ['b', 'c', 'd'].map((c) => store.issue(c));
  const flood = Array.from({ length: 100 }, () => store.issue('a'));
  for (const n of others) assert.equal(store.isValid(n), true);
  assert.deepEqual(flood.map((n) => store.isValid(n)).lastIndexOf(false), 96, 'all but the newest 3 are gone');
  assert.equal(store.heldBy('a'), 3);
});

test('expired nonces are invalid and do not count against the cap', () => {
  const clock = testClock();
  const store = new NonceStore(60_000, clock.now, { capacity: 10, perClient: 2 });
  const old = [store.issue('a'), store.issue('a')];
  clock.advance(60_001); // past the TTL
  assert.deepEqual(old.map((n) => store.isValid(n)), [false, false]);
  const fresh = store.issue('a');
  assert.equal(store.heldBy('a'), 1, 'the expired ones were cleared, not counted');
  assert.equal(store.consume(fresh), true);
  assert.equal(store.consume(fresh), false, 'single use');
  assert.equal(store.heldBy('a'), 0);
});

test('capacity bounds all outstanding nonces (oldest first)', () => {
  const store = new NonceStore(60_000, testClock().now, { capacity: 5, perClient: 2 });
  const issued = Array.from({ length: 8 }, (_, i) => store.issue(`client-${i}`));
  assert.deepEqual(issued.map((n) => store.isValid(n)), [false, false, false, true, true, true, true, true]);
  assert.equal(store.heldBy('client-0'), 0, 'an evicted nonce leaves its client\'s count');
});
