// Over 400 lines: one event fold and the one transaction that writes it, kept together on purpose.
/**
 * Projects engine events into the read-model tables.
 *
 * `project(batches)` applies many journal batches in ONE transaction: events are folded in memory first
 * (an order updated ten times in the call is written once, with its last state), then written with
 * chunked multi-row upserts, then `projector_meta.last_seq` moves to the highest seq applied. Batches
 * with seq ≤ last_seq are skipped, so feeding the same batches twice (a crash between commit and ack,
 * or a rebuild that overlaps) changes nothing. A batch that does not follow last_seq + 1 is refused
 * (ProjectionGapError, nothing written): the read model never skips a seq. Rebuild = drop the database,
 * replay the journal through the engine, and feed its event batches here.
 *
 * Events that are not history (book, instrument, matcher, account, price) are ignored: their live state
 * is served by the engine and the real-time channels.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { EventBatch } from '../engine/commands.js';
import type { EngineEvent } from '../engine/records.js';
import { insertRows, insertSql, type ConflictAction } from './bulk-write.js';
import { orderCountsMergeSql } from './count-triggers.js';
import {
  fillRow, fundingRow, orderFeeRow, orderRow, toMoney, toNum, tpslRow, tradeRow, transferRow,
} from './codec.js';
import {
  assignOrdinals, FILL_ORDINALS, FUNDING_ORDINALS, lastOfPartitionSql, ORDINAL_TABLES, lastOfPartitionsPgSql, ordinalReads, renumberSql,
  type OrdinalScope, type OrdinalTable, type PartitionLast,
} from './row-ordinals.js';
import { applyPositionEvent, closeTypeOfGroup, type Lifetime, type PositionTrack } from './position-lifetime.js';
import type { PositionHistoryTable, PositionLastTable, StoreDatabase } from './schema.js';
import type { CloseType, StoreDialectKind } from './types.js';
import type { ProjectionFaults } from './projection-faults.js';

/** What the projector needs of an event batch (the bus's EventBatch; decoded batches carry no kind). */
export type ProjectionBatch = Pick<EventBatch, 'seq' | 'ts' | 'events'>;

export interface ProjectResult {
  /** Batches applied / skipped as already projected. */
  applied: number;
  skipped: number;
  /** Rows written (after folding repeated updates). */
  rows: number;
  lastSeq: number;
}

type Row = Record<string, unknown>;

/** A batch that would leave a hole in the read model (its seq is not last_seq + 1). */
export class ProjectionGapError extends Error {
  override name = 'ProjectionGapError';
}

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

/** A read the fold needs from rows earlier calls wrote; yielded by foldBatch, answered by the caller. */
type FoldRead =
  | { kind: 'track'; userId: number; instrument: string }
  | { kind: 'orderGroup'; userId: number; orderId: string };

type PositionLastRow = Selectable<PositionLastTable>;
type PositionHistoryRow = Selectable<PositionHistoryTable>;

export class Projector {
  private readonly sqlite: SqliteProjectionWriter | undefined;

  /**
   * `sqliteHandle`: the better-sqlite3 connection behind `db` (SQLite only). With it, project() runs as one
   * synchronous transaction with cached prepared statements; Kysely would build, compile and prepare a
   * fresh statement for every query, too slow for the order hot path (docs/performance.md).
   */
  constructor(
    private readonly db: Kysely<StoreDatabase>,
    private readonly kind: StoreDialectKind,
    sqliteHandle?: BetterSqlite3.Database,
    /** Tests only: failures injected inside the transaction (projection-faults.ts). */
    private readonly faults?: ProjectionFaults,
  ) {
    // SQLite's order counters are kept by the projector's own writer (count-triggers.ts), so it needs the handle.
    if (kind === 'sqlite' && !sqliteHandle) throw new Error('the SQLite projector needs the better-sqlite3 handle behind db');
    this.sqlite = kind === 'sqlite' && sqliteHandle ? new SqliteProjectionWriter(sqliteHandle, faults) : undefined;
  }

  /** Highest journal seq already projected (0 when empty). */
  async lastSeq(): Promise<number> {
    if (this.sqlite) return this.sqlite.lastSeq();
    const row = await this.db.selectFrom('projector_meta').select('last_seq').where('id', '=', 1).executeTakeFirst();
    return row ? toNum(row.last_seq) : 0;
  }

  async project(batches: readonly ProjectionBatch[]): Promise<ProjectResult> {
    if (this.sqlite) return this.sqlite.project(batches);
    if (batches.length === 0) return { applied: 0, skipped: 0, rows: 0, lastSeq: await this.lastSeq() };
    return this.db.transaction().execute(async (trx) => {
      let meta = trx.selectFrom('projector_meta').select('last_seq').where('id', '=', 1);
      // One writer at a time on PostgreSQL (SQLite transactions already serialize writers).
      if (this.kind === 'postgres') meta = meta.forUpdate();
      const row = await meta.executeTakeFirst();
      const pending = new PendingWrites();
      const fold = foldNewBatches(pending, batches, row ? toNum(row.last_seq) : 0);
      let r = fold.next();
      while (!r.done) r = fold.next(await this.read(trx, r.value));
      const { applied, skipped, last } = r.value;
      if (applied === 0) return { applied, skipped, rows: 0, lastSeq: last };
      const rows = await this.write(trx, pending);
      this.faults?.check();
      await trx.updateTable('projector_meta').set({ last_seq: last }).where('id', '=', 1).execute();
      return { applied, skipped, rows, lastSeq: last };
    });
  }

  private async read(trx: Transaction<StoreDatabase>, q: FoldRead): Promise<PositionTrack | string | undefined> {
    if (q.kind === 'orderGroup') {
      const row = await trx
        .selectFrom('orders')
        .select('order_group')
        .where('user_id', '=', q.userId)
        .where('id', '=', q.orderId)
        .executeTakeFirst();
      return row?.order_group;
    }
    const last = await trx
      .selectFrom('position_last')
      .selectAll()
      .where('user_id', '=', q.userId)
      .where('instrument', '=', q.instrument)
      .executeTakeFirst();
    const open = await trx
      .selectFrom('position_history')
      .selectAll()
      .where('user_id', '=', q.userId)
      .where('instrument', '=', q.instrument)
      .where('close_at', 'is', null)
      .executeTakeFirst();
    return trackFromRows(last, open);
  }

  private async write(trx: Transaction<StoreDatabase>, w: PendingWrites): Promise<number> {
    const db = trx as unknown as Kysely<any>;
    const writes = tableWrites(w);
    const renumber = await this.rank(db, writes.filter((t) => t.ordinals && t.rows.length > 0) as RankedWrite[]);
    let rows = 0;
    for (const t of writes) {
      const written = await insertRows(db, this.kind, t.table, t.rows, t.conflict);
      const users = t.ordinals && renumber.get(t.ordinals);
      if (users) {
        // A row not inserted (already there) left a gap in the ranks handed out: renumber its users.
        if (written < t.rows.length) for (const r of t.rows) users.add(toNum(r.user_id as number));
        for (const userId of users) await db.executeQuery(CompiledQuery.raw(renumberSql(this.kind, t.ordinals!, true), [userId]));
      }
      rows += t.rows.length;
    }
    return rows;
  }

  /** Assigns the rows' ordinals (row-ordinals.ts); returns, per table, the users to renumber after the insert. */
  private async rank(db: Kysely<any>, writes: readonly RankedWrite[]): Promise<Map<OrdinalTable, Set<number>>> {
    const reads = writes.map((t) => ordinalReads(t.ordinals, t.rows));
    const answers = reads.map((r) => new Array<PartitionLast | undefined>(r.length));
    if (this.kind === 'postgres') {
      // One round trip for every table and scope: the partitions as parallel arrays.
      const groups: Array<{ table: OrdinalTable; scope: OrdinalScope; reads: number[]; write: number }> = [];
      writes.forEach((t, w) => {
        for (const scope of t.ordinals.scopes) {
          const idx = reads[w]!.flatMap((r, i) => (r.scope === scope ? [i] : []));
          if (idx.length > 0) groups.push({ table: t.ordinals, scope, reads: idx, write: w });
        }
      });
      if (groups.length > 0) {
        const params = groups.flatMap((g) => g.scope.partition.map((_, j) => g.reads.map((i) => reads[g.write]![i]!.values[j])));
        const found = await db.executeQuery<PartitionLast & { g: number; i: number | string }>(CompiledQuery.raw(lastOfPartitionsPgSql(groups), params));
        for (const row of found.rows) {
          const g = groups[Number(row.g)]!;
          answers[g.write]![g.reads[Number(row.i) - 1]!] = row;
        }
      }
    } else {
      for (let w = 0; w < writes.length; w++) {
        for (let i = 0; i < reads[w]!.length; i++) {
          const r = reads[w]![i]!;
          answers[w]![i] = (await db.executeQuery<PartitionLast>(CompiledQuery.raw(lastOfPartitionSql(writes[w]!.ordinals, r.scope), r.values))).rows[0];
        }
      }
    }
    return new Map(writes.map((t, w) => [t.ordinals, assignOrdinals(t.ordinals, t.rows, reads[w]!, answers[w]!)]));
  }
}

/**
 * The SQLite fast path: the same fold and the same rows, written through cached better-sqlite3 statements
 * (single-row upserts: a prepared statement re-run costs a few µs, a fresh multi-row one costs its parse).
 * Runs synchronously, so no other query on the connection can interleave with the transaction.
 */
class SqliteProjectionWriter {
  private readonly statements = new Map<string, BetterSqlite3.Statement>();
  private readonly selectLastSeq: BetterSqlite3.Statement;
  private readonly updateLastSeq: BetterSqlite3.Statement;
  private readonly selectPositionLast: BetterSqlite3.Statement;
  private readonly selectOpenLifetime: BetterSqlite3.Statement;
  private readonly selectOrderGroup: BetterSqlite3.Statement;
  private readonly selectOrder: BetterSqlite3.Statement;
  private readonly mergeOrderCounts: BetterSqlite3.Statement;
  private readonly selectLastRow = new Map<OrdinalScope, BetterSqlite3.Statement>();
  private readonly renumberUser = new Map<OrdinalTable, BetterSqlite3.Statement>();
  private readonly run: (batches: readonly ProjectionBatch[]) => ProjectResult;

  constructor(private readonly db: BetterSqlite3.Database, private readonly faults?: ProjectionFaults) {
    this.selectLastSeq = db.prepare('select last_seq from projector_meta where id = 1');
    this.updateLastSeq = db.prepare('update projector_meta set last_seq = ? where id = 1');
    this.selectPositionLast = db.prepare('select * from position_last where user_id = ? and instrument = ?');
    this.selectOpenLifetime = db.prepare('select * from position_history where user_id = ? and instrument = ? and close_at is null');
    this.selectOrderGroup = db.prepare('select order_group from orders where user_id = ? and id = ?');
    this.selectOrder = db.prepare('select * from orders where user_id = ? and id = ?');
    this.mergeOrderCounts = db.prepare(orderCountsMergeSql());
    for (const t of ORDINAL_TABLES) {
      for (const scope of t.scopes) this.selectLastRow.set(scope, db.prepare(lastOfPartitionSql(t, scope)));
      this.renumberUser.set(t, db.prepare(renumberSql('sqlite', t, true)));
    }
    // IMMEDIATE: take the write lock up front, as the async path's first write would.
    this.run = db.transaction((batches: readonly ProjectionBatch[]) => this.projectInTransaction(batches)).immediate;
  }

  lastSeq(): number {
    const row = this.selectLastSeq.get() as { last_seq: number | bigint } | undefined;
    return row ? toNum(row.last_seq) : 0;
  }

  project(batches: readonly ProjectionBatch[]): ProjectResult {
    if (batches.length === 0) return { applied: 0, skipped: 0, rows: 0, lastSeq: this.lastSeq() };
    return this.run(batches);
  }

  private projectInTransaction(batches: readonly ProjectionBatch[]): ProjectResult {
    const pending = new PendingWrites();
    const fold = foldNewBatches(pending, batches, this.lastSeq());
    let r = fold.next();
    while (!r.done) r = fold.next(this.read(r.value));
    const { applied, skipped, last } = r.value;
    if (applied === 0) return { applied, skipped, rows: 0, lastSeq: last };
    let rows = 0;
    for (const t of tableWrites(pending)) {
      if (t.rows.length === 0) continue;
      if (t.table === 'orders') {
        this.writeOrders(t.rows);
        rows += t.rows.length;
        continue;
      }
      let renumber: Set<number> | undefined;
      if (t.ordinals) {
        const reads = ordinalReads(t.ordinals, t.rows);
        renumber = assignOrdinals(t.ordinals, t.rows, reads, reads.map((r) => this.selectLastRow.get(r.scope)!.get(...r.values) as PartitionLast | undefined));
      }
      const columns = Object.keys(t.rows[0]!);
      const stmt = this.upsert(t.table, columns, t.conflict);
      const params: unknown[] = new Array(columns.length);
      for (const row of t.rows) {
        for (let i = 0; i < columns.length; i++) params[i] = row[columns[i]!] ?? null;
        // A row not inserted (already there) left a gap in the ranks handed out: renumber its user.
        if (stmt.run(...params).changes === 0 && renumber) renumber.add(toNum(row.user_id as number));
      }
      if (renumber) for (const userId of renumber) this.renumberUser.get(t.ordinals!)!.run(userId);
      rows += t.rows.length;
    }
    this.faults?.check();
    this.updateLastSeq.run(last);
    return { applied, skipped, rows, lastSeq: last };
  }

  /**
   * Orders: each row against its previous version (one primary-key read): a new order is inserted, a known
   * one updated in the columns that changed only (an index none of whose columns changed is not touched),
   * and the order counters get one merged delta per combination for the whole call (count-triggers.ts).
   */
  private writeOrders(rows: readonly Row[]): void {
    const deltas = new Map<string, OrderCountDelta>();
    const columns = Object.keys(rows[0]!);
    const insert = this.statement(`insert|${columns.join(',')}`, () => `insert into orders (${columns.map((c) => `"${c}"`).join(', ')}) values (${columns.map(() => '?').join(', ')})`);
    const params: unknown[] = new Array(columns.length);
    for (const row of rows) {
      const old = this.selectOrder.get(row.user_id, row.id) as Row | undefined;
      if (old === undefined) {
        for (let i = 0; i < columns.length; i++) params[i] = row[columns[i]!] ?? null;
        insert.run(...params);
        addOrderCountDelta(deltas, row, 1);
        continue;
      }
      const changed = columns.filter((c) => !sameValue(old[c], row[c]));
      if (changed.length === 0) continue;
      const values: unknown[] = changed.map((c) => row[c] ?? null);
      values.push(row.user_id, row.id);
      this.statement(`update|${changed.join(',')}`, () => `update orders set ${changed.map((c) => `"${c}" = ?`).join(', ')} where user_id = ? and id = ?`)
        .run(...values);
      if (orderCountKey(old) !== orderCountKey(row)) {
        addOrderCountDelta(deltas, old, -1);
        addOrderCountDelta(deltas, row, 1);
      }
    }
    for (const d of deltas.values()) this.mergeOrderCounts.run(...d.key, d.n, d.min, d.max, d.version);
  }

  private statement(key: string, text: () => string): BetterSqlite3.Statement {
    let stmt = this.statements.get(key);
    if (!stmt) {
      stmt = this.db.prepare(text());
      this.statements.set(key, stmt);
    }
    return stmt;
  }

  private read(q: FoldRead): PositionTrack | string | undefined {
    if (q.kind === 'orderGroup') {
      const row = this.selectOrderGroup.get(q.userId, q.orderId) as { order_group: string } | undefined;
      return row?.order_group;
    }
    return trackFromRows(
      this.selectPositionLast.get(q.userId, q.instrument) as PositionLastRow | undefined,
      this.selectOpenLifetime.get(q.userId, q.instrument) as PositionHistoryRow | undefined,
    );
  }

  private upsert(table: string, columns: readonly string[], conflict: ConflictAction): BetterSqlite3.Statement {
    const key = `${table}|${columns.join(',')}|${conflict.keys.join(',')}|${conflict.update}`;
    let stmt = this.statements.get(key);
    if (!stmt) {
      stmt = this.db.prepare(insertSql('sqlite', table, columns, 1, conflict));
      this.statements.set(key, stmt);
    }
    return stmt;
  }
}

/** One combination's counter changes within a projector call (count-triggers.ts). */
interface OrderCountDelta {
  key: unknown[];
  n: number;
  min: number;
  max: number;
  version: number;
}

const triggeredOf = (r: Row) => (r.triggered_at === null || r.triggered_at === undefined ? 0 : 1);

/** The order_counts combination of an orders row (new or read back), as its key values. */
function orderCountValues(r: Row): unknown[] {
  return [r.user_id, r.instrument, r.status, r.side, r.type, r.order_group, triggeredOf(r)];
}

const orderCountKey = (r: Row) => `${r.user_id}|${r.instrument}|${r.status}|${r.side}|${r.type}|${r.order_group}|${triggeredOf(r)}`;

/** A row enters (+1) or leaves (-1) its combination: the counters' n, bounds (widened only) and version. */
function addOrderCountDelta(deltas: Map<string, OrderCountDelta>, r: Row, d: 1 | -1): void {
  const key = orderCountKey(r);
  const created = toNum(r.created_at as number);
  const e = deltas.get(key);
  if (e) {
    e.n += d;
    if (created < e.min) e.min = created;
    if (created > e.max) e.max = created;
    e.version++;
  } else {
    deltas.set(key, { key: orderCountValues(r), n: d, min: created, max: created, version: 1 });
  }
}

/** Column equality across drivers' integer types (a stored bigint equals the number written). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === null || a === undefined) return b === null || b === undefined;
  if (b === null || b === undefined) return false;
  return typeof a === 'bigint' || typeof b === 'bigint' ? BigInt(a as number) === BigInt(b as number) : a === b;
}

/**
 * Folds one batch into `w`. A generator so that SQLite (synchronous reads) and PostgreSQL (async reads)
 * share it: it yields each read it needs and resumes with the answer.
 */
/**
 * Folds the batches not projected yet (seq > `last`) into `w`, yielding the reads the fold needs: the
 * synchronous SQLite writer and the async (PostgreSQL) path answer them each in their own way.
 */
function* foldNewBatches(
  w: PendingWrites, batches: readonly ProjectionBatch[], last: number,
): Generator<FoldRead, { applied: number; skipped: number; last: number }, PositionTrack | string | undefined> {
  let applied = 0;
  let skipped = 0;
  for (const batch of batches) {
    if (batch.seq <= last) {
      skipped++;
      continue;
    }
    if (batch.seq !== last + 1) throw new ProjectionGapError(`batch ${batch.seq} does not follow the read model's last seq ${last}`);
    yield* foldBatch(w, batch);
    last = batch.seq;
    applied++;
  }
  return { applied, skipped, last };
}

function* foldBatch(w: PendingWrites, batch: ProjectionBatch): Generator<FoldRead, void, PositionTrack | string | undefined> {
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
        const track = w.tracks.get(tk) ?? ((yield { kind: 'track', userId: p.userId, instrument: p.instrument }) as PositionTrack);
        w.tracks.set(tk, track);
        lastFillOrder ??= lastFillOrders(events);
        let closeType: CloseType = 'manually';
        const closing = track.open !== null && (p.quantity === 0 || p.side !== track.open.side || p.id !== track.open.positionId);
        if (closing) {
          const orderId = lastFillOrder.get(tk);
          if (orderId !== undefined) {
            const group = w.orderGroups.get(`${p.userId}|${orderId}`) ??
              ((yield { kind: 'orderGroup', userId: p.userId, orderId }) as string | undefined);
            closeType = closeTypeOfGroup(group);
          }
        }
        for (const l of applyPositionEvent(track, p, seq, ev, () => closeType)) w.lifetimes.set(l.id, l);
        break;
      }
      default:
        break; // live state only (book, instrument, matcher, account, price)
    }
  }
}

interface TableWrite {
  table: string;
  rows: Row[];
  conflict: ConflictAction;
  /** The rows carry ordinals (row-ordinals.ts), assigned before the insert. */
  ordinals?: OrdinalTable;
}
type RankedWrite = TableWrite & { ordinals: OrdinalTable };

/** Every table write of one project() call, in a fixed order, with its conflict rule. */
function tableWrites(w: PendingWrites): TableWrite[] {
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
  return [
    { table: 'orders', rows: [...w.orders.values()], conflict: { keys: ['user_id', 'id'], update: 'all' } },
    { table: 'fills', rows: w.fills, conflict: { keys: ['execution_id', 'order_id'], update: 'none' }, ordinals: FILL_ORDINALS },
    { table: 'trades', rows: w.trades, conflict: { keys: ['execution_id'], update: 'none' } },
    { table: 'funding_changes', rows: w.funding, conflict: { keys: ['seq', 'ev'], update: 'none' }, ordinals: FUNDING_ORDINALS },
    { table: 'order_fees', rows: w.orderFees, conflict: { keys: ['id'], update: 'none' } },
    { table: 'transfers', rows: [...w.transfers.values()], conflict: { keys: ['id'], update: 'all' } },
    { table: 'tpsl', rows: [...w.tpsl.values()], conflict: { keys: ['user_id', 'id'], update: 'all' } },
    { table: 'position_last', rows: positionLast, conflict: { keys: ['user_id', 'instrument'], update: 'all' } },
    { table: 'position_history', rows: [...w.lifetimes.values()].map(lifetimeRow), conflict: { keys: ['id'], update: 'all' } },
  ];
}

function trackFromRows(last: PositionLastRow | undefined, open: PositionHistoryRow | undefined): PositionTrack {
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
