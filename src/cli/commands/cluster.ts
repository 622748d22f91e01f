/** cluster status: the engines of a cluster (role, applied seq, lag, last report), the lease and the log. */
import type { ClusterView } from '../../cluster/engine-status.js';
import { adminClient } from '../admin-client.js';
import { UsageError, type CommandSpec } from '../command.js';
import { printResult, table } from '../output.js';

/** The status as text: a header line (lease, log, this gateway) and one row per engine. */
export function clusterStatusText(v: ClusterView): string {
  const lease = v.lease ? `lease holder ${v.lease.holder}  epoch ${v.lease.epoch}` : 'lease: nobody holds it (takeover under way, or no engine runs)';
  return [
    `cluster ${v.cluster}  ${lease}`,
    `log seq ${v.logSeq}  this gateway: applied ${v.gateway.appliedSeq}, lag ${v.gateway.lag}`,
    '',
    v.engines.length === 0
      ? '(no engine reported recently)'
      : table(['engine', 'role', 'applied seq', 'lag', 'last status', 'epoch', 'takeovers', 'last takeover'],
        v.engines.map((e) => [
          e.id, e.role, e.appliedSeq, e.lag, `${(e.ageMs / 1000).toFixed(1)}s ago`, e.epoch || null, e.takeovers,
          e.lastTakeoverMs === null ? null : `${e.lastTakeoverMs} ms`,
        ])),
  ].join('\n');
}

export const clusterCommand: CommandSpec = {
  name: 'cluster',
  summary: 'Cluster engines: role, applied seq, lag, last status age; lease holder and epoch',
  args: ['what?'],
  details: '`cluster status` (the default) asks the gateway (--url) for GET /api/admin/cluster. A single-process exchange answers NOT_A_CLUSTER.',
  async run({ args, global }) {
    const what = args.what ?? 'status';
    if (what !== 'status') throw new UsageError(`unknown cluster subcommand "${what}" (status)`);
    const v = await (await adminClient(global)).get<ClusterView>('/api/admin/cluster');
    printResult(global.json, v, () => clusterStatusText(v));
  },
};
