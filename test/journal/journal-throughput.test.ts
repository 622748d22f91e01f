/**
 * The durable path under bursts: every appended/submitted command becomes durable (group commit). Throughput
 * is only reported as a diagnostic — performance targets live in `npm run bench:engine`, never in timed tests.
 * Commands are ~230-byte order placements.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Command, CommandInput } from '../../src/engine/commands.js';
import type { CommandResult } from '../../src/engine/records.js';
import { openSqliteJournal } from '../../src/journal/sqlite-journal.js';
import { LatencyHistogram } from '../../src/sequencer/stats.js';
import { Sequencer } from '../../src/sequencer/sequencer.js';
import { FakeEngine } from './fake-engine.js';
import { silentLogger, tempDir } from './helpers.js';

const order = (i: number): CommandInput => ({
  kind: 'order.place', userId: 1 + (i % 1000),
  order: {
    id: `00486:${i.toString(16).padStart(26, '0')}`, instrument: 'BTCUSDT', side: i % 2 ? 'BUY' : 'SELL', type: 'LIMIT',
    timeInForce: 'GTC', leverage: 10, quantity: 1_000_000, limitPrice: 10_000_000_000_000 + (i % 100) * 10_000_000,
  },
});

/** Engine that does nothing but count, so the numbers are the journal's and the sequencer's alone. */
class CountingEngine extends FakeEngine {
  private n = 0;
  private static readonly OK: CommandResult = { reply: { ok: true }, events: [] };
  override get seq(): number {
    return this.n;
  }
  override apply(_cmd: Command): CommandResult {
    this.n++;
    return CountingEngine.OK;
  }
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const us = (s: number): string => `${(s * 1e6).toFixed(0)} µs`;

test('journal alone: append + flush per group of 1000', async (t) => {
  const { dir, cleanup } = tempDir();
  try {
    const journal = await openSqliteJournal({ file: join(dir, 'journal.db') });
    const fsync = new LatencyHistogram();
    const N = 30_000;
    const t0 = performance.now();
    for (let i = 1; i <= N; i++) {
      journal.append(i, { ...order(i), ts: 1_700_000_000_000 + i } as Command);
      if (i % 1000 === 0) {
        const f0 = performance.now();
        await journal.flush();
        fsync.observe((performance.now() - f0) / 1000);
      }
    }
    const seconds = (performance.now() - t0) / 1000;
    t.diagnostic(`journal: ${fmt(N / seconds)} commands/s durable; flush (txn + fsync) of 1000: p50 ≤ ${us(fsync.quantile(0.5))}, p99 ≤ ${us(fsync.quantile(0.99))}, max ${us(fsync.max)}`);
    assert.equal(journal.durableSeq(), N);
    await journal.close();
  } finally {
    cleanup();
  }
});

for (const flushDelayMs of [0, 3]) test(`sequencer + journal (flushDelayMs ${flushDelayMs}): bursts of submits, acknowledged when durable`, async (t) => {
  const { dir, cleanup } = tempDir();
  try {
    const journal = await openSqliteJournal({ file: join(dir, 'journal.db') });
    const sequencer = new Sequencer({ engine: new CountingEngine(), journal, logger: silentLogger, flushDelayMs });
    const N = 30_000;
    const BURST = 2000;
    const t0 = performance.now();
    let inFlight: Promise<unknown>[] = [];
    for (let i = 0; i < N; i++) {
      inFlight.push(sequencer.submit(order(i)));
      if (i % BURST === BURST - 1) {
        // Let the group commit of this burst run while the next burst is produced (as with a busy gateway).
        await new Promise((r) => setImmediate(r));
        if (inFlight.length > 4 * BURST) {
          await Promise.all(inFlight);
          inFlight = [];
        }
      }
    }
    await Promise.all(inFlight);
    await sequencer.stop();
    const seconds = (performance.now() - t0) / 1000;
    const s = sequencer.stats;
    t.diagnostic(
      `sequencer (flushDelayMs ${flushDelayMs}): ${fmt(N / seconds)} commands/s acknowledged durable; ${s.flushes} flushes (avg ${fmt(s.flushedCommands / s.flushes)} commands); ` +
        `flush p50 ≤ ${us(s.flushLatency.quantile(0.5))}, p99 ≤ ${us(s.flushLatency.quantile(0.99))}, max ${us(s.flushLatency.max)}; ` +
        `ack latency p50 ≤ ${us(s.ackLatency.quantile(0.5))}, p99 ≤ ${us(s.ackLatency.quantile(0.99))}`,
    );
    assert.equal(journal.durableSeq(), N);
    await journal.close();
  } finally {
    cleanup();
  }
});
