/**
 * The order-id index against a model (a Map of "user/key" → live order or used day): membership and lookup
 * after random live/retire operations, growth past many resizes, both id spellings (v2 id of either case and
 * the canonical key), pruning by day (live ids survive it), and the canonical per-user listing snapshots use.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { OrderIdIndex, USED_ID_WORDS } from '../../src/engine/order-id-index.js';

const hex = (w: number, digits: number) => w.toString(16).padStart(digits, '0');

const hexKey = fc.stringMatching(/^[0-9a-f]{26}$/);
const op = fc.record({
  user: fc.integer({ min: 1, max: 5 }),
  key: hexKey,
  day: fc.integer({ min: 100, max: 104 }),
  live: fc.boolean(),
  asId: fc.boolean(),
});

/** The v2 id spelling of a key (upper case, to prove case does not matter). */
const v2 = (key: string, day: number) => `${String(day).padStart(5, '0')}:${key.toUpperCase()}`;

describe('OrderIdIndex', () => {
  it('answers like a map of live orders and used days, across growth and pruning', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 3000 }), fc.integer({ min: 100, max: 105 }), (ops, pruneBefore) => {
        const index = new OrderIdIndex<string>(4);
        const model = new Map<string, { day: number; live: string | null }>();
        for (const [n, o] of ops.entries()) {
          const text = o.asId ? v2(o.key, o.day) : o.key;
          const k = `${o.user}/${o.key}`;
          const prev = model.get(k);
          const day = prev?.day ?? o.day; // the first day an id was seen stays its day
          if (o.live) {
            index.setLive(o.user, text, o.day, `order${n}`);
            model.set(k, { day, live: `order${n}` });
          } else {
            index.retire(o.user, text, o.day);
            model.set(k, { day, live: null });
          }
        }
        const check = () => {
          for (const [k, v] of model) {
            const [user, key] = k.split('/');
            assert.ok(index.has(Number(user), key));
            assert.equal(index.lookup(Number(user), key), v.live, k);
            assert.equal(index.lookup(Number(user) + 10, key), undefined);
          }
          assert.equal(index.size, model.size);
          assert.equal(index.liveCount, [...model.values()].filter((v) => v.live !== null).length);
        };
        check();
        index.prune(pruneBefore);
        for (const [k, v] of model) if (v.live === null && v.day < pruneBefore) model.delete(k);
        check();
        // The listing holds exactly the used ids, sorted by key within each user; restoring it gives them back.
        const listed: string[] = [];
        const restored = new OrderIdIndex<string>();
        for (const [user, flat] of index.usedByUser()) {
          const keys: string[] = [];
          for (let k = 0; k < flat.length; k += USED_ID_WORDS) {
            const key = hex(flat[k], 7) + hex(flat[k + 1], 7) + hex(flat[k + 2], 6) + hex(flat[k + 3], 6);
            keys.push(key);
            listed.push(`${user}/${key}=${flat[k + 4]}`);
          }
          assert.deepEqual(keys, [...keys].sort());
          restored.restoreUsed(user, flat);
        }
        const expected = [...model].filter(([, v]) => v.live === null).map(([k, v]) => `${k}=${v.day}`);
        assert.deepEqual(listed.sort(), expected.sort());
        assert.deepEqual(restored.usedByUser(), index.usedByUser());
      }),
      { numRuns: 60 },
    );
  });

  it('answers exactly while entries move to a new table: lookups, inserts and prunes in the middle of a move', () => {
    const step = fc.oneof(
      { weight: 20, arbitrary: op.map((o) => ({ kind: 'id' as const, ...o })) },
      { weight: 1, arbitrary: fc.integer({ min: 100, max: 105 }).map((minDay) => ({ kind: 'prune' as const, minDay })) },
    );
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 2500 }), fc.array(fc.nat(), { minLength: 1, maxLength: 50 }), (steps, probes) => {
        const index = new OrderIdIndex<string>(4);
        const model = new Map<string, { day: number; live: string | null }>();
        const keys: Array<[number, string]> = [];
        // Checks some ids now, without finishing a move (size would): lookups must see both tables.
        const sample = (n: number) => {
          for (let k = 0; k < 3 && keys.length > 0; k++) {
            const [user, key] = keys[(probes[(n + k) % probes.length] + n) % keys.length];
            const v = model.get(`${user}/${key}`);
            assert.equal(index.lookup(user, key), v === undefined ? undefined : v.live, `${user}/${key} after step ${n}`);
          }
        };
        for (const [n, s] of steps.entries()) {
          if (s.kind === 'prune') {
            index.prune(s.minDay);
            for (const [k, v] of model) if (v.live === null && v.day < s.minDay) model.delete(k);
          } else {
            const text = s.asId ? v2(s.key, s.day) : s.key;
            const k = `${s.user}/${s.key}`;
            const day = model.get(k)?.day ?? s.day;
            if (s.live) index.setLive(s.user, text, s.day, `order${n}`);
            else index.retire(s.user, text, s.day);
            if (!model.has(k)) keys.push([s.user, s.key]);
            model.set(k, { day, live: s.live ? `order${n}` : null });
          }
          sample(n);
        }
        for (const [k, v] of model) {
          const [user, key] = k.split('/');
          assert.equal(index.lookup(Number(user), key), v.live, k);
        }
        for (const [user, key] of keys) if (!model.has(`${user}/${key}`)) assert.equal(index.has(user, key), false, `${user}/${key} pruned`);
        assert.equal(index.size, model.size);
        assert.equal(index.liveCount, [...model.values()].filter((v) => v.live !== null).length);
      }),
      { numRuns: 60 },
    );
  });

  it('grows through many resizes without losing an entry; live ids outlive pruning', () => {
    const index = new OrderIdIndex<number>();
    const key = (i: number) => i.toString(16).padStart(26, '0');
    for (let i = 0; i < 50_000; i++) {
      if (i % 5 === 0) index.setLive(1 + (i % 3), key(i), 100, i);
      else index.retire(1 + (i % 3), key(i), 100 + (i % 2));
    }
    assert.equal(index.size, 50_000);
    assert.equal(index.liveCount, 10_000);
    for (let i = 0; i < 50_000; i++) assert.equal(index.lookup(1 + (i % 3), key(i)), i % 5 === 0 ? i : null, key(i));
    assert.equal(index.has(1, key(50_001)), false);
    index.prune(101);
    // Kept: live ones (day 100, every 5th) and used ones of day 101 (odd i not divisible by 5).
    let expected = 0;
    for (let i = 0; i < 50_000; i++) if (i % 5 === 0 || i % 2 === 1) expected++;
    assert.equal(index.size, expected);
    assert.equal(index.lookup(1, key(0)), 0);
    assert.equal(index.has(2 + 1, key(2)), false); // used on day 100: pruned
    assert.equal(index.lookup(2, key(1)), null);
  });

  it('frees a live reference on retire and reuses it', () => {
    const index = new OrderIdIndex<string>();
    index.setLive(1, 'a'.repeat(26), 1, 'first');
    index.retire(1, 'a'.repeat(26), 1);
    assert.equal(index.liveCount, 0);
    index.setLive(1, 'b'.repeat(26), 1, 'second');
    assert.equal(index.liveCount, 1);
    assert.equal(index.lookup(1, 'a'.repeat(26)), null);
    assert.equal(index.lookup(1, `00001:${'B'.repeat(26)}`), 'second');
  });

  it('keeps ids that differ in one digit apart', () => {
    const index = new OrderIdIndex<string>();
    const base = '0123456789abcdef0123456789';
    index.retire(7, base, 1);
    for (let i = 0; i < base.length; i++) {
      const other = base.slice(0, i) + (base[i] === 'f' ? 'e' : 'f') + base.slice(i + 1);
      assert.equal(index.has(7, other), false, other);
    }
    assert.ok(index.has(7, base));
    assert.equal(index.has(8, base), false);
  });

  it('refuses text that does not end in an id', () => {
    assert.throws(() => new OrderIdIndex().has(1, 'abc'), /not an order id/);
  });
});
