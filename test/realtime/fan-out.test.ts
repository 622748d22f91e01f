// The outgoing path: websocket frames built once per distinct queue, and the flush scheduler's
// order, slicing and write delay.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import * as wsModule from 'ws';
import { FrameBuilder, encodeTextFrame } from '../../src/realtime/frame-builder.js';
import { FlushScheduler } from '../../src/realtime/flush-scheduler.js';
import { waitFor } from './helpers.js';

// ws's own frame parser, client side (server frames are unmasked); not in @types/ws.
type ReceiverLike = EventEmitter & { write(chunk: Buffer): void };
const Receiver = (wsModule as unknown as { Receiver: new (o: object) => ReceiverLike }).Receiver;

function decode(frame: Buffer): string[] {
  const r = new Receiver({ isServer: false, allowSynchronousEvents: true });
  const messages: string[] = [];
  r.on('message', (data: Buffer, isBinary: boolean) => {
    assert.equal(isBinary, false);
    messages.push(data.toString());
  });
  r.on('error', (err: Error) => assert.fail(err));
  r.write(frame);
  return messages;
}

test('text frames decode with ws at every length encoding, messages newline-joined', () => {
  for (const len of [0, 1, 125, 126, 127, 65_535, 65_536, 70_000]) {
    const body = Buffer.alloc(len, 'a');
    assert.deepEqual(decode(encodeTextFrame([body])), [body.toString()], `length ${len}`);
  }
  // 62 + 1 + 62 = 125 and 126 bytes: the join is counted in the length.
  const a = Buffer.alloc(62, 'x');
  assert.deepEqual(decode(encodeTextFrame([a, a])), [`${a}\n${a}`]);
  const b = Buffer.alloc(63, 'y');
  assert.deepEqual(decode(encodeTextFrame([a, b])), [`${a}\n${b}`]);
});

test('frame builder: the same queued buffers reuse one frame; other buffers or order do not', () => {
  const fb = new FrameBuilder();
  const p1 = Buffer.from('{"push":1}');
  const p2 = Buffer.from('{"push":2}');
  const f = fb.build([p1, p2]);
  assert.equal(fb.build([p1, p2]), f, 'same buffers, same frame object');
  assert.deepEqual(decode(f), ['{"push":1}\n{"push":2}']);
  const swapped = fb.build([p2, p1]);
  assert.notEqual(swapped, f);
  assert.deepEqual(decode(swapped), ['{"push":2}\n{"push":1}']);
  // Equal bytes in another buffer are a different message (a reply built for one connection).
  const copy = fb.build([p1, Buffer.from('{"push":2}')]);
  assert.notEqual(copy, f);
  assert.deepEqual(decode(fb.build([p1])), ['{"push":1}']);
  assert.equal(fb.built, 4);
  assert.equal(fb.reused, 1);
});

function recorder(log: string[], name: string) {
  return { flush: () => log.push(name) };
}

test('flush scheduler: FIFO, once each; the pass yields to the event loop between slices', async () => {
  const flusher = new FlushScheduler(0);
  const log: string[] = [];
  for (let i = 0; i < 600; i++) flusher.add(recorder(log, `c${i}`));
  assert.equal(log.length, 0, 'nothing written synchronously');
  // Queued after the scheduler's first slice: runs between that slice and the next.
  let seenBetween = -1;
  setImmediate(() => (seenBetween = log.length));
  await waitFor(() => log.length >= 600);
  assert.deepEqual(log, Array.from({ length: 600 }, (_, i) => `c${i}`));
  assert.ok(seenBetween > 0 && seenBetween < 600, `other callbacks ran mid-pass (after ${seenBetween})`);
  // A connection queued again after its turn is written again.
  flusher.add(recorder(log, 'again'));
  await new Promise((r) => setImmediate(r));
  assert.equal(log.at(-1), 'again');
  flusher.stop();
});

test('flush scheduler: a write delay holds each connection that long from its first message', async () => {
  const flusher = new FlushScheduler(30);
  const at: Record<string, number> = {};
  const t0 = performance.now();
  flusher.add({ flush: () => (at.first = performance.now() - t0) });
  await new Promise((r) => setTimeout(r, 15));
  flusher.add({ flush: () => (at.second = performance.now() - t0) });
  await waitFor(() => at.second !== undefined);
  assert.ok(at.first >= 29, `first after ${at.first} ms`);
  assert.ok(at.second >= 44, `second after ${at.second} ms`);
  assert.ok(at.first < at.second);
  flusher.stop();
});
