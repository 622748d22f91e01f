/** Small helpers for the engine benchmark: percentiles, timer overhead, CPU time, number formatting. */
import { readFileSync } from 'node:fs';

export interface Percentiles {
  p50: number;
  p99: number;
  p999: number;
  max: number;
}

/** Percentiles (µs) of latencies given in ns; sorts `ns` in place. */
export function percentilesUs(ns: Float64Array): Percentiles {
  ns.sort();
  const at = (p: number): number => ns[Math.min(ns.length - 1, Math.floor(p * ns.length))] / 1000;
  return { p50: at(0.5), p99: at(0.99), p999: at(0.999), max: ns[ns.length - 1] / 1000 };
}

/** Median cost (ns) of one `process.hrtime.bigint()` pair + Number(t1 - t0), as used around each command. */
export function timerOverheadNs(samples = 200_000): number {
  const out = new Float64Array(samples);
  for (let i = 0; i < samples; i++) {
    const t0 = process.hrtime.bigint();
    const t1 = process.hrtime.bigint();
    out[i] = Number(t1 - t0);
  }
  out.sort();
  return out[samples >> 1];
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** 1234567 → "1,234,567". */
export function int(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** Latency in µs with sensible precision. */
export function us(n: number): string {
  if (!Number.isFinite(n)) return '–';
  if (n < 10) return n.toFixed(2);
  if (n < 100) return n.toFixed(1);
  return Math.round(n).toLocaleString('en-US');
}

/** Full GC (`rounds` times) when the process runs with --expose-gc. */
export function gcNow(rounds = 1): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) for (let i = 0; i < rounds; i++) gc();
}

/**
 * CPU time (user + system) of the main thread only, ns, from /proc (Linux; clock ticks of 10 ms), or
 * undefined elsewhere. With other processes competing for the cores, ops per main-thread CPU second is
 * a steadier figure than ops per wall second.
 */
export function mainThreadCpuNs(): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10_000_000;
  } catch {
    return undefined;
  }
}
