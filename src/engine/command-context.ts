/**
 * What every stage of the engine shares while a command runs: the state, the command's time, the events it
 * has emitted so far, and the entities it changed. Changed orders, positions, TpSl, books and instruments
 * are listed once and emitted in their final state when the command ends (`flush`), with comparison fields
 * (updatedAt, t) strictly increasing per entity, as clients require.
 */
import type { Money } from '../domain/fixed.js';
import { newAccount, type Account, type Position } from './account.js';
import type { Market } from './market.js';
import type { OrderState } from './order.js';
import type { EngineEvent, FundingChangeView, OrderView, PositionView } from './records.js';
import { RiskQueue } from './risk-queue.js';
import { clearSet, empty } from './scratch.js';
import type { EngineState } from './state.js';
import { tpslView, type TpSlState } from './tpsl.js';
import { TpSlIndex } from './tpsl-index.js';

export const COIN = 'usdt';

export class CommandContext {
  ts = 0;
  events: EngineEvent[] = [];
  /** The live TpSl by user, instrument and the order they wait on (derived from s.tpsls). */
  readonly tpslIndex = new TpSlIndex();
  /** Accounts whose margin may have changed in this command (fills, funding, price ticks): checked before it ends. */
  readonly riskCandidates = new RiskQueue();

  // Arrays deduplicated by a flag on each entity rather than Sets, whose clear() allocates a new table on
  // every command (V8).
  private touchedOrders: OrderState[] = [];
  /** The orders flushed by the current command and their views, while its reply is built. */
  flushedOrders: OrderState[] = [];
  readonly flushedViews: OrderView[] = [];
  /** Changed positions with their accounts (parallel arrays; a position's `touched` flag dedupes). */
  private readonly touchedPositions: Position[] = [];
  private readonly touchedPositionOwners: Account[] = [];
  private readonly touchedBooks: Market[] = [];
  private readonly touchedMarkets: Market[] = [];
  private readonly touchedTpsl = new Set<TpSlState>();

  constructor(readonly s: EngineState, private readonly positionView: (acc: Account, pos: Position) => PositionView) {}

  /** Starts a command: its time, and a fresh event list. */
  begin(ts: number): void {
    this.ts = ts;
    this.events = [];
  }

  accountOf(userId: number): Account {
    let acc = this.s.accounts.get(userId);
    if (acc === undefined) {
      acc = newAccount(userId);
      this.s.accounts.set(userId, acc);
    }
    return acc;
  }

  nextTime(prev: number): number {
    return this.ts > prev ? this.ts : prev + 1;
  }

  touchOrder(o: OrderState): void {
    if (o.touched) return;
    o.updatedAt = this.nextTime(o.updatedAt);
    this.listTouched(o);
  }

  /** Lists an order changed by this command (a new one keeps its creation time as updatedAt). */
  listTouched(o: OrderState): void {
    if (o.touched) return;
    o.touched = true;
    this.touchedOrders.push(o);
  }

  touchPosition(acc: Account, pos: Position): void {
    if (pos.touched === true) return;
    pos.updatedAt = this.nextTime(pos.updatedAt);
    this.listTouchedPosition(acc, pos);
  }

  listTouchedPosition(acc: Account, pos: Position): void {
    pos.touched = true;
    this.touchedPositions.push(pos);
    this.touchedPositionOwners.push(acc);
  }

  /** Takes a position off the changed list (closed and replaced by a new one within the command). */
  unlistTouchedPosition(pos: Position): void {
    const i = this.touchedPositions.indexOf(pos);
    if (i < 0) return;
    pos.touched = false;
    this.touchedPositions.splice(i, 1);
    this.touchedPositionOwners.splice(i, 1);
  }

  touchBook(m: Market): void {
    if (m.bookTouched) return;
    m.bookT = this.nextTime(m.bookT);
    m.bookTouched = true;
    this.touchedBooks.push(m);
  }

  touchMarket(m: Market): void {
    if (m.stateTouched) return;
    m.updatedAt = this.nextTime(m.updatedAt);
    this.listTouchedMarket(m);
  }

  listTouchedMarket(m: Market): void {
    if (m.stateTouched) return;
    m.stateTouched = true;
    this.touchedMarkets.push(m);
  }

  touchTpSl(t: TpSlState): void {
    if (this.touchedTpsl.has(t)) return;
    t.updatedAt = this.nextTime(t.updatedAt);
    this.touchedTpsl.add(t);
  }

  /** Lists a TpSl whose updatedAt the caller has set already. */
  listTouchedTpSl(t: TpSlState): void {
    this.touchedTpsl.add(t);
  }

  /** A balance change, published on the user's funding channel. */
  fundingChange(acc: Account, quantity: Money, reason: FundingChangeView['reason']): void {
    if (quantity === 0n) return;
    acc.updatedAt = this.nextTime(acc.updatedAt);
    this.events.push({ type: 'funding', funding: { userId: acc.userId, coin: COIN, quantity, balance: acc.balance, reason, updatedAt: acc.updatedAt } });
  }

  /** Emits the final state of everything touched; `keepViews` keeps the order views for the reply. */
  flush(keepViews: boolean): void {
    const ev = this.events;
    const touched = this.touchedOrders;
    const spent = this.s.spent;
    for (let i = 0; i < touched.length; i++) {
      const o = touched[i];
      o.touched = false;
      // Every order that stops being open is touched: its replace signatures can never apply again.
      if (spent.scoped > 0 && !o.isLive) spent.endScope(o.userId, o.key);
      const view = o.view();
      ev.push({ type: 'order', order: view });
      if (keepViews) this.flushedViews.push(view);
    }
    if (keepViews) {
      // The array itself is kept for the reply; the next command lists into the emptied one.
      this.touchedOrders = this.flushedOrders;
      this.flushedOrders = touched;
    } else {
      empty(touched);
    }
    for (const t of this.touchedTpsl) ev.push({ type: 'tpsl', tpsl: tpslView(t) });
    clearSet(this.touchedTpsl);
    const positions = this.touchedPositions;
    const owners = this.touchedPositionOwners;
    for (let i = 0; i < positions.length; i++) {
      const pos = positions[i];
      const acc = owners[i];
      pos.touched = false;
      ev.push({ type: 'position', position: this.positionView(acc, pos) });
      // A closed position is reported once (quantity 0), then forgotten; the next fill opens a new one.
      if (pos.qty === 0 && acc.positions.get(pos.instrument) === pos) acc.positions.delete(pos.instrument);
    }
    empty(positions);
    empty(owners);
    for (const m of this.touchedBooks) {
      m.bookTouched = false;
      ev.push({ type: 'book', instrument: m.id, t: m.bookT });
    }
    empty(this.touchedBooks);
    for (const m of this.touchedMarkets) {
      m.stateTouched = false;
      ev.push({ type: 'instrument', instrument: m.stateView() });
    }
    empty(this.touchedMarkets);
  }
}
