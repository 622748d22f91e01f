/**
 * command-context.ts: what a command changed is emitted once, in its final state, at the end of the command,
 * with updatedAt strictly increasing per entity even when commands share a timestamp.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Harness, U } from './harness.js';
import type { EngineEvent } from '../../src/engine/records.js';

const ofType = <T extends EngineEvent['type']>(events: EngineEvent[], type: T) => events.filter((e) => e.type === type) as Array<Extract<EngineEvent, { type: T }>>;

test('an order changed twice in one command is emitted once, in its final state', () => {
  const h = new Harness();
  h.deposit(1, '100000');
  h.deposit(2, '100000');
  h.order(1, { side: 'SELL', qty: '0.01', price: '100000' });
  h.order(1, { side: 'SELL', qty: '0.01', price: '100010' });
  // One taker fills against two makers: the taker is touched by both fills.
  const r = h.place(2, { side: 'BUY', qty: '0.02', price: '100010' });
  const orders = ofType(r.events, 'order').map((e) => e.order);
  assert.equal(new Set(orders.map((o) => o.id)).size, orders.length, 'each order once');
  const taker = orders.find((o) => o.userId === 2)!;
  assert.equal(taker.status, 'FILLED');
  assert.equal(taker.filledQuantity, U('0.02'));
  assert.equal(ofType(r.events, 'book').length, 1, 'the book once');
  assert.equal(ofType(r.events, 'position').length, 2, 'one position per user');
});

test('updatedAt strictly increases per entity across commands with the same ts', () => {
  const h = new Harness();
  h.deposit(1, '100000');
  const placed = h.order(1, { side: 'BUY', qty: '0.01', price: '99000' });
  const seen = [placed.updatedAt];
  for (let i = 0; i < 3; i++) {
    const r = h.run({ kind: 'order.replace', userId: 1, replace: { orderId: placed.id, quantity: U('0.01'), limitPrice: U(String(99001 + i)) } }, 0);
    assert.ok(r.reply.ok);
    seen.push(ofType(r.events, 'order')[0].order.updatedAt);
  }
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i] > seen[i - 1], `updatedAt ${seen.join(', ')}`);
});

test('a closed position is reported once with quantity 0, then a new fill opens a new one', () => {
  const h = new Harness();
  h.deposit(1, '100000');
  h.deposit(2, '100000');
  h.order(1, { side: 'SELL', qty: '0.01', price: '100000' });
  const opened = ofType(h.place(2, { side: 'BUY', qty: '0.01', price: '100000' }).events, 'position').find((e) => e.position.userId === 2)!.position;
  h.order(1, { side: 'BUY', qty: '0.01', price: '100000' });
  const closed = ofType(h.place(2, { side: 'SELL', qty: '0.01', price: '100000' }).events, 'position').find((e) => e.position.userId === 2)!.position;
  assert.equal(closed.id, opened.id);
  assert.equal(closed.quantity, 0);
  assert.deepEqual(h.engine.positions(2), []);
  h.order(1, { side: 'SELL', qty: '0.01', price: '100000' });
  const again = ofType(h.place(2, { side: 'BUY', qty: '0.01', price: '100000' }).events, 'position').find((e) => e.position.userId === 2)!.position;
  assert.notEqual(again.id, opened.id);
});
