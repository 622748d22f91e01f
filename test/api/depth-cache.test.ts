// The depth route renders once per (engine seq, instrument, maxLevel, roundPrice, marketLevel).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildServer } from '../../src/api/server.js';
import type { DepthView } from '../../src/engine/records.js';
import { FakeEngine, makeDeps, NOW } from './fakes.js';

class CountingEngine extends FakeEngine {
  builds = 0;
  askQuantity = 1e8;
  override depth(instrument: string, maxLevel: number): DepthView | undefined {
    this.builds++;
    const d = super.depth(instrument, maxLevel);
    return d && { ...d, asks: d.asks.map((l, i) => (i === 0 ? { ...l, quantity: this.askQuantity } : l)) };
  }
}

test('depth responses are reused until the engine applies a command, then rebuilt', async () => {
  const engine = new CountingEngine();
  const { deps } = makeDeps({ engine });
  const app = await buildServer(deps);
  try {
    const get = (q = 'maxLevel=2&roundPrice=0.1') => app.inject({ method: 'GET', url: `/api/market/BTCUSDT/deep?${q}` });
    const a = await get();
    assert.equal(a.statusCode, 200);
    assert.match(String(a.headers['content-type']), /^application\/json/);
    assert.deepEqual(a.json(), {
      t: NOW - 2,
      asks: [{ price: 100001, quantity: 1 }, { price: 100002, quantity: 2 }],
      bids: [{ price: 99998, quantity: 2 }, { price: 99999, quantity: 1 }],
    });
    const b = await get();
    assert.equal(b.body, a.body);
    assert.equal(engine.builds, 1);

    // Other parameters are other entries.
    assert.equal((await get('maxLevel=1&roundPrice=0.1')).json().asks.length, 1);
    assert.equal((await get('marketLevel=1')).json().bids.length, 1);
    assert.equal(engine.builds, 3);

    // A command changes the book: the next read sees it.
    engine.askQuantity = 5e8;
    engine.seq = 1;
    assert.equal((await get()).json().asks[0].quantity, 5);
    assert.equal(engine.builds, 4);

    // Unknown instruments are still refused, cached or not.
    assert.equal((await app.inject({ method: 'GET', url: '/api/market/NOPE/deep' })).statusCode, 404);
  } finally {
    await app.close();
  }
});
