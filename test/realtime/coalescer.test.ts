import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CoalescingPublisher, Heartbeat } from '../../src/realtime/index.js';
import { sleep } from './helpers.js';

test('1,000 rapid schedules in one interval → ≤ 2 publications, the last is the final state', async () => {
  const published: [string, unknown][] = [];
  const co = new CoalescingPublisher((ch, data) => published.push([ch, data]), { intervalMs: 50 });
  let produced = 0;
  for (let i = 0; i < 1000; i++) {
    co.schedule('book', () => {
      produced++;
      return { i };
    });
  }
  await sleep(120);
  assert.ok(published.length <= 2 && published.length >= 1, `published ${published.length}`);
  assert.deepEqual(published.at(-1), ['book', { i: 999 }]);
  assert.equal(produced, published.length, 'states are built only when published');
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

test('heartbeat publishes { t } periodically', async () => {
  const beats: { t: number }[] = [];
  const hb = new Heartbeat((_ch, data) => beats.push(data as { t: number }), 'env:heartbeat', 20);
  hb.start();
  await sleep(110);
  hb.stop();
  assert.ok(beats.length >= 3, `beats ${beats.length}`);
  assert.ok(beats.every((b, i) => typeof b.t === 'number' && (i === 0 || b.t >= beats[i - 1].t)));
});
