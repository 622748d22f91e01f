/**
 * The trigger queue (src/engine/trigger-queue.ts) against a plain reference: the live triggers in a list,
 * `takeDue` = the crossed ones in seq order. Random set / move / remove / takeDue sequences (fast-check),
 * with few prices (ties), many removals (the lazy-deletion rebuild) and marks on both sides.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { TriggerQueue } from '../../src/engine/trigger-queue.js';

type Op =
  | { t: 'set'; item: number; price: number; rising: boolean }
  | { t: 'remove'; item: number }
  | { t: 'due'; mark: number };

const item = fc.integer({ min: 0, max: 150 });
const price = fc.integer({ min: 0, max: 40 });
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ t: fc.constant('set' as const), item, price, rising: fc.boolean() }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('remove' as const), item }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('due' as const), mark: price }) },
);

interface ModelTrigger { item: number; price: number; rising: boolean; seq: number }

describe('TriggerQueue', () => {
  it('takes exactly the crossed triggers, in seq order, like a scan of all of them', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 600 }), (ops) => {
        const q = new TriggerQueue<number>();
        let model: ModelTrigger[] = [];
        let seq = 0;
        for (const o of ops) {
          if (o.t === 'set') {
            // A moved trigger keeps its seq (a replaced stop keeps its arrival order); a new one gets the next.
            const old = model.find((m) => m.item === o.item);
            const s = old?.seq ?? ++seq;
            model = model.filter((m) => m.item !== o.item);
            model.push({ item: o.item, price: o.price, rising: o.rising, seq: s });
            q.set(o.item, o.price, o.rising, s);
          } else if (o.t === 'remove') {
            model = model.filter((m) => m.item !== o.item);
            q.remove(o.item);
          } else {
            const crossed = (m: ModelTrigger) => (m.rising ? o.mark >= m.price : o.mark <= m.price);
            const expected = model.filter(crossed).sort((a, b) => a.seq - b.seq).map((m) => m.item);
            model = model.filter((m) => !crossed(m));
            assert.deepEqual(q.takeDue(o.mark), expected);
          }
          assert.equal(q.size, model.length);
        }
        for (const m of model) assert.deepEqual(q.keyOf(m.item), { price: m.price, rising: m.rising, seq: m.seq });
      }),
      { numRuns: 300 },
    );
  });

  it('keeps memory to the live triggers when most are removed before any tick', () => {
    const q = new TriggerQueue<number>();
    for (let i = 0; i < 10_000; i++) q.set(i, i, i % 2 === 0, i + 1);
    for (let i = 0; i < 9_990; i++) q.remove(i);
    const heaps = q as unknown as { rising: unknown[]; falling: unknown[] };
    assert.ok(heaps.rising.length + heaps.falling.length < 200, `${heaps.rising.length + heaps.falling.length} entries held for 10 live`);
    // Even items rise (fire at mark ≥ price), odd ones fall (fire at mark ≤ price).
    assert.deepEqual(q.takeDue(Number.MAX_SAFE_INTEGER), [9_990, 9_992, 9_994, 9_996, 9_998]);
    assert.deepEqual(q.takeDue(0), [9_991, 9_993, 9_995, 9_997, 9_999]);
    assert.equal(q.size, 0);
  });
});
