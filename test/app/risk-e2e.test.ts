// End to end through the real server: an admin pushes index prices over HTTP (a normal user is refused),
// a leveraged long gets marginCall in /api/user/me, then is liquidated; the liquidation order, its fill, the
// closed position and the new owner of the position are visible over REST, and the funding-rate channel
// payload has the public shape (docs/api.md).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ExchangeChannels } from '../../src/realtime/channels.js';
import { ALL_TIME, Bot, assertError, eventually, ok, startTestExchange, type TestExchange } from './client.js';

describe('risk lifecycle over HTTP', () => {
  let t: TestExchange;
  before(async () => {
    t = await startTestExchange();
  });
  after(() => t.stop());

  it('admin index push → marginCall → liquidation, visible via REST', async () => {
    const [long, short, bidder, admin] = await Promise.all([0, 1, 2, 3].map(() => new Bot(t.url).signIn()));
    for (const b of [long, short, bidder]) await b.faucet();

    // Index push is admin-only.
    assertError(await admin.post('/api/admin/index-price', { instrument: 'BTCUSDT', price: '99000' }), 403, 'FORBIDDEN');
    await t.ex.auth.setRole(admin.exchangeId, 'admin');
    const push = async (price: string) => ok(await admin.post('/api/admin/index-price', { instrument: 'BTCUSDT', price }), `push ${price}`);
    assertError(await admin.post('/api/admin/index-price', { instrument: 'NOPE', price: '1' }), 404);
    assertError(await admin.post('/api/admin/index-price', { instrument: 'BTCUSDT', price: '-5' }), 400);
    const p = await push('100000');
    assert.equal(p.indexPrice, 100000);

    // 1 BTC long at 100000 with 10000 USDT of collateral (bankruptcy at 90050), liquidity at 90200.
    ok(await short.limit({ side: 'SELL', quantity: '1', limitPrice: '100000', leverage: 20 }), 'short');
    ok(await long.limit({ side: 'BUY', quantity: '1', limitPrice: '100000', leverage: 50 }), 'long');
    const [pos] = await long.positions();
    assert.equal(pos.bankruptcyPrice, 90050);
    assert.equal(((await long.get('/api/user/me')).body as { marginCall: boolean }).marginCall, false);

    await push('90500'); // equity 450, maintenance 402.5: warning only
    assert.equal(((await long.get('/api/user/me')).body as { marginCall: boolean }).marginCall, true);
    assert.equal((await long.positions()).length, 1);
    ok(await bidder.limit({ side: 'BUY', quantity: '1', limitPrice: '90200', leverage: 20 }), 'bid');

    await push('90300'); // equity 250 ≤ maintenance 401.5: liquidated into the 90200 bid
    assert.deepEqual(await long.positions(), []);
    assert.equal(((await long.get('/api/user/me')).body as { marginCall: boolean }).marginCall, false);
    const orders = await eventually(
      async () => ok(await long.get(`/api/order?${ALL_TIME}`)) as { list: Array<Record<string, any>> },
      (v) => v.list.some((o) => o.group === 'liquidation'),
      'liquidation order in the history',
    );
    const liq = orders.list.find((o) => o.group === 'liquidation')!;
    assert.equal(liq.side, 'SELL');
    assert.equal(liq.status, 'FILLED');
    const fills = ok(await long.get(`/api/order/${encodeURIComponent(liq.id)}/fill`)) as { list: Array<Record<string, any>> };
    assert.deepEqual(fills.list.map((f) => [f.fillQuantity, f.fillPrice]), [[1, 90200]]);
    const bal = await long.balance();
    assert.ok(bal.funding.balance >= 0, 'not below zero');
    // bidder now holds the long
    const [bpos] = await bidder.positions();
    assert.equal(bpos.quantity, 1);
  });

  it('funding-rate channel payload: { instrument, fundingRate (string), createdAt (ms) }', () => {
    const sent: Array<[string, unknown]> = [];
    const ch = new ExchangeChannels({
      env: 'futures-perp-dev', engine: t.ex.engine, publisher: { publish: (c, d) => void sent.push([c, d]), hasSubscribers: () => true },
    });
    ch.onBatch({ events: [{ type: 'fundingRate', instrument: 'BTCUSDT', rate: 10_000n, createdAt: 1_700_000_000_000 }] });
    assert.deepEqual(sent, [['futures-perp-dev:funding-rate', { instrument: 'BTCUSDT', fundingRate: '0.0001', createdAt: 1_700_000_000_000 }]]);
  });
});
