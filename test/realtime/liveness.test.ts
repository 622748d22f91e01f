// Server pings, pong timeout, slow consumers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PublicationContext } from 'centrifuge';
import { PUBLIC, RawClient, client, connected, sleep, startServer, subscribed, waitFor } from './helpers.js';

test('server pings: a ponging client stays, a silent one is dropped with 3012', async () => {
  const { rt, url } = await startServer({ pingIntervalMs: 100, pongTimeoutMs: 80 });
  const c = client(url);
  let connects = 0;
  c.on('connected', () => connects++);
  c.connect();
  await connected(c);
  const ponger = new RawClient(url, { autoPong: true });
  const silent = new RawClient(url);
  await silent.closed;
  assert.equal(silent.closeCode, 3012);
  assert.equal(silent.closeReason, 'no pong');
  await waitFor(() => ponger.messages.filter((m) => Object.keys(m).length === 0).length >= 3, 10_000, 'three pings answered');
  assert.equal(ponger.ws.readyState, ponger.ws.OPEN);
  assert.equal(c.state, 'connected');
  assert.equal(connects, 1);
  ponger.ws.close();
  c.disconnect();
  await rt.close();
});

test('no connect command in time → 3502 stale', async () => {
  const { rt, url } = await startServer({ connectTimeoutMs: 100 });
  const raw = new RawClient(url, { connect: false });
  await raw.closed;
  assert.equal(raw.closeCode, 3502);
  await rt.close();
});

test('slow consumer is disconnected (3008), a normal client keeps receiving', async () => {
  const { rt, url } = await startServer({ maxQueueBytes: 1024 * 1024, slowTerminateMs: 100 });
  const c = client(url);
  c.connect();
  const sub = c.newSubscription(PUBLIC);
  let received = 0;
  let ordered = true;
  sub.on('publication', (ctx: PublicationContext) => {
    const d = ctx.data as { i: number };
    if (d.i !== received) ordered = false;
    received++;
  });
  sub.subscribe();
  await subscribed(sub);

  const slow = new RawClient(url);
  await waitFor(() => slow.reply(1) !== undefined);
  slow.send({ id: 2, subscribe: { channel: PUBLIC } });
  await waitFor(() => slow.reply(2) !== undefined);
  // Stop reading: the kernel buffers fill, then the server's queue.
  (slow.ws as unknown as { _socket: { pause(): void } })._socket.pause();

  const pad = 'x'.repeat(32 * 1024);
  const N = 600; // ~20 MB, beyond loopback socket buffers
  for (let i = 0; i < N; i++) {
    await rt.publish(PUBLIC, { i, pad });
    if (i % 4 === 3) await sleep(1);
  }
  await waitFor(() => received === N, 10_000, 'normal client receives all');
  assert.ok(ordered);
  assert.equal(rt.stats.slowDisconnects, 1);
  await waitFor(() => rt.stats.connections === 1, 3000, 'slow connection gone');
  assert.equal(c.state, 'connected');
  c.disconnect();
  await rt.close();
});

test('write delay: publications queued within writeDelayMs leave in one frame, in order, to a real client', async () => {
  // A delay far longer than five event-loop turns, however busy the machine.
  const { rt, url } = await startServer({ writeDelayMs: 500 });
  const c = client(url);
  c.connect();
  const sub = c.newSubscription(PUBLIC);
  const got: number[] = [];
  sub.on('publication', (ctx: PublicationContext) => got.push((ctx.data as { i: number }).i));
  sub.subscribe();
  await subscribed(sub);
  // The subscribe reply was written (the client has it); nothing else is queued.
  const frames0 = rt.stats.framesSent;
  for (let i = 0; i < 5; i++) {
    rt.publish(PUBLIC, { i });
    await new Promise((r) => setImmediate(r)); // separate event-loop turns: without the delay, 5 frames
  }
  await waitFor(() => got.length === 5);
  assert.deepEqual(got, [0, 1, 2, 3, 4]);
  assert.equal(rt.stats.framesSent - frames0, 1, 'one frame for the five publications');
  c.disconnect();
  await rt.close();
});

test('adaptive batching: publications queued while other connections are written share their frame, in order', async () => {
  const { rt, url } = await startServer();
  const clients = Array.from({ length: 400 }, () => new RawClient(url));
  await waitFor(() => clients.every((c) => c.reply(1) !== undefined), 10_000, 'connected');
  for (const c of clients) c.send({ id: 2, subscribe: { channel: PUBLIC } });
  await waitFor(() => clients.every((c) => c.reply(2) !== undefined), 10_000, 'subscribed');
  // Every subscribe reply was written (each client has its own); nothing else is queued.
  const frames0 = rt.stats.framesSent;
  const before = clients.map((c) => c.frames.length);
  rt.publish(PUBLIC, { i: 0 });
  // Runs after the first slice of the write pass: the second publication finds the connections
  // not yet written still holding the first one.
  setImmediate(() => rt.publish(PUBLIC, { i: 1 }));
  const pubs = (c: RawClient) =>
    c.messages.filter((m) => m.push !== undefined).map((m) => ((m.push as { pub: { data: { i: number } } }).pub.data.i));
  await waitFor(() => clients.every((c) => pubs(c).length === 2), 10_000, 'both publications everywhere');
  for (const c of clients) assert.deepEqual(pubs(c), [0, 1]);
  const shared = clients.filter((c, k) => c.frames.length - before[k] === 1).length;
  assert.ok(shared > 0 && shared < clients.length, `${shared} clients got both in one frame`);
  assert.equal(rt.stats.framesSent - frames0, 2 * clients.length - shared);
  for (const c of clients) c.ws.close();
  await rt.close();
});
