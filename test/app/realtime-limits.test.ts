// The websocket abuse limits as an operator sets them: production defaults from src/app/config.ts, and the
// WS_* variables reaching the started exchange's websocket (per-address cap → 429, subscribe burst → 111).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { ConfigError, loadConfig } from '../../src/app/config.js';
import { RawClient, waitFor } from '../realtime/helpers.js';
import { startTestExchange, type TestExchange } from './client.js';

test('config: every websocket limit is on by default and set by its variable (0 = off)', () => {
  const d = loadConfig({}).wsLimits;
  assert.ok(d.maxConnections > 0 && d.maxConnectionsPerIp > 0 && d.maxRefusalsPerMinute > 0);
  for (const r of [d.connectsPerIp, d.messages, d.subscribes, d.histories]) assert.ok(r.perSecond > 0 && r.burst > 0, JSON.stringify(r));
  const set = loadConfig({
    WS_MAX_CONNECTIONS: '7', WS_MAX_CONNECTIONS_PER_IP: '0', WS_CONNECTS_PER_IP_PER_SEC: '3', WS_CONNECTS_PER_IP_BURST: '4',
    WS_MESSAGES_PER_SEC: '5', WS_MESSAGES_BURST: '6', WS_SUBSCRIBES_PER_SEC: '8', WS_SUBSCRIBES_BURST: '9',
    WS_HISTORY_PER_SEC: '10', WS_HISTORY_BURST: '11', WS_MAX_REFUSALS_PER_MIN: '12',
  }).wsLimits;
  assert.deepEqual(set, {
    maxConnections: 7, maxConnectionsPerIp: 0, connectsPerIp: { perSecond: 3, burst: 4 }, messages: { perSecond: 5, burst: 6 },
    subscribes: { perSecond: 8, burst: 9 }, histories: { perSecond: 10, burst: 11 }, maxRefusalsPerMinute: 12,
  });
  assert.throws(() => loadConfig({ WS_SUBSCRIBES_BURST: '0' }), ConfigError);
  assert.throws(() => loadConfig({ WS_MAX_CONNECTIONS: '-1' }), ConfigError);
});

describe('websocket limits on a started exchange', () => {
  let X: TestExchange;
  before(async () => {
    X = await startTestExchange({ WS_MAX_CONNECTIONS_PER_IP: '2', WS_SUBSCRIBES_BURST: '2' });
  });
  after(async () => {
    await X?.stop();
  });

  // Each test connects from its own loopback address (Linux routes 127.0.0.0/8 to lo), the per-address count
  // of one test is not disturbed by sockets of another still closing.
  test('WS_MAX_CONNECTIONS_PER_IP: the third connection from one address is refused with 429, not from another', async () => {
    const from = { localAddress: '127.0.0.2' };
    const a = new RawClient(X.ex.wsUrl, { ws: from });
    const b = new RawClient(X.ex.wsUrl, { ws: from });
    const elsewhere = new RawClient(X.ex.wsUrl, { ws: { localAddress: '127.0.0.3' } });
    try {
      await waitFor(() => [a, b, elsewhere].every((c) => c.reply(1) !== undefined), 3000, 'three connected');
      const status = await new Promise<number | 'open'>((resolve, reject) => {
        const ws = new WebSocket(X.ex.wsUrl, from);
        ws.once('open', () => {
          ws.close();
          resolve('open');
        });
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.once('error', reject);
      });
      assert.equal(status, 429);
    } finally {
      for (const c of [a, b, elsewhere]) c.ws.close();
    }
  });

  test('WS_SUBSCRIBES_BURST: subscribes beyond the burst get 111 "too many requests"', async () => {
    const raw = new RawClient(X.ex.wsUrl, { ws: { localAddress: '127.0.0.4' } });
    await waitFor(() => raw.reply(1) !== undefined, 3000, 'connected');
    try {
      const ch = (n: string) => `${X.ex.channelPrefix}${n}`;
      raw.ws.send(['heartbeat', 'info', 'instruments'].map((n, i) => JSON.stringify({ id: i + 2, subscribe: { channel: ch(n) } })).join('\n'));
      await waitFor(() => [2, 3, 4].every((id) => raw.reply(id) !== undefined));
      assert.equal(raw.reply(2)!.error, undefined);
      assert.equal(raw.reply(3)!.error, undefined);
      assert.deepEqual(raw.reply(4)!.error, { code: 111, message: 'too many requests', temporary: true });
    } finally {
      raw.ws.close();
    }
  });
});
