/**
 * A Prometheus histogram read from a `LatencyHistogram` the sequencer already keeps (bucket counts, sum,
 * count) at scrape time. prom-client's registry renders any metric whose `get()` returns the standard
 * `{ name, help, type, values }` shape, so no second histogram has to be fed on the hot path.
 */
import type { Metric, Registry } from 'prom-client';
import type { LatencyHistogram } from '../sequencer/stats.js';

interface Sample {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

/** What prom-client's Registry reads from a metric on scrape. */
export interface HistogramSamples {
  name: string;
  help: string;
  type: 'histogram';
  values: Sample[];
  aggregator: 'sum';
}

export class StatsHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';

  constructor(readonly name: string, readonly help: string, private readonly source: () => LatencyHistogram) {}

  get(): HistogramSamples {
    const h = this.source();
    const values: Sample[] = [];
    let cumulative = 0;
    h.bounds.forEach((le, i) => {
      cumulative += h.counts[i];
      values.push({ metricName: `${this.name}_bucket`, labels: { le }, value: cumulative });
    });
    values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf' }, value: h.count });
    values.push({ metricName: `${this.name}_sum`, labels: {}, value: h.sum });
    values.push({ metricName: `${this.name}_count`, labels: {}, value: h.count });
    return { name: this.name, help: this.help, type: 'histogram', values, aggregator: 'sum' };
  }

  register(registry: Registry): this {
    registry.registerMetric(this as unknown as Metric);
    return this;
  }
}
