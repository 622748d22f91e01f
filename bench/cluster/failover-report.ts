/**
 * bench:cluster's failover tables: takeover times per round with p50 and max, and what a hot standby costs
 * (the cluster alone against the same cluster with a standby engine following the log, same load).
 */
import type { SetupResult } from './measure.js';
import type { TakeoverResult } from './takeover.js';

const log = (s = '') => console.log(s);
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

function p50(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

export function printTakeovers(t: TakeoverResult, o: { leaseTtlMs: number; offered: number }): void {
  log();
  log(`Takeover after SIGKILL of the leader engine (lease TTL ${fmt(o.leaseTtlMs)} ms, ${t.rounds.length} rounds, paced load offered ${fmt(o.offered)} orders/s, ` +
    `${fmt(t.rate)} acknowledged/s over the phase; ${fmt(t.acked)} orders acknowledged, ${t.failed.length} not${t.failed.length ? `: ${t.failed.slice(0, 3).join(' | ')}` : ''}):`);
  log();
  log('| round | kill → lease taken ms | kill → leading ms | kill → first ack on the new leader ms |');
  log('|---|---:|---:|---:|');
  t.rounds.forEach((r, i) => log(`| ${i + 1} | ${fmt(r.leaseMs)} | ${fmt(r.leadsMs)} | ${fmt(r.firstAckMs)} |`));
  const col = (k: keyof TakeoverResult['rounds'][number]) => t.rounds.map((r) => r[k]);
  if (t.rounds.length === 0) return;
  log(`| p50 | ${fmt(p50(col('leaseMs')))} | ${fmt(p50(col('leadsMs')))} | ${fmt(p50(col('firstAckMs')))} |`);
  log(`| max | ${fmt(Math.max(...col('leaseMs')))} | ${fmt(Math.max(...col('leadsMs')))} | ${fmt(Math.max(...col('firstAckMs')))} |`);
}

/** Busy CPU of the machine outside this setup and the load generator over the window, % of one core. */
function otherLoad(r: SetupResult): number {
  let ours = r.load.clientCpuMs;
  for (const [k, v] of r.cpu) if (!k.includes('/') || k.startsWith('postgres/')) ours += v;
  return (100 * Math.max(0, r.machine.busy - ours)) / r.wallMs;
}

export function printStandbyCost(alone: SetupResult, withStandby: SetupResult): void {
  log();
  log('What a hot standby costs (same closed-loop load; the standby applies every command the leader commits):');
  log();
  log('| cluster | orders/s | p50 ms | p99 ms | standby CPU µs / order | other jobs on the machine, % of a core |');
  log('|---|---:|---:|---:|---:|---:|');
  const standbyUs = withStandby.cpu.get('standby');
  log(`| engine leader only | ${fmt(alone.rate)} | ${alone.load.p50.toFixed(2)} | ${alone.load.p99.toFixed(2)} | — | ${fmt(otherLoad(alone))} |`);
  log(`| engine leader + 1 hot standby | ${fmt(withStandby.rate)} | ${withStandby.load.p50.toFixed(2)} | ${withStandby.load.p99.toFixed(2)} | ${standbyUs === undefined ? 'n/a' : fmt((standbyUs * 1000) / Math.max(1, withStandby.ok))} | ${fmt(otherLoad(withStandby))} |`);
  log(`| ratio (with / without) | ${fmt(withStandby.rate / alone.rate, 2)} | ${fmt(withStandby.load.p50 / alone.load.p50, 2)} | ${fmt(withStandby.load.p99 / alone.load.p99, 2)} | | |`);
}
