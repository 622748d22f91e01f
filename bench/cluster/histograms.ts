/**
 * Latency histograms read twice (before and after a measured window) and subtracted: from a process's
 * Prometheus /metrics text (cumulative buckets) or from the engine leader's stats over NATS (per-bucket
 * counts). Quantiles are bucket upper bounds (1, 2.5, 5, 10 … ms), so the means are the finer numbers.
 */
import type { LeaderStats } from '../../src/cluster/admin-transport.js';

export interface Hist {
  /** Upper bounds, seconds, ascending; the last count is +Inf. */
  bounds: number[];
  counts: number[];
  sum: number;
  count: number;
}

export const EMPTY: Hist = { bounds: [], counts: [], sum: 0, count: 0 };

/** A histogram out of Prometheus text exposition (per-bucket counts from the cumulative ones). */
export function fromPrometheus(text: string, name: string): Hist {
  const bounds: number[] = [];
  const cumulative: number[] = [];
  let sum = 0;
  let count = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const bucket = new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\S+)$`).exec(line);
    if (bucket) {
      if (bucket[1] !== '+Inf') bounds.push(Number(bucket[1]));
      cumulative.push(Number(bucket[2]));
    } else if (line.startsWith(`${name}_sum `)) sum = Number(line.split(' ')[1]);
    else if (line.startsWith(`${name}_count `)) count = Number(line.split(' ')[1]);
  }
  const counts = cumulative.map((c, i) => c - (i > 0 ? cumulative[i - 1] : 0));
  return { bounds, counts, sum, count };
}

export function fromLeader(h: LeaderStats['applyLatency']): Hist {
  return { bounds: h.bounds, counts: h.counts, sum: h.sum, count: h.count };
}

/** after − before (bucket layouts are the same: one source read twice). */
export function minus(after: Hist, before: Hist): Hist {
  return {
    bounds: after.bounds,
    counts: after.counts.map((c, i) => c - (before.counts[i] ?? 0)),
    sum: after.sum - before.sum,
    count: after.count - before.count,
  };
}

/** Several processes' histograms of the same metric added (two gateways). */
export function plus(a: Hist, b: Hist): Hist {
  if (a.count === 0 && a.bounds.length === 0) return b;
  return { bounds: a.bounds, counts: a.counts.map((c, i) => c + (b.counts[i] ?? 0)), sum: a.sum + b.sum, count: a.count + b.count };
}

export const meanMs = (h: Hist): number => (h.count > 0 ? (h.sum / h.count) * 1000 : NaN);

/** Upper bound (ms) of the bucket holding quantile q; Infinity when it is past the last bound. */
export function quantileMs(h: Hist, q: number): number {
  if (h.count <= 0) return NaN;
  let seen = 0;
  for (let i = 0; i < h.counts.length; i++) {
    seen += h.counts[i];
    if (seen >= q * h.count) return i < h.bounds.length ? h.bounds[i] * 1000 : Infinity;
  }
  return Infinity;
}
