/**
 * Projects engine events into the read-model tables.
 *
 * `project(batches)` applies many journal batches in ONE transaction: events are folded in memory first
 * (an order updated ten times in the call is written once, with its last state), then written with
 * chunked multi-row upserts, then `projector_meta.last_seq` moves to the highest seq applied. Batches
 * with seq ≤ last_seq are skipped, so feeding the same batches twice (a crash between commit and ack,
 * or a rebuild that overlaps) changes nothing. Rebuild = drop the database, replay the journal through
 * the engine, and feed its event batches here.
 *
 * Events that are not history (book, instrument, matcher, account, price) are ignored: their live state
 * is served by the engine and the real-time channels.
 */
import type { Kysely, Transaction } from 'kysely';
import type { EngineEvent } from '../engine/records.js';
import { insertRows } from './bulk-write.js';
import {
  fillRow, fundingRow, orderFeeRow, orderRow, toMoney, toNum, tpslRow, tradeRow, transferRow,
} from './codec.js';
import { applyPositionEvent, closeTypeOfGroup, type Lifetime, type PositionTrack } from './position-lifetime.js';
import type { StoreDatabase } from './schema.js';
import type { CloseType, StoreDialectKind } from './types.js';

export interface EventBatch {
  /** Journal sequence of the command that produced the events; strictly increasing. */
  seq: number;
  /** Command time (epoch ms). */
  ts: number;
  events: EngineEvent[];
}

export interface ProjectResult {
  /** Batches applied / skipped as already projected. */
  applied: number;
  skipped: number;
  /** Rows written (after folding repeated updates). */
  rows: number;
  lastSeq: number;
}

type Row = Record<string, unknown>;

/** Everything one project() call will write, folded. */
class PendingWrites {
  readonly orders = new Map<string, Row>();
  readonly fills: Row[] = [];
  readonly trades: Row[] = [];
  readonly funding: Row[] = [];
  readonly orderFees: Row[] = [];
  readonly transfers = new Map<string, Row>();
  readonly tpsl = new Map<string, Row>();
  readonly tracks = new Map<string, PositionTrack>();
  readonly lifetimes = new Map<string, Lifetime>();
  /** Group of every order seen in this call, for close types. */
  readonly orderGroups = new Map<string, string>();
}

const trackKey = (userId: number, instrument: string) => `${userId}|${instrument}`;

export class Projector {
  constructor(
    private readonly db: Kysely<StoreDatabase>,
    private readonly kind: StoreDialectKind,
  ) {}

  /** Highest journal seq already projected (0 when empty). */
  async lastSeq(): Promise<number> {
    const row = await this.db.selectFrom('projector_meta').select('last_seq').where('id', '=', 1).executeTakeFirst();
    return row ? toNum(row.last_seq) : 0;
  }

  async project(batches: readonly EventBatch[]): Promise<ProjectResult> {
    if (batches.length === 0) return { applied: 0, skipped: 0, rows: 0, lastSeq: await this.lastSeq() };
    return this.db.transaction().execute(async (trx) => {
      let meta = trx.selectFrom('projector_meta').select('last_seq').where('id', '=', 1);
      // One writer at a time on PostgreSQL (SQLite transactions already serialize writers).
      if (this.kind === 'postgres') meta = meta.forUpdate();
      const row = await meta.executeTakeFirst();
      let last = row ? toNum(row.last_seq) : 0;
      const pending = new PendingWrites();
      let applied = 0;
      let skipped = 0;
      for (const batch of batches) {
        if (batch.seq <= last) {
          skipped++;
          continue;
        }
        await this.fold(trx, pending, batch);
        last = batch.seq;
        applied++;
      }
      if (applied === 0) return { applied, skipped, rows: 0, lastSeq: last };
      const rows = await this.write(trx, pending);
      await trx.updateTable('projector_meta').set({ last_seq: last }).where('id', '=', 1).execute();
      return { applied, skipped, rows, lastSeq: last };
    });
  }

  private async fold(trx: Transaction<StoreDatabase>, w: PendingWrites, batch: EventBatch): Promise<void> {
    const { seq, events } = batch;
    // Which order's fill touched each user+instrument last in this batch (close type of a closing event).
    let lastFillOrder: Map<string, string> | undefined;
    for (let ev = 0; ev < events.length; ev++) {
      const e = events[ev]!;
      switch (e.type) {
        case 'order': {
          const key = `${e.order.userId}|${e.order.id}`;
          w.orders.set(key, orderRow(e.order, seq));
          w.orderGroups.set(key, e.order.group);
          break;
        }
        case 'fill':
          w.fills.push(fillRow(e.fill, seq, ev));
          break;
        case 'trade':
          w.trades.push(tradeRow(e.trade, seq, ev));
          break;
        case 'funding':
          w.funding.push(fundingRow(e.funding, seq, ev));
          break;
        case 'orderFee':
          w.orderFees.push(orderFeeRow(e.fee, seq, ev));
          break;
        case 'transfer':
          w.transfers.set(e.transfer.id, transferRow(e.transfer, seq));
          break;
        case 'tpsl':
          w.tpsl.set(`${e.tpsl.userId}|${e.tpsl.id}`, tpslRow(e.tpsl, seq));
          break;
        case 'position': {
          const p = e.position;
          const tk = trackKey(p.userId, p.instrument);
          const track = w.tracks.get(tk) ?? (await this.loadTrack(trx, p.userId, p.instrument));
          w.tracks.set(tk, track);
          lastFillOrder ??= lastFillOrders(events);
          let closeType: CloseType = 'manually';
          const closing = track.open !== null && (p.quantity === 0 || p.side !== track.open.side || p.id !== track.open.positionId);
          if (closing) {
            const orderId = lastFillOrder.get(tk);
            if (orderId !== undefined) closeType = closeTypeOfGroup(await this.orderGroup(trx, w, p.userId, orderId));
          }
          for (const l of applyPositionEvent(track, p, seq, ev, () => closeType)) w.lifetimes.set(l.id, l);
          break;
        }
        default:
          break; // live state only (book, instrument, matcher, account, price)
      }
    }
  }

  private async orderGroup(trx: Transaction<StoreDatabase>, w: PendingWrites, userId: number, orderId: string): Promise<string | undefined> {
    const seen = w.orderGroups.get(`${userId}|${orderId}`);
    if (seen !== undefined) return seen;
    const row = await trx
      .selectFrom('orders')
      .select('order_group')
      .where('user_id', '=', userId)
      .where('id', '=', orderId)
      .executeTakeFirst();
    return row?.order_group;
  }

  private async loadTrack(trx: Transaction<StoreDatabase>, userId: number, instrument: string): Promise<PositionTrack> {
    const last = await trx
      .selectFrom('position_last')
      .selectAll()
      .where('user_id', '=', userId)
      .where('instrument', '=', instrument)
      .executeTakeFirst();
    const open = await trx
      .selectFrom('position_history')
      .selectAll()
      .where('user_id', '=', userId)
      .where('instrument', '=', instrument)
      .where('close_at', 'is', null)
      .executeTakeFirst();
    return {
      last: last
        ? {
            positionId: last.position_id,
            side: last.side as 'BUY' | 'SELL',
            quantity: toMoney(last.quantity),
            costBasis: toMoney(last.cost_basis),
            realizedPnL: toMoney(last.realized_pnl),
            fee: toMoney(last.fee),
            fundingPaid: toMoney(last.funding_paid),
          }
        : null,
      open: open
        ? {
            id: open.id,
            userId: toNum(open.user_id),
            instrument: open.instrument,
            positionId: open.position_id,
            side: open.side as 'BUY' | 'SELL',
            openAt: toNum(open.open_at),
            closeAt: null,
            maxQuantity: toMoney(open.max_quantity),
            quantity: toMoney(open.quantity),
            entryQuantity: toMoney(open.entry_quantity),
            entryValue: toMoney(open.entry_value),
            exitQuantity: toMoney(open.exit_quantity),
            exitValue: toMoney(open.exit_value),
            realizedPnL: toMoney(open.realized_pnl),
            fee: toMoney(open.fee),
            fundingPaid: toMoney(open.funding_paid),
            closeType: null,
            seq: toNum(open.seq),
          }
        : null,
    };
  }

  private async write(trx: Transaction<StoreDatabase>, w: PendingWrites): Promise<number> {
    const db = trx as unknown as Kysely<any>;
    const orders = [...w.orders.values()];
    const transfers = [...w.transfers.values()];
    const tpsl = [...w.tpsl.values()];
    const lifetimes = [...w.lifetimes.values()].map(lifetimeRow);
    const positionLast = [...w.tracks.entries()]
      .filter(([, t]) => t.last !== null)
      .map(([k, t]) => {
        const l = t.last!;
        const sep = k.indexOf('|');
        return {
          user_id: Number(k.slice(0, sep)),
          instrument: k.slice(sep + 1),
          position_id: l.positionId,
          side: l.side,
          quantity: l.quantity,
          cost_basis: l.costBasis,
          realized_pnl: l.realizedPnL,
          fee: l.fee,
          funding_paid: l.fundingPaid,
        };
      });
    await insertRows(db, this.kind, 'orders', orders, { keys: ['user_id', 'id'], update: 'all' });
    await insertRows(db, this.kind, 'fills', w.fills, { keys: ['execution_id', 'order_id'], update: 'none' });
    await insertRows(db, this.kind, 'trades', w.trades, { keys: ['execution_id'], update: 'none' });
    await insertRows(db, this.kind, 'funding_changes', w.funding, { keys: ['seq', 'ev'], update: 'none' });
    await insertRows(db, this.kind, 'order_fees', w.orderFees, { keys: ['id'], update: 'none' });
    await insertRows(db, this.kind, 'transfers', transfers, { keys: ['id'], update: 'all' });
    await insertRows(db, this.kind, 'tpsl', tpsl, { keys: ['user_id', 'id'], update: 'all' });
    await insertRows(db, this.kind, 'position_last', positionLast, { keys: ['user_id', 'instrument'], update: 'all' });
    await insertRows(db, this.kind, 'position_history', lifetimes, { keys: ['id'], update: 'all' });
    return (
      orders.length + w.fills.length + w.trades.length + w.funding.length + w.orderFees.length + transfers.length +
      tpsl.length + positionLast.length + lifetimes.length
    );
  }
}

function lastFillOrders(events: readonly EngineEvent[]): Map<string, string> {
  const m = new Map<string, string>();
  for (const e of events) if (e.type === 'fill') m.set(trackKey(e.fill.userId, e.fill.instrument), e.fill.orderId);
  return m;
}

function lifetimeRow(l: Lifetime) {
  return {
    id: l.id,
    user_id: l.userId,
    instrument: l.instrument,
    position_id: l.positionId,
    side: l.side,
    open_at: l.openAt,
    close_at: l.closeAt,
    max_quantity: l.maxQuantity,
    quantity: l.quantity,
    entry_quantity: l.entryQuantity,
    entry_value: l.entryValue,
    exit_quantity: l.exitQuantity,
    exit_value: l.exitValue,
    realized_pnl: l.realizedPnL,
    fee: l.fee,
    funding_paid: l.fundingPaid,
    close_type: l.closeType,
    seq: l.seq,
  };
}
