/**
 * /metrics for the whole process (Prometheus text format), all read at scrape time from state the
 * components already keep: sequencer stats (commands by kind, latency histograms, journal fsync), the
 * real-time server (connections, subscriptions), the engine (book depth, reserve fund, seq). Nothing is
 * added to the command path.
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { toWireNumber } from '../domain/fixed.js';
import type { EngineQueries } from '../engine/api.js';
import type { Sequencer } from '../sequencer/sequencer.js';
import type { LatencyHistogram } from '../sequencer/stats.js';
import { StatsHistogram } from './stats-histogram.js';

/** Levels per side counted into the depth gauges (a scrape walks at most this many). */
export const DEPTH_LEVELS = 1000;

export interface MetricsSources {
  engine: EngineQueries;
  sequencer: Pick<Sequencer, 'stats'>;
  /** Money identity terms; `reserveFund` is exposed. */
  ledger: () => { reserveFund: bigint; fees: bigint };
  realtime: () => { connections: number; subscriptions: number };
  /** More histograms read at scrape time: name, help, source (a cluster gateway's command path). */
  histograms?: ReadonlyArray<readonly [name: string, help: string, source: () => LatencyHistogram]>;
  /** Called before each scrape is read (a cluster gateway fetches the leader's statistics). */
  refresh?: () => Promise<void>;
  /** Registers more metrics of the process's own (a cluster gateway's view of the engines). */
  register?: (registry: Registry) => void;
  /** Process metrics (CPU, memory, event-loop lag). Default true. */
  processMetrics?: boolean;
}

export interface ExchangeMetrics {
  registry: Registry;
  contentType: string;
  render(): Promise<string>;
}

export function createExchangeMetrics(src: MetricsSources): ExchangeMetrics {
  const registry = new Registry();
  const stats = src.sequencer.stats;
  if (src.processMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'perpx_' });
  /** A counter whose value is a running total the sequencer already keeps, read at scrape time. */
  const statsCounter = (name: string, help: string, read: () => number) => new Counter({
    name, help, registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });

  new Counter({
    name: 'perpx_commands_total',
    help: 'Commands applied by the engine, by kind and outcome (ok | refused); rate() gives commands/s',
    labelNames: ['kind', 'outcome'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [kind, n] of Object.entries(stats.commandsByKind)) {
        const refused = stats.refusedByKind[kind as keyof typeof stats.refusedByKind] ?? 0;
        if (n - refused > 0) this.inc({ kind, outcome: 'ok' }, n - refused);
        if (refused > 0) this.inc({ kind, outcome: 'refused' }, refused);
      }
    },
  });
  new StatsHistogram('perpx_command_apply_seconds', 'Time the engine takes to apply one command', () => stats.applyLatency).register(registry);
  new StatsHistogram('perpx_command_latency_seconds', 'Command latency from submit to durable acknowledgment (apply + journal group commit)', () => stats.ackLatency).register(registry);
  new StatsHistogram('perpx_journal_fsync_seconds', 'Journal group-commit flush (one transaction + fsync)', () => stats.flushLatency).register(registry);
  new StatsHistogram('perpx_snapshot_capture_seconds', 'Engine snapshot capture (blocks the sequencer)', () => stats.snapshotCaptureLatency).register(registry);
  new StatsHistogram('perpx_snapshot_replica_seconds', 'Engine snapshot taken by the replica thread: journal catch-up + serialization + write (does not block the sequencer)', () => stats.snapshotReplicaLatency).register(registry);
  for (const [name, help, source] of src.histograms ?? []) new StatsHistogram(name, help, source).register(registry);
  statsCounter('perpx_journal_flushed_commands_total', 'Commands made durable (divide by flushes for the group-commit size)', () => stats.flushedCommands);
  statsCounter('perpx_journal_flushes_total', 'Journal group commits', () => stats.flushes);
  new Gauge({
    name: 'perpx_engine_seq', help: 'Sequence number of the last applied command', registers: [registry],
    collect() {
      this.set(src.engine.seq);
    },
  });
  new Gauge({
    name: 'perpx_realtime_connections', help: 'Open websocket connections', registers: [registry],
    collect() {
      this.set(src.realtime().connections);
    },
  });
  new Gauge({
    name: 'perpx_realtime_subscriptions', help: 'Live channel subscriptions over all connections', registers: [registry],
    collect() {
      this.set(src.realtime().subscriptions);
    },
  });
  /** Each instrument's book sides over the best DEPTH_LEVELS levels, for the two book gauges. */
  function* bookSides(): Generator<[instrument: string, side: 'bid' | 'ask', levels: Array<{ quantity: number }>]> {
    for (const c of src.engine.instrumentConfigs()) {
      const d = src.engine.depth(c.id, DEPTH_LEVELS, 0);
      if (!d) continue;
      yield [c.id, 'bid', d.bids];
      yield [c.id, 'ask', d.asks];
    }
  }
  new Gauge({
    name: 'perpx_book_depth', help: `Resting quantity in the order book (base units), by instrument and side, over the best ${DEPTH_LEVELS} levels`,
    labelNames: ['instrument', 'side'] as const, registers: [registry],
    collect() {
      this.reset();
      for (const [instrument, side, levels] of bookSides()) {
        this.set({ instrument, side }, toWireNumber(levels.reduce((sum, l) => sum + l.quantity, 0)));
      }
    },
  });
  new Gauge({
    name: 'perpx_book_levels', help: `Price levels in the order book, by instrument and side (capped at ${DEPTH_LEVELS})`,
    labelNames: ['instrument', 'side'] as const, registers: [registry],
    collect() {
      this.reset();
      for (const [instrument, side, levels] of bookSides()) this.set({ instrument, side }, levels.length);
    },
  });
  new Gauge({
    name: 'perpx_reserve_fund_usdt', help: 'Insurance (reserve) fund balance, USDT', registers: [registry],
    collect() {
      this.set(toWireNumber(src.ledger().reserveFund));
    },
  });
  new Gauge({
    name: 'perpx_fees_collected_usdt', help: 'Trading fees collected since the exchange started, USDT', registers: [registry],
    collect() {
      this.set(toWireNumber(src.ledger().fees));
    },
  });
  src.register?.(registry);

  return { registry, contentType: registry.contentType, render: async () => {
    await src.refresh?.();
    return registry.metrics();
  } };
}
