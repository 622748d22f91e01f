import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { DEMO_INSTRUMENTS } from '../../src/domain/instrument.js';
import * as R from '../../src/records/index.js';
import { NOW, fillView, orderView, positionView, tpslView } from './fakes.js';

test('order: filledAvgPrice = filledValue / filledQuantity, exact; stopPrice/triggeredAt; exchangeRequestId optional', () => {
  // 0.3 filled for 30000.03 total → avg 100000.1
  const o = R.toOrder(orderView({ filledQuantity: 30_000_000, filledValue: 3_000_003_000_000n, stopPrice: 99_000 * 1e8, triggeredAt: NOW, status: 'PARTIALLY_FILLED' }), 'req-1');
  assert.equal(o.filledAvgPrice, 100000.1);
  assert.equal(o.stopPrice, 99000);
  assert.equal(o.triggeredAt, new Date(NOW).toISOString());
  assert.equal(o.exchangeRequestId, 'req-1');
  assert.ok(Value.Check(R.OrderRecord, o));
  const plain = R.toOrder(orderView());
  assert.equal(plain.filledAvgPrice, 0);
  assert.ok(!('exchangeRequestId' in plain));
});

test('batch result: failReason only on failure', () => {
  assert.deepEqual(R.toBatchResult({ orderId: 'a', success: true, failReason: 'x' }), { orderId: 'a', success: true });
  assert.deepEqual(R.toBatchResult({ orderId: 'a', success: false }), { orderId: 'a', success: false, failReason: 'Rejected' });
});

test('channel payloads match their schemas', () => {
  const cfg = DEMO_INSTRUMENTS[0];
  const state = { id: cfg.id, lastPrice: 100_000 * 1e8, markPrice: null, indexPrice: null, openInterest: 0, trading: 'onlyClose', updatedAt: NOW };
  const live = R.toInstrumentLive(cfg, state, { high: 1e13, low: 9e12, closePrice: 1e13, volume: 5n * 10n ** 14n, volumeBase: 5e8, fundingRate: '0.0001', fundingRateCreatedAt: NOW });
  assert.ok(Value.Check(R.InstrumentLiveRecord, live));
  assert.equal(live.trading, 'onlyClose');
  assert.equal(live.volume, 5_000_000);
  assert.ok(Value.Check(R.PositionRecord, R.toPosition(positionView())));
  assert.ok(Value.Check(R.OrderFillRecord, R.toOrderFill(fillView())));
  assert.ok(Value.Check(R.TradeEventRecord, R.toTradeEvent({ executionId: 'e', instrument: 'BTCUSDT', side: 'SELL', quantity: 1, price: 2, createdAt: NOW })));
  const funding = R.toFundingEvent({ userId: 7, coin: 'usdt', quantity: -5n, balance: 123_456_789n, reason: 'fee', updatedAt: NOW });
  assert.deepEqual(funding, { user: '7', coin: 'usdt', quantity: '1.23456789', updatedAt: new Date(NOW).toISOString() });
  const fee = R.toOrderFeeEvent({ id: 'f', userId: 7, orderId: 'o', executionId: 'e', coin: 'usdt', quantity: 50_000n, type: 'order', createdAt: NOW });
  assert.ok(Value.Check(R.OrderFeeEventRecord, fee));
  assert.equal(fee.quantity, '0.0005');
  assert.ok(Value.Check(R.AccountEventRecord, R.toAccountEvent(7, true, NOW)));
  const t = R.toTransferEvent({ id: 't', userId: 7, type: 'deposit', coin: 'usdt', amount: 10n ** 10n, fee: 0n, status: 'done', createdAt: NOW, updatedAt: NOW });
  assert.equal(t.exchangeId, 7);
  assert.equal(t.amount, 100);
  const tp = R.toTpSl(tpslView({ quantity: 12_345_678 }));
  assert.equal(tp.quantity, '0.12345678');
  const depth = R.toDepthEvent({ instrument: 'BTCUSDT', t: NOW, asks: [], bids: [] }, true);
  assert.deepEqual(depth, { instrument: 'BTCUSDT', orderBook: { t: NOW, asks: [], bids: [] } });
  assert.deepEqual(R.toMatcherEvent({ state: 'me-dead', updatedAt: NOW }), { state: 'me-dead', updatedAt: new Date(NOW).toISOString() });
});
