import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BoundedCache } from '../../src/auth/bounded-cache.js';

test('BoundedCache evicts the least recently used entry and honours deadlines', () => {
  const c = new BoundedCache<string, number>(2);
  c.set('a', 1, 100);
  c.set('b', 2, 100);
  assert.equal(c.get('a', 0), 1); // a is now the most recently used
  c.set('c', 3, 100); // evicts b
  assert.equal(c.get('b', 0), undefined);
  assert.equal(c.get('a', 0), 1);
  assert.equal(c.get('c', 0), 3);
  assert.equal(c.size, 2);
  assert.equal(c.get('a', 100), undefined); // deadline reached
  assert.equal(c.size, 2); // an expired entry stays for stale reads until evicted
  c.set('c', 4, 200); // overwrite keeps one entry per key
  assert.equal(c.get('c', 150), 4);
  assert.equal(c.size, 2);
  assert.throws(() => new BoundedCache(0));
});

test('BoundedCache keeps an expired value for stale reads until it is evicted', () => {
  const c = new BoundedCache<string, number>(2);
  c.set('a', 1, 100);
  assert.equal(c.get('a', 100), undefined, 'expired for get');
  assert.equal(c.stale('a'), 1, 'still there for a stale read');
  c.set('b', 2, 1000);
  c.set('c', 3, 1000);
  assert.equal(c.stale('a'), undefined, 'evicted as the least recently used');
});
