// Websocket abuse limits: per-connection command rates (error 111, then 3013 for a client that keeps going),
// connection caps in total (503) and per client address (429), the per-address rate of new connections (429),
// and the clientIpOf hook the per-address limits key on. Rates that must not refill during a test are set to a
// token per thousand seconds, so the counts below do not depend on timing.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import type http from 'node:http';
import type { RealtimeLimits } from '../../src/realtime/index.js';
import { PUBLIC, RawClient, client, connected, startServer, waitFor } from './helpers.js';

type Msg = Record<string, any>;
const FROZEN = 0.001; // tokens per second: nothing refills within a test

/** The upgrade's outcome: 'open', or the HTTP status it was refused with. */
function upgrade(url: string, headers: Record<string, string> = {}): Promise<{ status: number | 'open'; ws: WebSocket }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => resolve({ status: 'open', ws }));
    ws.once('unexpected-response', (_req, res) => resolve({ status: res.statusCode ?? 0, ws }));
    ws.once('error', reject);
  });
}

async function connectedRaw(url: string): Promise<RawClient> {
  const raw = new RawClient(url);
  await waitFor(() => raw.reply(1) !== undefined, 3000, 'connect reply');
  return raw;
}

const byHeader = (req: http.IncomingMessage) => (req.headers['x-test-ip'] as string | undefined) ?? req.socket.remoteAddress;

describe('command rates per connection', () => {
  test('subscribe beyond the burst → 111 "too many requests" (temporary); the allowed ones are served', async () => {
    const limits: RealtimeLimits = { subscribes: { perSecond: FROZEN, burst: 3 } };
    const { rt, url } = await startServer({ limits });
    const raw = await connectedRaw(url);
    try {
      raw.ws.send([2, 3, 4, 5, 6].map((id) => JSON.stringify({ id, subscribe: { channel: `${PUBLIC}-${id}` } })).join('\n'));
      await waitFor(() => [2, 3, 4, 5, 6].every((id) => raw.reply(id) !== undefined));
      for (const id of [2, 3, 4]) assert.equal(raw.reply(id)!.error, undefined, JSON.stringify(raw.reply(id)));
      for (const id of [5, 6]) assert.deepEqual(raw.reply(id)!.error, { code: 111, message: 'too many requests', temporary: true });
      // Other commands are not subscribes: still served.
      raw.send({ id: 7, unsubscribe: { channel: `${PUBLIC}-2` } });
      await waitFor(() => raw.reply(7) !== undefined);
      assert.equal(raw.reply(7)!.error, undefined);
      assert.equal(raw.closeCode, 0);
    } finally {
      raw.ws.close();
      await rt.close();
    }
  });

  test('history beyond the burst → 111; every message counts against the message rate', async () => {
    const limits: RealtimeLimits = { histories: { perSecond: FROZEN, burst: 2 }, messages: { perSecond: FROZEN, burst: 8 } };
    const { rt, url } = await startServer({ limits, historyFor: () => ({ size: 10, ttlMs: 60_000 }) });
    const raw = await connectedRaw(url); // message 1
    try {
      raw.send({ id: 2, subscribe: { channel: PUBLIC } });
      await waitFor(() => raw.reply(2) !== undefined);
      raw.ws.send([3, 4, 5].map((id) => JSON.stringify({ id, history: { channel: PUBLIC, limit: 1 } })).join('\n'));
      await waitFor(() => [3, 4, 5].every((id) => raw.reply(id) !== undefined));
      assert.ok((raw.reply(3) as Msg).history && (raw.reply(4) as Msg).history);
      assert.equal((raw.reply(5) as Msg).error?.code, 111);
      // Messages so far: 5 of 8. Pongs count too; the 9th message is refused whatever it is.
      raw.ws.send(['{}', '{}', JSON.stringify({ id: 6, unsubscribe: { channel: PUBLIC } }), JSON.stringify({ id: 7, unsubscribe: { channel: PUBLIC } })].join('\n'));
      await waitFor(() => raw.reply(7) !== undefined);
      assert.equal(raw.reply(6)!.error, undefined);
      assert.equal((raw.reply(7) as Msg).error?.code, 111);
    } finally {
      raw.ws.close();
      await rt.close();
    }
  });

  test('a client that keeps going after its refusals is disconnected with 3013 (push and close frame)', async () => {
    const limits: RealtimeLimits = { subscribes: { perSecond: FROZEN, burst: 1 }, maxRefusalsPerMinute: 3 };
    const { rt, url } = await startServer({ limits });
    const raw = await connectedRaw(url);
    try {
      raw.ws.send([2, 3, 4, 5, 6, 7].map((id) => JSON.stringify({ id, subscribe: { channel: `${PUBLIC}-${id}` } })).join('\n'));
      await raw.closed;
      assert.equal(raw.closeCode, 3013);
      assert.equal(raw.closeReason, 'too many requests');
      assert.deepEqual([3, 4, 5].map((id) => (raw.reply(id) as Msg).error?.code), [111, 111, 111]);
      assert.equal(raw.reply(6), undefined);
      const push = raw.messages.find((m) => (m as Msg).push?.disconnect) as Msg;
      assert.deepEqual(push.push.disconnect, { code: 3013, reason: 'too many requests', reconnect: true });
      await waitFor(() => rt.stats.connections === 0 && rt.stats.subscriptions === 0);
    } finally {
      await rt.close();
    }
  });

  test('the centrifuge client retries a subscribe refused with 111 and gets it once the rate allows', async () => {
    const limits: RealtimeLimits = { subscribes: { perSecond: 5, burst: 1 } };
    const { rt, url } = await startServer({ limits });
    const c = client(url, { minResubscribeDelay: 50, maxResubscribeDelay: 200 });
    try {
      c.connect();
      await connected(c);
      const first = c.newSubscription(`${PUBLIC}-a`);
      const second = c.newSubscription(`${PUBLIC}-b`);
      const errors: number[] = [];
      second.on('error', (ctx) => errors.push(ctx.error.code));
      first.subscribe();
      second.subscribe();
      await waitFor(() => first.state === 'subscribed' && second.state === 'subscribed', 5000, 'both subscribed');
      assert.ok(errors.includes(111), `a 111 was seen: ${errors}`);
    } finally {
      c.disconnect();
      await rt.close();
    }
  });
});

describe('connection caps and the per-address connection rate', () => {
  test('per address: the connection beyond the cap is refused with 429; other addresses are not', async () => {
    const { rt, url } = await startServer({ limits: { maxConnectionsPerIp: 2 }, clientIpOf: byHeader });
    const open: WebSocket[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const r = await upgrade(url, { 'x-test-ip': '10.0.0.1' });
        assert.equal(r.status, 'open');
        open.push(r.ws);
      }
      assert.equal((await upgrade(url, { 'x-test-ip': '10.0.0.1' })).status, 429);
      const other = await upgrade(url, { 'x-test-ip': '10.0.0.2' });
      assert.equal(other.status, 'open');
      open.push(other.ws);
      // A closed connection frees its place.
      open.shift()!.close();
      await waitFor(() => rt.stats.connections === 2, 3000, 'close seen by the server');
      const again = await upgrade(url, { 'x-test-ip': '10.0.0.1' });
      assert.equal(again.status, 'open');
      open.push(again.ws);
    } finally {
      for (const ws of open) ws.close();
      await rt.close();
    }
  });

  test('in total: the connection beyond the cap is refused with 503', async () => {
    const { rt, url } = await startServer({ limits: { maxConnections: 2 }, clientIpOf: byHeader });
    const open: WebSocket[] = [];
    try {
      for (const ip of ['10.0.0.1', '10.0.0.2']) {
        const r = await upgrade(url, { 'x-test-ip': ip });
        assert.equal(r.status, 'open');
        open.push(r.ws);
      }
      assert.equal((await upgrade(url, { 'x-test-ip': '10.0.0.3' })).status, 503);
    } finally {
      for (const ws of open) ws.close();
      await rt.close();
    }
  });

  test('new connections per address beyond the burst → 429, even with none open', async () => {
    const { rt, url } = await startServer({ limits: { connectsPerIp: { perSecond: FROZEN, burst: 2 } }, clientIpOf: byHeader });
    try {
      for (let i = 0; i < 2; i++) {
        const r = await upgrade(url, { 'x-test-ip': '10.0.0.1' });
        assert.equal(r.status, 'open');
        r.ws.close();
      }
      await waitFor(() => rt.stats.connections === 0, 3000, 'closed');
      assert.equal((await upgrade(url, { 'x-test-ip': '10.0.0.1' })).status, 429);
      const other = await upgrade(url, { 'x-test-ip': '10.0.0.2' });
      assert.equal(other.status, 'open');
      other.ws.close();
    } finally {
      await rt.close();
    }
  });
});
