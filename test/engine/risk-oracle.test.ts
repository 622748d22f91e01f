// The risk oracle (risk-oracle.ts) against numbers worked out by hand, and the engine's own position views and
// liquidation decision against the oracle.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEMO_INSTRUMENTS } from '../../src/domain/instrument.js';
import { Harness } from './harness.js';
import { e8, maintenanceOf, notionalOf, oracleRisk } from './risk-oracle.js';

const BTC_TIERS = DEMO_INSTRUMENTS.find((i) => i.id === 'BTCUSDT')!.maintenanceMargin;

test('oracle arithmetic: decimals, notional rounding, maintenance tiers', () => {
  assert.equal(e8('0.004'), 400_000n);
  assert.equal(e8('-1.5'), -150_000_000n);
  assert.equal(notionalOf(e8('0.1'), e8('95000')), e8('9500'));
  assert.equal(notionalOf(1n, 50_000_000n), 1n, '0.5e-8 rounds half up');
  assert.equal(notionalOf(1n, 49_999_999n), 0n);
  // BTCUSDT tiers: 0.4 % below 50,000; 0.5 % − 50 from 50,000; 1 % − 1,300 from 250,000.
  assert.equal(maintenanceOf(BTC_TIERS, e8('9500')), e8('38'));
  assert.equal(maintenanceOf(BTC_TIERS, e8('60000')), e8('250'));
  assert.equal(maintenanceOf(BTC_TIERS, e8('300000')), e8('1700'));
});

test('a leveraged long: equity and maintenance as worked out by hand; liquidated exactly when equity ≤ maintenance', () => {
  const h = new Harness();
  h.tick('BTCUSDT', '100000', '100000');
  h.deposit(1, '1000');
  h.deposit(99, '1000000');
  h.order(99, { side: 'SELL', qty: '0.1', price: '100000' });
  h.order(1, { side: 'BUY', qty: '0.1', price: '100000', leverage: 20 });
  // User 1 took 0.1 BTC at 100,000: cost 10,000, taker fee 0.05 % = 5 → balance 995.
  h.tick('BTCUSDT', '95000', '95000');
  // At 95,000: uPnL 9,500 − 10,000 = −500 → equity 495; maintenance 9,500 × 0.4 % = 38.
  assert.deepEqual(oracleRisk(h.engine, 1), { equity: e8('495'), maintenance: e8('38'), hasPositions: true });
  const [long] = h.engine.positions(1);
  assert.equal(long.unRealizedPnL, e8('-500'), 'the engine shows the same uPnL');
  assert.equal(long.maintenanceMargin, e8('38'), 'and the same maintenance');
  // The maker's short: maker fee 0.02 % = 2 → balance 999,998; uPnL +500 → equity 1,000,498.
  assert.deepEqual(oracleRisk(h.engine, 99), { equity: e8('1000498'), maintenance: e8('38'), hasPositions: true });

  // At 90,500: equity 995 − 950 = 45 > maintenance 36.2: kept.
  h.tick('BTCUSDT', '90500', '90500');
  assert.deepEqual(oracleRisk(h.engine, 1), { equity: e8('45'), maintenance: e8('36.2'), hasPositions: true });
  assert.equal(h.engine.positions(1).length, 1);
  // At 90,100: equity 995 − 990 = 5 ≤ maintenance 36.04: the engine liquidates.
  h.tick('BTCUSDT', '90100', '90100');
  assert.deepEqual(h.engine.positions(1), [], 'liquidated at equity 5 ≤ maintenance 36.04');
  const after = oracleRisk(h.engine, 1);
  assert.equal(after.hasPositions, false);
  assert.ok(after.equity >= 0n, 'the reserve fund or the bankruptcy price kept it from going below zero');
});
