// Starts the whole exchange in-process (port 0, temp data dir), checks REST + websocket, restarts on the
// same directory and checks the state came back from the journal/snapshot without re-seeding.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/app/config.js';
import { startExchange, type RunningExchange } from '../../src/app/exchange.js';
import { client, connected, subscribed } from '../realtime/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'perpx-app-'));
const config = loadConfig({ PORT: '0', DATA_DIR: dir, SIGNATURE_THREADS: '0', LOG_LEVEL: 'silent', INDEX_FEED: 'off', FUNDING_INTERVAL_MS: '0', HEARTBEAT_MS: '100', MARKET_MAKERS: '0' });

async function getJson(base: string, path: string): Promise<unknown> {
  const res = await fetch(base + path);
  assert.equal(res.status, 200, `${path} → ${res.status}`);
  return res.json();
}

async function instrumentIds(ex: RunningExchange): Promise<string[]> {
  const list = (await getJson(ex.url, '/api/market/instrument')) as Array<{ id: string }>;
  return list.map((i) => i.id).sort();
}

describe('app: start, serve, restart', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));
  let seqAfterFirstRun = 0;
  let firstDemo = '';

  test('first start seeds the demo instruments and serves REST + websocket', async () => {
    const ex = await startExchange(config);
    try {
      const ping = (await getJson(ex.url, '/api/ping')) as { ok?: boolean };
      assert.ok(ping);
      const ids = await instrumentIds(ex);
      assert.ok(ids.includes('BTCUSDT') && ids.includes('ETHUSDT'), `instruments: ${ids.join(',')}`);
      seqAfterFirstRun = ex.engine.seq;
      assert.ok(seqAfterFirstRun >= 2);
      // The demo wallet exists, is funded, and its key signs in to the same account.
      const demo = ex.demoWallet;
      assert.ok(demo, 'demo wallet');
      assert.equal(ex.engine.account(demo.exchangeId).balance, 10_000n * 100_000_000n);
      firstDemo = demo.privateKey;

      // Websocket on the same port: public channel allowed, unknown channel refused, heartbeat arrives.
      const c = client(ex.wsUrl);
      c.connect();
      await connected(c);
      const hb = c.newSubscription(`${ex.channelPrefix}heartbeat`);
      const beat = new Promise<unknown>((r) => hb.once('publication', (p) => r(p.data)));
      hb.subscribe();
      await subscribed(hb);
      const data = (await beat) as { t: number };
      assert.equal(typeof data.t, 'number');
      const bad = c.newSubscription(`${ex.channelPrefix}no-such-channel`);
      bad.subscribe();
      await assert.rejects(subscribed(bad), (e: { code?: number }) => e.code === 102);
      const priv = c.newSubscription(`${ex.channelPrefix}order-1`, { data: { accessToken: 'nope' } });
      priv.subscribe();
      await assert.rejects(subscribed(priv), (e: { code?: number }) => e.code === 103);
      c.disconnect();

      // The OpenAPI document says what every route returns on success (operator routes included).
      const doc = (await getJson(ex.url, '/openapi.json')) as { paths: Record<string, Record<string, { responses: Record<string, { content?: unknown }> }>> };
      const undocumented = Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.entries(ops).filter(([, op]) => !op.responses['200']?.content).map(([method]) => `${method.toUpperCase()} ${path}`));
      assert.deepEqual(undocumented, []);
    } finally {
      await ex.close();
    }
  });

  test('restart on the same data dir: instruments restored, not seeded again', async () => {
    const ex = await startExchange(config);
    try {
      assert.equal(ex.engine.seq, seqAfterFirstRun, 'nothing re-seeded or re-funded');
      assert.equal(ex.demoWallet?.privateKey, firstDemo, 'same demo wallet after restart');
      assert.deepEqual(await instrumentIds(ex), ['BTCUSDT', 'ETHUSDT']);
    } finally {
      await ex.close();
    }
  });
});
