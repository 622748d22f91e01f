/** Positions: list, leverage change, signed close (v2, and v1 whose id may be a UUID). */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ErrorBody, Nullable } from '../../records/common.js';
import { OrderRecord, toOrder } from '../../records/order.js';
import { LeverageChangeRecord, PositionListItemRecord, flatLeverageChange, toLeverageChange, toPositionListItem } from '../../records/position.js';
import * as A from '../amounts.js';
import { userOf } from '../authenticate.js';
import type { RouteContext } from '../context.js';
import { execute } from '../execute.js';
import { PositionCloseBody, PositionCloseBodyV1, prepareClose } from '../order-input.js';
import { Body, InstrumentParams, Leverage, SideSchema, YesFlag } from '../schemas.js';
import { requireSignature } from '../signatures.js';

const errors = { '4xx': ErrorBody };
const PositionQuery = Type.Object({ side: Type.Optional(Nullable(SideSchema)), withTpSL: Type.Optional(YesFlag) });
const LeverageBody = Body({ leverage: Leverage });
/** TpSl states that still guard a position. */
const LIVE_TPSL = new Set(['waitOrder', 'active', 'process']);

export function positionRoutes(ctx: RouteContext) {
  return async function plugin(app: FastifyInstance) {
    const tags = ['positions'];

    app.get('/api/position', {
      config: { auth: true, scope: 'read' },
      schema: {
        tags, summary: 'Your open positions', querystring: PositionQuery,
        response: { 200: Type.Object({ list: Type.Array(PositionListItemRecord) }), ...errors },
      },
    }, async (req) => {
      const userId = userOf(req).exchangeId;
      const q = req.query as Static<typeof PositionQuery>;
      const tpsls = q.withTpSL === 'yes' ? ctx.engine.tpsls(userId).filter((t) => LIVE_TPSL.has(t.status)) : [];
      const list = ctx.engine.positions(userId)
        .filter((p) => p.quantity > 0 && (!q.side || p.side === q.side))
        .map((p) => toPositionListItem(p, tpsls.filter((t) => t.instrument === p.instrument)));
      return { list };
    });

    app.put('/api/position/:instrument', {
      config: { auth: true, scope: 'trade' },
      schema: {
        tags, summary: 'Change the leverage of an instrument (no signature)', params: InstrumentParams, body: LeverageBody,
        response: { 200: LeverageChangeRecord, ...errors },
      },
    }, async (req) => {
      const userId = userOf(req).exchangeId;
      const { instrument } = req.params as Static<typeof InstrumentParams>;
      const rules = A.pathInstrument(ctx.engine, instrument);
      const leverage = A.leverage(rules, (req.body as Static<typeof LeverageBody>).leverage);
      const reply = await execute(ctx.submit, { kind: 'position.leverage', userId, instrument, leverage });
      return reply.position ? toLeverageChange(reply.position) : flatLeverageChange(instrument, leverage);
    });

    for (const v of [{ path: '/api/v2/position/:instrument/close', body: PositionCloseBody, note: '' },
      { path: '/api/position/:instrument/close', body: PositionCloseBodyV1, note: ' (version 1: id may be a UUID)' }]) {
      app.post(v.path, {
        config: { auth: true, scope: 'trade' },
        schema: {
          tags, summary: `Close (part of) a position with a reduce-only market order${v.note}`, params: InstrumentParams,
          body: v.body, response: { 200: OrderRecord, ...errors },
        },
      }, async (req) => {
        const user = userOf(req);
        const { instrument } = req.params as Static<typeof InstrumentParams>;
        const p = prepareClose({ engine: ctx.engine, chainId: ctx.chainId, now: ctx.clock() }, instrument, req.body as Static<typeof PositionCloseBodyV1>);
        await requireSignature(ctx.verifier, user, p.signed);
        const reply = await execute(ctx.submit, { kind: 'position.close', userId: user.exchangeId, ...p.input });
        if (!reply.order) throw new Error('engine accepted position.close without an order view');
        return toOrder(reply.order);
      });
    }
  };
}
