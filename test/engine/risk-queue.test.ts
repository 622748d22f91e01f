import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { newAccount } from '../../src/engine/account.js';
import { RiskQueue } from '../../src/engine/risk-queue.js';

test('RiskQueue.take gives each queued account once, in ascending user id, and starts a new turn (model: Set)', () => {
  fc.assert(
    fc.property(
      fc.array(fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 60 }), { minLength: 1, maxLength: 6 }),
      (turns) => {
        const accounts = Array.from({ length: 41 }, (_, i) => newAccount(i));
        const queue = new RiskQueue();
        for (const ids of turns) {
          const model = new Set<number>();
          for (const id of ids) {
            queue.add(accounts[id]);
            model.add(id);
          }
          assert.equal(queue.size, model.size);
          const taken = queue.take().map((a) => a.userId);
          assert.deepEqual(taken, [...model].sort((a, b) => a - b));
          assert.equal(queue.size, 0);
          // Taken accounts may be queued again (a liquidation's fills touch them) for the next turn.
          for (const a of accounts) assert.equal(a.riskQueued, false);
        }
      },
    ),
  );
});

test('RiskQueue: accounts added while a taken list is processed wait for the next take; clear forgets them', () => {
  const [a, b, c] = [newAccount(3), newAccount(1), newAccount(2)];
  const queue = new RiskQueue();
  queue.add(a);
  queue.add(b);
  const first = queue.take();
  assert.deepEqual(first.map((x) => x.userId), [1, 3]);
  queue.add(c);
  queue.add(a);
  assert.deepEqual(first.map((x) => x.userId), [1, 3], 'the list being processed is not changed by new additions');
  assert.deepEqual(queue.take().map((x) => x.userId), [2, 3]);
  queue.add(b);
  queue.clear();
  assert.equal(queue.size, 0);
  assert.equal(b.riskQueued, false);
  assert.deepEqual(queue.take(), []);
});
