/**
 * Snapshot format of used order ids: written as flat numbers (OrderIdIndex.usedByUser), and snapshots of
 * earlier versions, which list them as [canonical key, day] pairs, still restore to the same state.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { restoreEngine } from '../../src/engine/engine.js';
import { USED_ID_WORDS } from '../../src/engine/order-id-index.js';
import type { StateJson } from '../../src/engine/snapshot.js';
import { Harness } from './harness.js';

function usedIdsHistory(): { h: Harness; cancelled: string[]; live: string } {
  const h = new Harness();
  h.deposit(1, '100000');
  const cancelled: string[] = [];
  for (let i = 0; i < 5; i++) {
    const o = h.order(1, { side: 'BUY', qty: '0.01', price: String(99000 - i * 10) });
    assert.equal(o.status, 'NEW');
    h.ok({ kind: 'order.cancel', userId: 1, orderId: o.id });
    cancelled.push(o.id);
  }
  const liveOrder = h.order(1, { side: 'BUY', qty: '0.01', price: '98000' });
  assert.equal(liveOrder.status, 'NEW');
  const live = liveOrder.id;
  return { h, cancelled, live };
}

describe('snapshot: used order ids', () => {
  it('are written as numbers and restore: a used id stays a duplicate, a live one stays cancellable', () => {
    const { h, cancelled, live } = usedIdsHistory();
    const snap = JSON.parse(JSON.stringify(h.engine.snapshot()));
    const account = (snap.state as StateJson).accounts.find((a) => a.userId === 1)!;
    assert.equal(account.usedIdWords!.length, cancelled.length * USED_ID_WORDS);
    const restored = restoreEngine(snap);
    assert.equal(restored.stateHash(), h.engine.stateHash());
    for (const id of cancelled) assert.equal(restored.hasOrderId(1, id), true);
    const again = restored.apply({ kind: 'order.place', ts: h.ts + 1, userId: 1, order: { id: cancelled[0], instrument: 'BTCUSDT', side: 'BUY', type: 'LIMIT', timeInForce: 'GTC', leverage: 10, quantity: 1_000_000, limitPrice: 8_000_000_000_000 } });
    assert.equal(!again.reply.ok && again.reply.error.code, 'DUPLICATE_ORDER_ID');
    assert.equal(restored.apply({ kind: 'order.cancel', ts: h.ts + 2, userId: 1, orderId: live }).reply.ok, true);
  });

  it('restore from the earlier [key, day] listing gives the same state', () => {
    const { h, cancelled } = usedIdsHistory();
    const snap = JSON.parse(JSON.stringify(h.engine.snapshot()));
    const account = (snap.state as StateJson).accounts.find((a) => a.userId === 1)!;
    // The earlier format: canonical keys (26 lower-case hex digits) with their day.
    account.usedIds = cancelled.map((id) => [id.slice(6).toLowerCase(), Number(id.slice(0, 5))] as [string, number]);
    delete account.usedIdWords;
    const restored = restoreEngine(snap);
    assert.equal(restored.stateHash(), h.engine.stateHash());
    for (const id of cancelled) assert.equal(restored.hasOrderId(1, id), true);
  });
});
