/**
 * GET /api/admin/cluster (issue 30, observability): the engine processes of a cluster as a gateway sees them —
 * each one's role, applied seq, lag behind the command log and last status age — with the lease holder and
 * epoch, and this gateway's own follower. A single-process exchange (`npm start`) has no cluster: 404
 * NOT_A_CLUSTER (its state is GET /api/admin/status).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ErrorBody, Nullable } from '../../records/common.js';
import type { RouteContext } from '../context.js';
import { ApiError } from '../errors.js';
import { OPERATOR_SECURITY } from '../operator.js';

const Ms = Type.Integer({ description: 'ms' });
const Engine = Type.Object({
  id: Type.String({ description: 'the engine process (host:pid:random), as in the lease' }),
  role: Type.String({ description: 'leader | standby | stopped' }),
  appliedSeq: Type.Integer({ description: 'last command its engine applied' }),
  logSeq: Type.Integer({ description: 'last command in the log when it reported' }),
  lag: Type.Integer({ description: 'commands behind the log when it reported' }),
  epoch: Type.Integer({ description: 'lease epoch it leads or led last (0: never led)' }),
  leaseHolder: Nullable(Type.String()),
  leaseEpoch: Nullable(Type.Integer()),
  takeovers: Type.Integer({ description: 'times this process took over' }),
  lastTakeoverMs: Nullable(Type.Integer({ description: 'its last takeover: lease taken until it took commands, ms' })),
  updatedAt: Type.Integer({ description: 'when it last reported (ms since the epoch, NATS server time)' }),
  ageMs: Type.Integer({ description: 'ms since it last reported (it reports every second)' }),
});
const ClusterReply = Type.Object({
  cluster: Type.String(),
  lease: Nullable(Type.Object({ holder: Type.String(), epoch: Type.Integer(), renewedAt: Ms }, { description: 'null: nobody holds the lease (a takeover is under way, or no engine runs)' })),
  logSeq: Type.Integer({ description: 'last command in the log, read now' }),
  engines: Type.Array(Engine, { description: 'engines that reported recently, leader first' }),
  gateway: Type.Object({ appliedSeq: Type.Integer(), lag: Type.Integer() }, { description: "this gateway's follower" }),
}, { description: 'Engines, lease and log of a cluster' });

export function adminClusterRoutes(ctx: RouteContext) {
  return async function plugin(app: FastifyInstance) {
    const admin = ctx.admin;
    if (!admin) return;
    app.get('/api/admin/cluster', {
      schema: {
        tags: ['admin'], security: OPERATOR_SECURITY, summary: 'Cluster engines: role, applied seq, lag; lease holder and epoch',
        response: { 200: ClusterReply, '4xx': ErrorBody },
      },
    }, async () => {
      if (!admin.cluster) throw new ApiError(404, 'NOT_A_CLUSTER', 'this exchange runs as a single process (no engine cluster); see GET /api/admin/status');
      const view = await admin.cluster();
      return { ...view, engines: view.engines.map((e) => ({ ...e, ageMs: Math.round(e.ageMs) })) };
    });
  };
}
