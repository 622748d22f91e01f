import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AccountOrders, type AccountListed } from '../../src/engine/account-orders.js';

class Item implements AccountListed {
  accountPrev: AccountListed | null = null;
  accountNext: AccountListed | null = null;
  constructor(readonly n: number) {}
}

test('AccountOrders behaves as an insertion-ordered set (model: Set) under any add/delete sequence', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 15 })), { maxLength: 200 }), (ops) => {
      const items = Array.from({ length: 16 }, (_, i) => new Item(i));
      const list = new AccountOrders<Item>();
      const model = new Set<Item>();
      for (const [add, i] of ops) {
        const it = items[i];
        if (add) {
          list.add(it);
          model.add(it);
        } else {
          assert.equal(list.delete(it), model.delete(it));
        }
        assert.equal(list.size, model.size);
        for (const x of items) assert.equal(list.has(x), model.has(x));
      }
      assert.deepEqual(list.values().map((x) => x.n), [...model].map((x) => x.n));
    }),
  );
});

test('AccountOrders.values() is a copy: deleting while walking it visits every order once', () => {
  const list = new AccountOrders<Item>();
  const items = Array.from({ length: 5 }, (_, i) => new Item(i));
  for (const it of items) list.add(it);
  const seen: number[] = [];
  for (const it of list.values()) {
    seen.push(it.n);
    list.delete(it);
  }
  assert.deepEqual(seen, [0, 1, 2, 3, 4]);
  assert.equal(list.size, 0);
  assert.deepEqual(list.values(), []);
});
