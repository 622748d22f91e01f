/**
 * Slow and silent clients against the real HTTP server (raw sockets): every stage of a request has a deadline
 * (src/api/deps.ts HttpTimeouts), so a client cannot hold a connection by sending slowly or not at all. The
 * deadlines here are short; the defaults are seconds. Each test allows a generous margin before calling the
 * connection "never closed" (without the deadlines Node would wait 60 s for headers and forever for a body).
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, test } from 'node:test';
import { Centrifuge } from 'centrifuge';
import WebSocket from 'ws';
import { http, startTestExchange, type TestExchange } from './client.js';

const GIVE_UP_MS = 8000;

const running: TestExchange[] = [];
after(async () => {
  await Promise.all(running.map((x) => x.stop()));
});

async function start(env: Record<string, string>): Promise<{ url: string; port: number; x: TestExchange }> {
  const x = await startTestExchange(env);
  running.push(x);
  return { url: x.url, port: Number(new URL(x.url).port), x };
}

/** Runs `client` on a raw connection until the server closes it; what the server sent. Fails after GIVE_UP_MS. */
function untilServerCloses(port: number, client: (socket: Socket) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = '';
    const socket = connect(port, '127.0.0.1', () => client(socket));
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server still held the connection after ${GIVE_UP_MS} ms; received ${JSON.stringify(received)}`));
    }, GIVE_UP_MS);
    socket.on('data', (d: Buffer) => void (received += d.toString('latin1')));
    socket.on('error', () => undefined); // a reset is a close too
    socket.on('close', () => {
      clearTimeout(giveUp);
      resolve(received);
    });
  });
}

/** Writes `text` a byte at a time every `everyMs` until the socket closes (never finishes on its own). */
function trickle(socket: Socket, text: string, everyMs = 25): void {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || !socket.writable) return clearInterval(timer);
    socket.write(text[i++ % text.length]!);
  }, everyMs);
  socket.on('close', () => clearInterval(timer));
}

function assertTimeoutAnswer(received: string): void {
  const [head, body] = received.split('\r\n\r\n');
  assert.match(head ?? '', /^HTTP\/1\.1 408 /, received);
  assert.deepEqual(JSON.parse(body ?? ''), { error: { code: 'REQUEST_TIMEOUT', message: 'The request did not arrive in time' } });
}

test('headers sent slowly (slowloris) are cut off at HTTP_HEADERS_TIMEOUT_MS with 408 REQUEST_TIMEOUT', async () => {
  const { port } = await start({ HTTP_HEADERS_TIMEOUT_MS: '300', HTTP_REQUEST_TIMEOUT_MS: '5000' });
  const received = await untilServerCloses(port, (s) => trickle(s, `GET /api/ping HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(10_000)}`));
  assertTimeoutAnswer(received);
  // A connection that never sends anything is closed the same way.
  assertTimeoutAnswer(await untilServerCloses(port, () => undefined));
});

test('a body that never finishes is cut off at HTTP_REQUEST_TIMEOUT_MS, trickling or stalled', async () => {
  const { port, url } = await start({ HTTP_HEADERS_TIMEOUT_MS: '300', HTTP_REQUEST_TIMEOUT_MS: '600' });
  const head = 'POST /auth/user/sign-up HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"wallet":"';
  assertTimeoutAnswer(await untilServerCloses(port, (s) => {
    s.write(head);
    trickle(s, '0');
  }));
  assertTimeoutAnswer(await untilServerCloses(port, (s) => s.write(head)));
  // Whole requests are still served.
  assert.equal((await http(url, 'GET', '/api/ping')).status, 200);
});

test('a connection with a request open and no traffic is closed at HTTP_CONNECTION_TIMEOUT_MS', async () => {
  const { port } = await start({ HTTP_HEADERS_TIMEOUT_MS: '60000', HTTP_REQUEST_TIMEOUT_MS: '60000', HTTP_CONNECTION_TIMEOUT_MS: '300' });
  await untilServerCloses(port, (s) => s.write('POST /auth/user/sign-up HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{'));
});

test('an idle keep-alive connection is closed at HTTP_KEEP_ALIVE_TIMEOUT_MS; requests within it are served', async () => {
  const { port } = await start({ HTTP_HEADERS_TIMEOUT_MS: '300', HTTP_KEEP_ALIVE_TIMEOUT_MS: '300' });
  const received = await untilServerCloses(port, (s) => s.write('GET /api/ping HTTP/1.1\r\nHost: x\r\n\r\nGET /api/ping HTTP/1.1\r\nHost: x\r\n\r\n'));
  assert.equal(received.match(/HTTP\/1\.1 200 /g)?.length, 2, received);
});

test('HTTP_BODY_LIMIT: a larger body is refused with 413 PAYLOAD_TOO_LARGE', async () => {
  const { url } = await start({ HTTP_BODY_LIMIT: '1000' });
  const res = await http(url, 'POST', '/auth/user/sign-up', { wallet: 'x'.repeat(2000) });
  assert.equal(res.status, 413, JSON.stringify(res.body));
  assert.equal(res.body.error.code, 'PAYLOAD_TOO_LARGE');
  assert.match(res.body.error.message, /1000 bytes/);
});

test('websocket connections are not cut by the HTTP deadlines', async () => {
  const short = { HTTP_HEADERS_TIMEOUT_MS: '200', HTTP_REQUEST_TIMEOUT_MS: '300', HTTP_CONNECTION_TIMEOUT_MS: '300', HTTP_KEEP_ALIVE_TIMEOUT_MS: '300' };
  const { x } = await start({ ...short, HEARTBEAT_MS: '500' });
  const c = new Centrifuge(x.ex.wsUrl, { websocket: WebSocket });
  let disconnects = 0;
  c.on('disconnected', () => void disconnects++);
  const sub = c.newSubscription(`${x.ex.channelPrefix}heartbeat`);
  let beats = 0;
  // Heartbeats 500 ms apart: the connection sits idle longer than every HTTP deadline, four times over.
  const heard = new Promise<void>((resolve) => sub.on('publication', () => void (++beats === 4 && resolve())));
  sub.subscribe();
  c.connect();
  try {
    await heard;
    assert.equal(disconnects, 0);
    assert.equal(c.state, 'connected');
  } finally {
    c.disconnect();
  }
});
