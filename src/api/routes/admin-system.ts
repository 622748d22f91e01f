/**
 * Operator system views under /api/admin: status (engine, sequencer, real-time, ledger), snapshot now,
 * and a checkpoint (durable seq + state hash) that `perpx verify-journal --url` replays against.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { formatUnits } from '../../domain/fixed.js';
import { ErrorBody, Nullable } from '../../records/common.js';
import type { RouteContext } from '../context.js';
import { OPERATOR_SECURITY } from '../operator.js';

const errors = { '4xx': ErrorBody };
const Ms = Type.Number({ description: 'ms' });
const DecOut = Nullable(Type.String({ description: 'decimal' }));
const StatusReply = Type.Object({
  seq: Type.Integer(),
  matcher: Type.String(),
  uptimeSec: Type.Integer(),
  startedAt: Ms,
  sequencer: Type.String({ description: 'running | stopping | stopped | failed' }),
  lastSnapshotSeq: Type.Integer(),
  commandsByKind: Type.Record(Type.String(), Type.Integer()),
  realtime: Type.Object({ connections: Type.Integer(), subscriptions: Type.Integer() }),
  ledger: Type.Object({
    deposits: Type.String(), withdrawals: Type.String(), balances: Type.String(), fees: Type.String(), reserveFund: Type.String(),
    openCost: Type.String({ description: 'signed cost of open positions (+ longs, − shorts)' }),
  }, { description: 'money identity terms, decimals: balances + fees + reserveFund − openCost = deposits − withdrawals' }),
  readModel: Type.Optional(Type.Object({
    projectedSeq: Type.Integer(),
    state: Type.String({ description: 'current | retrying (projection failing; history answers 503 READ_MODEL_BEHIND) | stopped (restart to catch up)' }),
    error: Type.Optional(Type.String()),
  }, { description: 'history read model' })),
  marketMakers: Type.Integer(),
  startup: Type.Optional(Type.Object({
    totalMs: Ms, snapshotSeq: Type.Integer(), replayed: Type.Integer(), snapshotReadMs: Ms, snapshotRestoreMs: Ms, replayMs: Ms,
    skippedSnapshots: Type.Array(Type.Object({ seq: Type.Integer(), reason: Type.String() }), { description: 'newer snapshots that failed verification' }),
    readModel: Type.Object({ fromSeq: Type.Integer(), projected: Type.Integer(), catchUpMs: Ms }), listenMs: Ms,
  }, { description: 'where start-up time went' })),
  instruments: Type.Array(Type.Object({
    id: Type.String(), trading: Type.String(), indexPrice: DecOut, markPrice: DecOut, lastPrice: DecOut, bestBid: DecOut, bestAsk: DecOut, openInterest: DecOut,
  })),
}, { description: 'Exchange status' });

export function adminSystemRoutes(ctx: RouteContext) {
  return async function plugin(app: FastifyInstance) {
    const tags = ['admin'];
    const security = OPERATOR_SECURITY;
    const admin = ctx.admin;
    if (!admin) return;

    app.get('/api/admin/status', {
      schema: { tags, security, summary: 'Engine, sequencer, real-time and ledger status', response: { 200: StatusReply, ...errors } },
    }, async () => {
      const engine = ctx.engine;
      const status = await admin.status();
      const instruments = engine.instrumentConfigs().map((c) => {
        const s = engine.instrumentState(c.id);
        const best = engine.depth(c.id, 1, 0);
        const px = (u: number | null | undefined) => (u === null || u === undefined ? null : formatUnits(u));
        return {
          id: c.id,
          trading: s?.trading ?? c.trading,
          indexPrice: px(s?.indexPrice),
          markPrice: px(s?.markPrice),
          lastPrice: px(s?.lastPrice),
          bestBid: px(best?.bids[best.bids.length - 1]?.price),
          bestAsk: px(best?.asks[0]?.price),
          openInterest: px(s?.openInterest),
        };
      });
      return {
        seq: engine.seq,
        matcher: engine.matcher().state,
        uptimeSec: Math.round((ctx.clock() - status.startedAt) / 1000),
        ...status,
        instruments,
      };
    });

    app.post('/api/admin/snapshot', {
      schema: { tags, security, summary: 'Take an engine snapshot now', response: { 200: Type.Object({ seq: Type.Integer() }), ...errors } },
    }, async () => ({ seq: await admin.snapshotNow() }));

    app.post('/api/admin/checkpoint', {
      schema: {
        tags, security, summary: 'A durable seq and the state hash at it (journal verification)',
        response: { 200: Type.Object({ seq: Type.Integer(), stateHash: Type.String() }), ...errors },
      },
    }, async () => admin.checkpoint());
  };
}
