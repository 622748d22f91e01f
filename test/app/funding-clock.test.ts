// The funding clock sends funding.settle for every instrument at each multiple of the interval.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../../src/app/config.js';
import { FundingClock } from '../../src/app/funding-clock.js';
import type { CommandInput } from '../../src/engine/commands.js';

it('settles every instrument at each interval boundary, journaled as funding.settle commands', async () => {
  const sent: Array<{ cmd: CommandInput; at: number }> = [];
  const clock = new FundingClock({
    intervalMs: 40, instruments: () => ['BTCUSDT', 'ETHUSDT'], log: pino({ level: 'silent' }),
    submit: async (cmd) => {
      sent.push({ cmd, at: Date.now() });
      return { reply: { ok: true }, events: [] };
    },
  });
  clock.start();
  await new Promise((r) => setTimeout(r, 150));
  await clock.stop();
  const n = sent.length;
  assert.ok(n >= 4 && n % 2 === 0, `settlements: ${n}`);
  assert.deepEqual(sent.slice(0, 2).map((s) => s.cmd), [
    { kind: 'funding.settle', instrument: 'BTCUSDT', intervalMs: 40 },
    { kind: 'funding.settle', instrument: 'ETHUSDT', intervalMs: 40 },
  ]);
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(sent.length, n, 'nothing after stop');
});

it('a rate period other than the interval goes into the command (demo: 8 h of funding every few ms)', async () => {
  const sent: CommandInput[] = [];
  const clock = new FundingClock({
    intervalMs: 20, ratePeriodMs: 28_800_000, instruments: () => ['BTCUSDT'], log: pino({ level: 'silent' }),
    submit: async (cmd) => {
      sent.push(cmd);
      return { reply: { ok: true }, events: [] };
    },
  });
  clock.start();
  await new Promise((r) => setTimeout(r, 60));
  await clock.stop();
  assert.ok(sent.length >= 1);
  assert.deepEqual(sent[0], { kind: 'funding.settle', instrument: 'BTCUSDT', intervalMs: 28_800_000 });
});

it('interval 0 means no funding', async () => {
  let calls = 0;
  const clock = new FundingClock({
    intervalMs: 0, instruments: () => ['BTCUSDT'], log: pino({ level: 'silent' }),
    submit: async () => {
      calls++;
      return { reply: { ok: true }, events: [] };
    },
  });
  clock.start();
  await new Promise((r) => setTimeout(r, 30));
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

it('without lastSettledAt (or nothing missed) nothing is settled before the next boundary', async () => {
  const sent: CommandInput[] = [];
  const clock = new FundingClock({
    intervalMs: 10_000_000, instruments: () => ['BTCUSDT'], lastSettledAt: () => Date.now(), log: pino({ level: 'silent' }),
    submit: async (cmd) => {
      sent.push(cmd);
      return { reply: { ok: true }, events: [] };
    },
  });
  clock.start();
  await new Promise((r) => setTimeout(r, 20));
  await clock.stop();
  assert.deepEqual(sent, []);
});
