/**
 * The used-order-id table against a model (a Set of "user/key" strings): membership after random adds,
 * growth past many resizes, pruning by day, and the canonical per-user listing snapshots are built from.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { UsedOrderIds } from '../../src/engine/used-order-ids.js';

const hexKey = fc.stringMatching(/^[0-9a-f]{26}$/);
const entry = fc.record({ user: fc.integer({ min: 1, max: 5 }), key: hexKey, day: fc.integer({ min: 100, max: 104 }) });

describe('UsedOrderIds', () => {
  it('answers membership exactly like a set, across growth and pruning', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 3000 }), fc.integer({ min: 100, max: 105 }), (entries, pruneBefore) => {
        const table = new UsedOrderIds(4);
        const model = new Map<string, number>();
        for (const e of entries) {
          table.add(e.user, e.key, e.day);
          const k = `${e.user}/${e.key}`;
          if (!model.has(k)) model.set(k, e.day); // first day wins
        }
        assert.equal(table.size, model.size);
        for (const e of entries) assert.ok(table.has(e.user, e.key));
        // A key used by one user is not used by another.
        for (const e of entries.slice(0, 50)) assert.equal(table.has(e.user + 10, e.key), false);
        table.prune(pruneBefore);
        const kept = [...model].filter(([, day]) => day >= pruneBefore);
        assert.equal(table.size, kept.length);
        for (const [k, day] of model) {
          const [user, key] = k.split('/');
          assert.equal(table.has(Number(user), key), day >= pruneBefore, k);
        }
        // The listing holds exactly the kept entries, sorted by key within each user.
        const listed: string[] = [];
        for (const [user, list] of table.byUser()) {
          const keys = list.map(([key]) => key);
          assert.deepEqual(keys, [...keys].sort());
          for (const [key, day] of list) listed.push(`${user}/${key}=${day}`);
        }
        assert.deepEqual(listed.sort(), kept.map(([k, day]) => `${k}=${day}`).sort());
      }),
      { numRuns: 60 },
    );
  });

  it('grows through many resizes without losing an entry', () => {
    const table = new UsedOrderIds();
    const key = (i: number) => i.toString(16).padStart(26, '0');
    for (let i = 0; i < 50_000; i++) table.add(1 + (i % 3), key(i), 100 + (i % 2));
    assert.equal(table.size, 50_000);
    for (let i = 0; i < 50_000; i++) assert.ok(table.has(1 + (i % 3), key(i)), key(i));
    assert.equal(table.has(1, key(50_001)), false);
    table.prune(101);
    assert.equal(table.size, 25_000);
    assert.equal(table.has(1, key(0)), false);
    assert.ok(table.has(2, key(1)));
  });

  it('keeps keys that differ only in one digit apart', () => {
    const table = new UsedOrderIds();
    const base = '0123456789abcdef0123456789';
    table.add(7, base, 1);
    for (let i = 0; i < base.length; i++) {
      const other = base.slice(0, i) + (base[i] === 'f' ? 'e' : 'f') + base.slice(i + 1);
      assert.equal(table.has(7, other), false, other);
    }
    assert.ok(table.has(7, base));
    assert.equal(table.has(8, base), false);
  });

  it('refuses a key that is not canonical', () => {
    assert.throws(() => new UsedOrderIds().has(1, 'abc'), /canonical/);
  });
});
