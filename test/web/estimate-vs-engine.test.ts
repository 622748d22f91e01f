/**
 * The terminal's order estimate (web/src/lib/estimate.ts, built from public data only) against what the
 * engine does after the fill: the taker fee charged, the initial margin reserved, the bankruptcy price, and
 * the liquidation price: the mark just above it leaves the position, the mark at or below it liquidates.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseMoney } from '../../src/domain/fixed.js';
import { estimateOrder, rulesOf, type WireInstrument } from '../../web/src/lib/estimate.js';
import { Bot, eventually, http, ok, startTestExchange, type TestExchange } from '../app/client.js';

const money = (v: number | string) => parseMoney(typeof v === 'number' ? v.toFixed(8) : v);

describe('order estimate vs the engine after the fill', () => {
  let tx: TestExchange;
  before(async () => {
    tx = await startTestExchange();
  });
  after(async () => {
    await tx?.stop();
  });

  async function pushIndex(price: bigint): Promise<number> {
    ok(await http(tx.url, 'POST', '/api/admin/index-price', { instrument: 'BTCUSDT', price: (Number(price) / 1e8).toFixed(1) }, { 'x-operator-token': tx.ex.operatorToken }));
    const list = ok(await http(tx.url, 'GET', '/api/market/instrument')) as Array<{ id: string; markPrice: number }>;
    return list.find((i) => i.id === 'BTCUSDT')!.markPrice;
  }

  it('fee, margin, bankruptcy and liquidation price match', async () => {
    const maker = await new Bot(tx.url).signIn();
    const taker = await new Bot(tx.url).signIn();
    await maker.faucet();
    await taker.faucet();
    ok(await maker.limit({ side: 'SELL', quantity: '1.5', limitPrice: '100010', leverage: 20 }));

    const instruments = ok(await http(tx.url, 'GET', '/api/market/instrument')) as Array<WireInstrument & { markPrice: number }>;
    const fees = (ok(await http(tx.url, 'GET', '/api/market')) as { fees: { maker: string; taker: string; liquidation: string } }).fees;
    const rules = new Map(instruments.map((i) => [i.id, rulesOf(i, fees)]));
    const bal = await taker.balance();
    const est = estimateOrder('BTCUSDT', rules, {
      balance: bal.funding.balance, positions: [], openOrders: [], marks: Object.fromEntries(instruments.map((i) => [i.id, i.markPrice])),
    }, { side: 'BUY', quantity: '1.5', price: '100010', leverage: 20, taker: true });
    assert.ok(est.liquidationPrice !== null && est.bankruptcyPrice !== null);

    const placed = ok(await taker.limit({ side: 'BUY', quantity: '1.5', limitPrice: '100010', leverage: 20 }));
    const order = await eventually(() => taker.order(placed.id), (o) => o.status === 'FILLED', 'the fill');
    assert.equal(money(order.fee[0].quantity), est.fee, 'taker fee');
    const after = (await taker.balance()) as unknown as { position: Array<{ instrument: string; initialMargin: string }> };
    assert.equal(money(after.position.find((p) => p.instrument === 'BTCUSDT')!.initialMargin), est.margin, 'initial margin');
    const [pos] = await taker.positions();
    assert.equal(money(pos!.bankruptcyPrice), est.bankruptcyPrice, 'bankruptcy price');

    // The mark one increment above the estimate keeps the position; at the estimate, it is liquidated.
    const inc = money('0.1');
    let mark = await pushIndex(est.liquidationPrice! + inc);
    if (money(mark) > est.liquidationPrice!) {
      assert.equal((await taker.positions()).filter((p) => Number(p.quantity) !== 0).length, 1, `kept at mark ${mark}`);
    }
    mark = await pushIndex(est.liquidationPrice!);
    assert.ok(money(mark) <= est.liquidationPrice!, `mark ${mark} reached the estimate`);
    await eventually(() => taker.positions(), (ps) => ps.every((p) => Number(p.quantity) === 0), 'the liquidation');
  });
});
