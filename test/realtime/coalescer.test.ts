// Coalescer and heartbeat on node:test's mock clock: exactly which publications an interval lets out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CoalescingPublisher, Heartbeat } from '../../src/realtime/index.js';

test('1,000 rapid schedules in one interval → 2 publications: the first at once, then the final state', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const published: [string, unknown][] = [];
  const co = new CoalescingPublisher((ch, data) => published.push([ch, data]), { intervalMs: 50 });
  let produced = 0;
  for (let i = 0; i < 1000; i++) {
    co.schedule('book', () => {
      produced++;
      return { i };
    });
  }
  assert.deepEqual(published, [['book', { i: 0 }]], 'a lone change goes out at once; the rest wait for the interval');
  t.mock.timers.tick(49);
  assert.equal(published.length, 1, 'nothing before the interval ends');
  t.mock.timers.tick(1);
  assert.deepEqual(published, [['book', { i: 0 }], ['book', { i: 999 }]]);
  t.mock.timers.tick(500);
  assert.equal(published.length, 2, 'nothing more without a change');
  assert.equal(produced, 2, 'states are built only when published');
  co.close();
});

test('coalescer: channels are independent; a lone change goes out at once', async () => {
  const published: [string, unknown][] = [];
  const co = new CoalescingPublisher((ch, data) => published.push([ch, data]), { intervalMs: 30 });
  co.schedule('a', () => 1);
  co.schedule('b', () => 2);
  assert.deepEqual(published, [['a', 1], ['b', 2]]);
  co.schedule('a', () => 3);
  co.flush();
  assert.deepEqual(published.at(-1), ['a', 3]);
  co.close();
});

test('heartbeat publishes { t } every period, and nothing once stopped', (t) => {
  t.mock.timers.enable({ apis: ['setInterval', 'Date'], now: 1_000 });
  const beats: { t: number }[] = [];
  const hb = new Heartbeat((_ch, data) => beats.push(data as { t: number }), 'env:heartbeat', 20);
  hb.start();
  // In 10 ms steps: the mock clock shows a tick's end time to every timer that tick fires.
  for (let i = 0; i < 11; i++) t.mock.timers.tick(10);
  hb.stop();
  assert.deepEqual(beats, [{ t: 1_020 }, { t: 1_040 }, { t: 1_060 }, { t: 1_080 }, { t: 1_100 }]);
  t.mock.timers.tick(100);
  assert.equal(beats.length, 5);
});
