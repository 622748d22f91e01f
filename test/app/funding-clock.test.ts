// The funding clock sends funding.settle for every instrument at each multiple of the interval. Time is
// node:test's mock clock (setTimeout and Date), so each case knows exactly which boundaries passed.
import assert from 'node:assert/strict';
import { it, type TestContext } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../../src/app/config.js';
import { FundingClock } from '../../src/app/funding-clock.js';
import type { CommandInput } from '../../src/engine/commands.js';

/**
 * Mock setTimeout and Date from `now` on. `advance(ms, step)` moves the clock in steps and lets the settlements a
 * step started run their awaits (and schedule the next boundary) before the next step.
 */
function mockClock(t: TestContext, now: number): (ms: number, step?: number) => Promise<void> {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now });
  const settle = () => new Promise<void>((r) => setImmediate(r));
  return async (ms, step = 5) => {
    for (let left = ms; left > 0; left -= Math.min(left, step)) {
      t.mock.timers.tick(Math.min(left, step));
      await settle();
    }
  };
}

it('settles every instrument at each interval boundary, journaled as funding.settle commands', async (t) => {
  const advance = mockClock(t, 1_000);
  const sent: Array<{ cmd: CommandInput; at: number }> = [];
  const clock = new FundingClock({
    intervalMs: 40, instruments: () => ['BTCUSDT', 'ETHUSDT'], log: pino({ level: 'silent' }),
    submit: async (cmd) => {
      sent.push({ cmd, at: Date.now() });
      return { reply: { ok: true }, events: [] };
    },
  });
  clock.start();
  await advance(39);
  assert.equal(sent.length, 0, 'nothing before the first boundary (1,040)');
  await advance(111, 1); // to 1,150 by 1 ms: boundaries 1,040, 1,080 and 1,120
  await clock.stop();
  assert.deepEqual(sent.map((s) => s.at), [1_040, 1_040, 1_080, 1_080, 1_120, 1_120]);
  assert.deepEqual(sent.slice(0, 2).map((s) => s.cmd), [
    { kind: 'funding.settle', instrument: 'BTCUSDT', intervalMs: 40 },
    { kind: 'funding.settle', instrument: 'ETHUSDT', intervalMs: 40 },
  ]);
  await advance(200);
  assert.equal(sent.length, 6, 'nothing after stop');
});

it('a rate period other than the interval goes into the command (demo: 8 h of funding every few ms)', async (t) => {
  const advance = mockClock(t, 0);
  const sent: CommandInput[] = [];
  const clock = new FundingClock({
    intervalMs: 20, ratePeriodMs: 28_800_000, instruments: () => ['BTCUSDT'], log: pino({ level: 'silent' }),
    submit: async (cmd) => {
      sent.push(cmd);
      return { reply: { ok: true }, events: [] };
    },
  });
  clock.start();
  await advance(20);
  await clock.stop();
  assert.deepEqual(sent, [{ kind: 'funding.settle', instrument: 'BTCUSDT', intervalMs: 28_800_000 }]);
});

it('interval 0 means no funding', async (t) => {
  const advance = mockClock(t, 0);
  let calls = 0;
  const clock = new FundingClock({
    intervalMs: 0, instruments: () => ['BTCUSDT'], log: pino({ level: 'silent' }),
    submit: async () => {
      calls++;
      return { reply: { ok: true }, events: [] };
    },
  });
  clock.start();
  await advance(1_000);
  await clock.stop();
  assert.equal(calls, 0);
});

it('config: the rate period defaults to the interval, and funding can be switched off', () => {
  assert.equal(loadConfig({ PERPX_ENV: 'production' }).fundingIntervalMs, 28_800_000);
  assert.equal(loadConfig({ PERPX_ENV: 'production' }).fundingRatePeriodMs, 28_800_000);
  assert.equal(loadConfig({}).fundingIntervalMs, 60_000, 'the demo pays funding every minute');
  assert.equal(loadConfig({}).fundingRatePeriodMs, 60_000);
  assert.equal(loadConfig({ FUNDING_INTERVAL_MS: '60000' }).fundingRatePeriodMs, 60_000);
  const off = loadConfig({ FUNDING_INTERVAL_MS: '0' });
  assert.equal(off.fundingIntervalMs, 0);
  assert.equal(loadConfig({ FUNDING_INTERVAL_MS: '60000', FUNDING_RATE_PERIOD_MS: '28800000' }).fundingRatePeriodMs, 28_800_000);
  assert.throws(() => loadConfig({ INDEX_FEED: 'magic' }), /INDEX_FEED must be/);
  assert.throws(() => loadConfig({ INDEX_FEED_VOLATILITY: '2' }), /INDEX_FEED_VOLATILITY/);
});

it('at start, settles at once each instrument whose latest boundary passed while the process was down', async () => {
  const interval = 1_000_000;
  const now = 7 * interval + 250; // just after the boundary at 7 intervals
  const settledAt: Record<string, number | null> = {
    BTCUSDT: 5 * interval + 12, // last settled at the boundary two intervals ago: missed 6 and 7
    ETHUSDT: 7 * interval + 3, // settled at the latest boundary before the restart: nothing missed
    SOLUSDT: null, // never settled: nothing says it traded at the missed boundary
  };
  const sent: CommandInput[] = [];
  const logged: unknown[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line)) });
  const clock = new FundingClock({
    intervalMs: interval, instruments: () => Object.keys(settledAt), lastSettledAt: (id) => settledAt[id], now: () => now, log,
    submit: async (cmd) => {
      sent.push(cmd);
      return { reply: { ok: true }, events: [] };
    },
  });
  clock.start();
  await clock.stop(); // waits for the catch-up settlement in flight
  assert.deepEqual(sent, [{ kind: 'funding.settle', instrument: 'BTCUSDT', intervalMs: interval }], 'one settlement, one period, only for the missed instrument');
  assert.ok(logged.some((l) => (l as { instrument?: string; boundaries?: number }).instrument === 'BTCUSDT' && (l as { boundaries?: number }).boundaries === 2));
});

it('without lastSettledAt (or nothing missed) nothing is settled before the next boundary', async (t) => {
  const interval = 10_000_000;
  const advance = mockClock(t, 3 * interval + 5);
  const sent: CommandInput[] = [];
  const clock = new FundingClock({
    intervalMs: interval, instruments: () => ['BTCUSDT'], lastSettledAt: () => 3 * interval, log: pino({ level: 'silent' }),
    submit: async (cmd) => {
      sent.push(cmd);
      return { reply: { ok: true }, events: [] };
    },
  });
  clock.start();
  await advance(interval - 6, interval);
  assert.equal(sent.length, 0, 'nothing at start, nothing until the boundary');
  await advance(1);
  await clock.stop();
  assert.deepEqual(sent, [{ kind: 'funding.settle', instrument: 'BTCUSDT', intervalMs: interval }], 'the boundary itself settles');
});
