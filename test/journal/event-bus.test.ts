import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EventBatch } from '../../src/engine/commands.js';
import { InProcessEventBroker } from '../../src/sequencer/event-bus.js';
import { silentLogger } from './helpers.js';

const batch = (seq: number): EventBatch => ({ seq, ts: seq, kind: 'matcher.state', events: [] });

test('every subscriber gets every batch in order; a throwing one does not disturb the others', async () => {
  const bus = new InProcessEventBroker({ logger: silentLogger });
  const a: number[] = [];
  const thrower: number[] = [];
  bus.subscribe('a', (b) => void a.push(b.seq));
  bus.subscribe('thrower', (b) => {
    thrower.push(b.seq);
    if (b.seq % 2) throw new Error('boom');
  });
  for (let i = 1; i <= 10; i++) assert.doesNotThrow(() => bus.publish(batch(i)));
  assert.deepEqual(a, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  assert.deepEqual(thrower, a);
});

test('a slow async subscriber keeps its order without holding up publish or others', async () => {
  const bus = new InProcessEventBroker({ logger: silentLogger });
  const slow: number[] = [];
  const fast: number[] = [];
  bus.subscribe('slow', async (b) => {
    await new Promise((r) => setTimeout(r, b.seq % 3));
    if (b.seq === 4) throw new Error('async boom');
    slow.push(b.seq);
  });
  bus.subscribe('fast', (b) => void fast.push(b.seq));
  for (let i = 1; i <= 20; i++) bus.publish(batch(i));
  assert.equal(fast.length, 20);
  assert.ok(slow.length < 20);
  await bus.drain();
  assert.deepEqual(slow, Array.from({ length: 20 }, (_, i) => i + 1).filter((s) => s !== 4));
});

test('a subscriber that lags past maxQueue is detached and told where it stopped', async () => {
  const bus = new InProcessEventBroker({ logger: silentLogger });
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let overflowAt = -1;
  const got: number[] = [];
  bus.subscribe('stuck', async (b) => {
    got.push(b.seq);
    await gate;
  }, { maxQueue: 5, onOverflow: (seq) => (overflowAt = seq) });
  for (let i = 1; i <= 10; i++) bus.publish(batch(i));
  assert.equal(overflowAt, 0, 'nothing was completely handled yet');
  release();
  await bus.drain();
  bus.publish(batch(11));
  assert.deepEqual(got, [1], 'detached: no more deliveries');
});

test('unsubscribe stops delivery', () => {
  const bus = new InProcessEventBroker({ logger: silentLogger });
  const got: number[] = [];
  const sub = bus.subscribe('x', (b) => void got.push(b.seq));
  bus.publish(batch(1));
  sub.unsubscribe();
  bus.publish(batch(2));
  assert.deepEqual(got, [1]);
});
