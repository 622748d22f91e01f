/**
 * bench:cluster's tables: rate and latency per setup, CPU per order by process and thread kind, the
 * cluster's per-hop latency, and on paper the cores 10× and 100× today's rate would take.
 */
import { meanMs, quantileMs, type Hist } from './histograms.js';
import type { SetupResult } from './measure.js';
import type { SetupKind } from './setups.js';

export interface Measured {
  kind: SetupKind;
  title: string;
  roles: string[];
  r: SetupResult;
}

const fmt = (n: number, d = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }) : 'n/a');
const ms = (n: number) => (n === Infinity ? '> 1000' : Number.isFinite(n) ? (n < 10 ? n.toFixed(2) : n.toFixed(1)) : 'n/a');
const log = (s = '') => console.log(s);

/** CPU µs per 2xx order of everything whose key matches (NaN when nothing does: not in that setup). */
function usPer(m: Measured, match: (key: string) => boolean): number {
  let ms = 0;
  let any = false;
  for (const [k, v] of m.r.cpu) {
    if (!match(k)) continue;
    ms += v;
    any = true;
  }
  return any ? (ms * 1000) / Math.max(1, m.r.ok) : NaN;
}
const cell = (us: number) => (Number.isFinite(us) ? fmt(us) : '—');

const whole = (role: string) => (k: string) => k === role;
const gateways = (k: string) => /^gateway-\d+$/.test(k);
const thread = (role: RegExp, kind: string) => (k: string) => { const [r, t] = k.split('/'); return t === kind && role.test(r); };

/** "main 120, signature 80, …" for the processes whose role matches. */
function threadSplit(m: Measured, role: RegExp): string {
  const by = new Map<string, number>();
  for (const [k, v] of m.r.cpu) {
    const [r, t] = k.split('/');
    if (t === undefined || !role.test(r) || r === 'postgres') continue;
    by.set(t, (by.get(t) ?? 0) + v);
  }
  return [...by].sort((a, b) => b[1] - a[1]).filter(([, v]) => v > 0)
    .map(([t, v]) => `${t} ${fmt((v * 1000) / Math.max(1, m.r.ok))}`).join(', ');
}

const hist = (m: Measured, name: string): Hist | undefined => {
  const h = m.r.hist.get(name);
  return h && h.count > 0 ? h : undefined;
};
const hopRow = (label: string, h: Hist | undefined, note = '') =>
  log(`| ${label} | ${h ? ms(meanMs(h)) : 'n/a'} | ${h ? ms(quantileMs(h, 0.5)) : 'n/a'} | ${h ? ms(quantileMs(h, 0.99)) : 'n/a'} | ${note} |`);

export function printReport(results: Measured[], o: { cores: number; natsMeasured: boolean }): void {
  if (results.length === 0) return;
  const base = results[0];
  log();
  log('| setup | orders/s | p50 ms | p99 ms | mean ms | rate vs (1) | p50 vs (1) | notes |');
  log('|---|---:|---:|---:|---:|---:|---:|---|');
  results.forEach((m, i) => {
    const l = m.r.load;
    const bad = Object.entries(l.status).filter(([k]) => !k.startsWith('2')).map(([k, v]) => `${k}×${v}`);
    const servers = usPer(m, (k) => !k.includes('/'));
    const others = Math.max(0, m.r.machine.busy - (servers * m.r.ok) / 1000 - l.clientCpuMs);
    const notes = [
      bad.length ? `non-2xx ${bad.join(', ')}` : '',
      l.exhausted ? 'ORDER POOL RAN OUT (raise POOL_RATE)' : '',
      `machine busy ${fmt((100 * m.r.machine.busy) / m.r.wallMs)} % of ${o.cores * 100} %, other processes ${fmt((100 * others) / m.r.wallMs)} %`,
      m.r.machine.steal > 0.05 * m.r.wallMs ? `steal ${fmt((100 * m.r.machine.steal) / m.r.wallMs)} %` : '',
    ].filter(Boolean).join('; ');
    log(`| (${i + 1}) ${m.title} | ${fmt(m.r.rate)} | ${ms(l.p50)} | ${ms(l.p99)} | ${ms(l.mean)} | ${fmt(m.r.rate / base.r.rate, 2)} | ${fmt(l.p50 / base.r.load.p50, 2)} | ${notes} |`);
  });

  log();
  log(`CPU µs per order: utime+stime over the window less the same process's idle use, / 2xx orders${o.natsMeasured ? '' : '; the NATS server was not found'}:`);
  log();
  log(`| process | ${results.map((_, i) => `(${i + 1})`).join(' | ')} |`);
  log(`|---|${results.map(() => '---:').join('|')}|`);
  const row = (label: string, match: (k: string) => boolean) => log(`| ${label} | ${results.map((m) => cell(usPer(m, match))).join(' | ')} |`);
  row('exchange (single process)', whole('exchange'));
  row('engine leader', whole('engine'));
  row('engine leader, main thread (the sequencer)', thread(/^engine$/, 'main'));
  row('engine standby (follows the log)', whole('standby'));
  row('gateways (sum)', gateways);
  row('gateways, main threads (HTTP, auth, JSON, NATS client)', thread(/^gateway-\d+$/, 'main'));
  row('gateways, signature threads', thread(/^gateway-\d+$/, 'signature'));
  row('projector', whole('projector'));
  row('NATS server', whole('nats-server'));
  row('PostgreSQL backends of the setup', (k) => k.startsWith('postgres/'));
  row('all of the above', (k) => !k.includes('/') || k.startsWith('postgres/'));
  log(`| load generator (this process) | ${results.map((m) => fmt((m.r.load.clientCpuMs * 1000) / Math.max(1, m.r.ok))).join(' | ')} |`);
  log();
  log('By thread kind, µs per order (helpers = GC, compiler, libuv pool), and CPU the process used idle before the load (subtracted above):');
  log();
  for (const [i, m] of results.entries()) {
    for (const role of m.roles) log(`- (${i + 1}) ${role}: ${threadSplit(m, new RegExp(`^${role}$`))}; idle ${fmt((m.r.idle.get(role) ?? NaN) / 10, 1)} % of a core`);
  }

  for (const [i, m] of results.entries()) {
    log();
    log(`Per hop, (${i + 1}) ${m.title} (ms; p50/p99 are histogram bucket bounds):`);
    log();
    log('| hop | mean | p50 ≤ | p99 ≤ | notes |');
    log('|---|---:|---:|---:|---|');
    const l = m.r.load;
    log(`| client: write → last response byte | ${ms(l.mean)} | ${ms(l.p50)} | ${ms(l.p99)} | measured exactly |`);
    const rt = hist(m, 'perpx_gateway_leader_roundtrip_seconds');
    const wait = hist(m, 'perpx_gateway_follower_wait_seconds');
    const ack = hist(m, 'perpx_command_latency_seconds');
    const own = l.mean - (rt ? meanMs(rt) + (wait ? meanMs(wait) : 0) : ack ? meanMs(ack) : NaN);
    log(`| gateway's own: HTTP parse, auth, signature recovery, JSON, queueing | ${ms(own)} | | | client mean − ${rt ? 'leader round trip − follower wait' : 'submit→durable'} |`);
    if (rt) hopRow('gateway → engine leader → answer (NATS request)', rt);
    if (rt && ack) log(`| of which NATS both ways + leader queueing | ${ms(meanMs(rt) - meanMs(ack))} | | | round trip − submit→durable |`);
    hopRow('engine: submit → durable (apply + group commit)', ack);
    hopRow('engine: apply one command', hist(m, 'perpx_command_apply_seconds'));
    hopRow(`journal append of one group (${m.kind === 'single-sqlite' ? 'SQLite + fsync' : 'JetStream ack wait'})`, hist(m, 'perpx_journal_fsync_seconds'),
      `${fmt(m.r.flushes)} groups, ${fmt(m.r.flushed / Math.max(1, m.r.flushes), 1)} commands each`);
    if (wait) hopRow("gateway: after the answer, until its follower applied the command", wait);
  }

  // ---- on paper: 10× and 100×
  const today = base.r.rate;
  const cluster = results.find((m) => m.kind === 'cluster');
  if (!cluster) return;
  const perOrder = {
    sequencer: usPer(cluster, thread(/^engine$/, 'main')),
    engine: usPer(cluster, whole('engine')),
    gateways: usPer(cluster, gateways),
    projector: usPer(cluster, whole('projector')),
    nats: usPer(cluster, whole('nats-server')),
    postgres: usPer(cluster, (k) => k.startsWith('postgres/')),
  };
  const cores = (us: number, rate: number) => (us * rate) / 1e6;
  log();
  log(`On paper, from the cluster's CPU per order; today's rate = (1)'s ${fmt(today)} orders/s on this machine:`);
  log();
  log('| part | µs CPU / order | cores at 1× | 10× | 100× |');
  log('|---|---:|---:|---:|---:|');
  const line = (label: string, us: number) => log(`| ${label} | ${fmt(us)} | ${fmt(cores(us, today), 2)} | ${fmt(cores(us, 10 * today), 2)} | ${fmt(cores(us, 100 * today), 1)} |`);
  line('engine leader main thread (one sequencer: must stay < 1 core)', perOrder.sequencer);
  line('engine leader, whole process', perOrder.engine);
  line('gateways, all threads (scale out linearly)', perOrder.gateways);
  line('projector', perOrder.projector);
  line('NATS server', perOrder.nats);
  line('PostgreSQL (the setup\'s backends)', perOrder.postgres);
  log();
  log(`Engine sequencer ceiling at a whole core: ~${fmt(1e6 / perOrder.sequencer)} orders/s (${fmt(1e6 / perOrder.sequencer / today, 1)}× today); ` +
    `10× = ${fmt(10 * today)} orders/s needs ${fmt(cores(perOrder.sequencer, 10 * today), 2)} of its core, 100× = ${fmt(100 * today)} needs ${fmt(cores(perOrder.sequencer, 100 * today), 1)}.`);
}
