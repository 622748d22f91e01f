/**
 * A cluster gateway's /metrics about the engines (issue 30, observability): each engine's role, applied seq,
 * lag behind the command log and status age, the lease holder and epoch, and this gateway's own follower. Read
 * from the last view of the engine status board (src/cluster/engine-status.ts), refreshed before each scrape.
 */
import { Gauge, type Registry } from 'prom-client';
import type { ClusterView } from '../cluster/engine-status.js';

export function registerClusterMetrics(registry: Registry, view: () => ClusterView | undefined): void {
  /** A gauge per engine (label `engine`), reset at each scrape so a vanished engine's series go too. */
  const perEngine = (name: string, help: string, value: (e: ClusterView['engines'][number]) => number | null) => new Gauge({
    name, help, labelNames: ['engine'] as const, registers: [registry],
    collect() {
      this.reset();
      for (const e of view()?.engines ?? []) {
        const v = value(e);
        if (v !== null) this.set({ engine: e.id }, v);
      }
    },
  });
  const single = (name: string, help: string, value: (v: ClusterView) => number | null) => new Gauge({
    name, help, registers: [registry],
    collect() {
      this.reset();
      const v = view();
      const n = v ? value(v) : null;
      if (n !== null) this.set(n);
    },
  });
  perEngine('perpx_cluster_engine_leader', 'Engine process leads (1) or is a hot standby (0), as it last reported', (e) => (e.role === 'leader' ? 1 : 0));
  perEngine('perpx_cluster_engine_applied_seq', 'Seq of the last command the engine applied, as it last reported', (e) => e.appliedSeq);
  perEngine('perpx_cluster_engine_lag_commands', 'Commands the engine was behind the command log when it last reported', (e) => e.lag);
  perEngine('perpx_cluster_engine_status_age_seconds', 'Seconds since the engine last reported (it reports every second)', (e) => e.ageMs / 1000);
  perEngine('perpx_cluster_engine_takeovers', 'Times this engine process took over the leadership', (e) => e.takeovers);
  perEngine('perpx_cluster_engine_last_takeover_seconds', "The engine's last takeover: lease taken until it took commands", (e) => (e.lastTakeoverMs === null ? null : e.lastTakeoverMs / 1000));
  single('perpx_cluster_engines', 'Engine processes that reported within the status max age', (v) => v.engines.length);
  single('perpx_cluster_leader_epoch', 'Lease epoch of the engine leader (absent: nobody holds the lease)', (v) => v.lease?.epoch ?? null);
  new Gauge({
    name: 'perpx_cluster_lease_holder', help: 'The engine holding the leader lease (label holder; value 1)', labelNames: ['holder'] as const, registers: [registry],
    collect() {
      this.reset();
      const lease = view()?.lease;
      if (lease) this.set({ holder: lease.holder }, 1);
    },
  });
  single('perpx_cluster_log_seq', 'Seq of the last command in the log', (v) => v.logSeq);
  single('perpx_cluster_gateway_applied_seq', "Seq of the last command this gateway's follower applied", (v) => v.gateway.appliedSeq);
  single('perpx_cluster_gateway_lag_commands', "Commands this gateway's follower is behind the log", (v) => v.gateway.lag);
}
