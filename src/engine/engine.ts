/**
 * The exchange engine: one deterministic state machine. `apply(command)` validates, changes in-memory state
 * (books, accounts, positions, TpSl) and returns a reply plus the events it caused. No I/O, no wall clock,
 * no randomness: time and ids arrive with the command, so replaying the journal rebuilds the same state.
 *
 * Rules worth knowing (README "Engine rules" has the full list):
 * - Refusals that change nothing (bad input, unknown instrument/order, duplicate id) are `{ok:false}`
 *   replies. Orders that pass validation but break a trading rule (halt, margin, post-only, leverage cap)
 *   are recorded as REJECTED with a `rejectedReason` (their id is used).
 * - Stop-limit orders and TpSl trigger on the MARK price, at price ticks.
 * - Market orders spend `cashQuantity` of notional (USDT) and never fill beyond mark × (1 ± slippageLimit).
 * - IOC/FOK remainders and DAY orders at the next UTC midnight end as EXPIRED.
 */
import { createHash } from 'node:crypto';
import {
  applyRateCeil, MAX_UNITS, mulDivHalfUp, notional, notionalExact, notionalFrom, productParts, productScratch, quotientScratch, rateCeilUnits, scaledQuotient,
  SCALE_N, type Money, type Units,
} from '../domain/fixed.js';
import { SIDES, TPSL_TYPES, type FillRole, type OrderGroup, type Side, type TimeInForce, type TradingState } from '../domain/enums.js';
import type { InstrumentConfig } from '../domain/instrument.js';
import { dayNumber, isOrderIdV2, ORDER_ID_EPOCH_MS, orderIdDay, orderIdDigits, systemOrderId } from '../domain/order-id.js';
import {
  collateralUnits, costUnits, instrumentLock, lockOf, lockUnits, newAccount, newPosition, openVolumeOf, smallMoney, SUM_LIMIT, unrealizedPnL, unrealizedUnits,
  type Account, type Position,
} from './account.js';
import { isReadableSnapshotVersion, SNAPSHOT_VERSION, type EngineSnapshot, type ExchangeEngine } from './api.js';
import type { Command, PlaceOrderInput, ReplaceInput, TpSlInput } from './commands.js';
import { fundingPayments, fundingRate, MAX_FUNDING_INTERVAL_MS, premiumSample } from './funding.js';
import { findInvariantViolation } from './invariants.js';
import { Liquidator } from './liquidation.js';
import { adlLevel, adlLevelUnits, bankruptcyPrice, bankruptcyPriceUnits } from './margin.js';
import { compileInstrument, isMultiple, maintenanceMargin, maintenanceMarginUnits, notionalCap, type InstrumentRules } from './instrument-rules.js';
import { Market } from './market.js';
import { OrderState } from './order.js';
import { OrderIdIndex } from './order-id-index.js';
import { applyFill, signedCost } from './position-math.js';
import type {
  AvailableBalanceView, BatchItemResult, CommandError, CommandResult, DepthView, EngineEvent, FundingChangeView,
  InstrumentStateView, MatcherView, OrderView, PositionView, Reply, TpSlView, TransferView,
} from './records.js';
import { RiskQueue } from './risk-queue.js';
import { clearSet, empty } from './scratch.js';
import { restoreState, serializeState } from './snapshot.js';
import { SpentKeys } from './spent-keys.js';
import { SIGNED_KINDS, signatureRefusal, spendSignature } from './spent-signatures.js';
import type { EngineState, TransferState } from './state.js';
import { isLiveTpSl, tpslFires, tpslView, type TpSlState } from './tpsl.js';
import { TpSlIndex } from './tpsl-index.js';

const DAY_MS = 86_400_000;
const COIN = 'usdt';
export const MAX_BATCH_CREATE = 20;
export const MAX_BATCH_REPLACE = 50;


/** A reply while the command runs: its orders become views (the ones the events carry) when it ends. */
type Draft = Reply<OrderState>;

function fail(status: CommandError['status'], code: string, message: string): Draft {
  return { ok: false, error: { status, code, message } };
}

function isPositiveUnits(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0 && v <= MAX_UNITS;
}

/** Deterministic UUID-shaped id: `kind` (8 hex) + counter. */
function sequenceUuid(kind: string, n: number): string {
  const hex = n.toString(16).padStart(12, '0');
  return `${kind}-0000-4000-8000-${hex}`;
}

const LIMIT_TIFS: ReadonlySet<unknown> = new Set(['GTC', 'DAY', 'IOC', 'FOK']);
const STOP_TIFS: ReadonlySet<unknown> = new Set(['GTC', 'DAY']);

function checkQuantity(r: InstrumentRules, q: unknown, reduceOnly: boolean): Draft | null {
  if (!isPositiveUnits(q)) return fail(400, 'INVALID_QUANTITY', 'Quantity must be positive');
  if (!isMultiple(q, r.quantityIncrement)) return fail(400, 'INVALID_QUANTITY', `Quantity must be a multiple of ${r.config.quantityIncrement}`);
  if (q > r.maxQuantity) return fail(400, 'INVALID_QUANTITY', `Quantity must be at most ${r.config.maxQuantity}`);
  if (!reduceOnly && q < r.minQuantity) return fail(400, 'INVALID_QUANTITY', `Quantity must be at least ${r.config.minQuantity}`);
  return null;
}

function checkPrice(r: InstrumentRules, p: unknown, name: string): Draft | null {
  if (!isPositiveUnits(p) || !isMultiple(p, r.priceIncrement) || p < r.minPrice || p > r.maxPrice) {
    return fail(400, 'INVALID_PRICE', `Invalid price: ${name} must be a multiple of ${r.config.priceIncrement} from ${r.config.minPrice} to ${r.config.maxPrice}`);
  }
  return null;
}

/** Rejection reason of an order over its leverage tier's notional cap. */
function capRefusal(leverage: number): string {
  return `Position size exceeds the maximum for ${leverage}x leverage`;
}

/** quantity × price < min, without a bigint when the notional is a safe integer (number < bigint compares exactly). */
function notionalBelow(quantity: Units, price: Units, min: Money): boolean {
  const v = notionalExact(quantity, price);
  return v >= 0 ? v < min : notionalFrom(v, quantity, price) < min;
}

/** price ∉ [mark − band, mark + band], exactly (bigint: the sum may pass 2^53). */
function outsideBand(price: Units, mark: Units, band: Money): boolean {
  return BigInt(price) > BigInt(mark) + band || BigInt(price) < BigInt(mark) - band;
}

export class Engine implements ExchangeEngine {
  /** Everything that is state lives in `s` (snapshot/hash); the rest is per-command scratch or derived. */
  readonly s: EngineState;
  /** DAY orders in expiry order (derived from live orders). */
  private dayOrders: OrderState[] = [];
  private readonly liquidator: Liquidator;

  // ---- per-command scratch ----
  private ts = 0;
  private events: EngineEvent[] = [];
  // Changed orders, books and instruments of the command being applied: arrays deduplicated by a flag on
  // each entity rather than Sets, whose clear() allocates a new table on every command (V8).
  private touchedOrders: OrderState[] = [];
  /** Views of the orders flushed by the current command, while its reply is built. */
  private flushedOrders: OrderState[] = [];
  private readonly flushedViews: OrderView[] = [];
  /** Changed positions with their accounts (parallel arrays; a position's `touched` flag dedupes, as for orders). */
  private readonly touchedPositions: Position[] = [];
  private readonly touchedPositionOwners: Account[] = [];
  private readonly touchedBooks: Market[] = [];
  private readonly touchedMarkets: Market[] = [];
  private readonly touchedTpsl = new Set<TpSlState>();
  /** The live TpSl by user, instrument and the order they wait on (derived from s.tpsls). */
  private readonly tpslIndex = new TpSlIndex();
  /** Accounts whose margin may have changed in this command (fills, funding, price ticks): checked before the command ends. */
  private readonly riskCandidates = new RiskQueue();

  constructor(state?: EngineState) {
    this.s = state ?? {
      seq: 0,
      matcher: { state: 'active', updatedAt: 0 },
      markets: new Map(),
      accounts: new Map(),
      tpsls: new Map(),
      transfers: new Map(),
      transferIds: new Set(),
      totals: { deposits: 0n, withdrawals: 0n, fees: 0n, reserveFund: 0n },
      counters: { execution: 0, position: 0, tpsl: 0, systemOrder: 0, placement: 0 },
      orderIds: new OrderIdIndex<OrderState>(),
      prunedDay: 0,
      spent: new SpentKeys(),
    };
    for (const acc of this.s.accounts.values()) {
      for (const o of acc.orders.values()) if (o.expiresAt > 0) this.dayOrders.push(o);
    }
    this.dayOrders.sort((a, b) => a.expiresAt - b.expiresAt || a.placedSeq - b.placedSeq);
    for (const acc of this.s.accounts.values()) {
      for (const pos of acc.positions.values()) if (pos.qty !== 0) this.s.markets.get(pos.instrument)!.holders.add(acc);
    }
    for (const t of this.s.tpsls.values()) {
      const order = t.status === 'waitOrder' && t.orderKey !== null ? this.s.orderIds.lookup(t.userId, t.orderKey) ?? null : null;
      this.tpslIndex.add(t, order);
    }
    this.liquidator = new Liquidator({
      s: this.s,
      cancelOrders: (acc, reason) => {
        for (const o of acc.orders.values().sort((a, b) => a.placedSeq - b.placedSeq)) this.cancelLive(o, 'CANCELLED', reason);
      },
      cancelTpSls: (userId, reason) => this.cancelUserTpSls(userId, reason),
      liquidationOrder: (acc, m, qty, limit) => this.systemOrder(acc, m, 'liquidation', qty, limit),
      adlTrade: (m, acc, counterparty, qty, price) => this.adlTrade(m, acc, counterparty, qty, price),
      coverFromReserve: (acc, amount) => {
        acc.balance += amount;
        this.s.totals.reserveFund -= amount;
        this.fundingChange(acc, amount, 'reserve-fund');
      },
      setMarginCall: (acc, flag) => {
        if (acc.marginCall === flag) return;
        acc.marginCall = flag;
        acc.updatedAt = this.nextTime(acc.updatedAt);
        this.events.push({ type: 'account', userId: acc.userId, marginCall: flag, updatedAt: acc.updatedAt });
      },
    });
  }

  get seq(): number {
    return this.s.seq;
  }

  // =====================================================================================================
  // Command dispatch
  // =====================================================================================================

  apply(cmd: Command): CommandResult {
    this.s.seq++;
    this.ts = cmd.ts;
    this.events = [];
    this.expireDayOrders();
    this.pruneUsedIds();
    let reply: Draft;
    switch (cmd.kind) {
      case 'instrument.upsert': reply = this.upsertInstrument(cmd.config); break;
      case 'instrument.trading': reply = this.setTrading(cmd.instrument, cmd.trading); break;
      case 'matcher.state': reply = this.setMatcher(cmd.state); break;
      case 'funds.deposit': reply = this.deposit(cmd.userId, cmd.amount, cmd.transferId); break;
      case 'funds.withdraw': reply = this.withdraw(cmd.userId, cmd.amount, cmd.transferId, cmd.recipient, cmd.digest); break;
      case 'funds.withdraw.settle': reply = this.settleWithdrawal(cmd.transferId, cmd.success); break;
      case 'funds.withdraw.hold': reply = this.holdWithdrawal(cmd.transferId, cmd.hold); break;
      case 'order.place': reply = this.placeCommand(cmd.userId, cmd.order); break;
      case 'order.placeBatch': reply = this.placeBatch(cmd.userId, cmd.instrument, cmd.orders); break;
      case 'order.replace': reply = this.replaceCommand(cmd.userId, cmd.replace); break;
      case 'order.replaceBatch': reply = this.replaceBatch(cmd.userId, cmd.instrument, cmd.items); break;
      case 'order.cancel': reply = this.cancelCommand(cmd.userId, cmd.orderId); break;
      case 'order.cancelAll': reply = this.cancelAll(cmd.userId, cmd.instrument); break;
      case 'order.cancelMany': reply = this.cancelMany(cmd.userId, cmd.orderIds); break;
      case 'position.leverage': reply = this.changeLeverage(cmd.userId, cmd.instrument, cmd.leverage); break;
      case 'position.close': reply = this.closePosition(cmd.userId, cmd.instrument, cmd.id, cmd.quantity, cmd.leverage); break;
      case 'price.tick': reply = this.priceTick(cmd.instrument, cmd.indexPrice, cmd.markPrice); break;
      case 'funding.settle': reply = this.settleFunding(cmd.instrument, cmd.intervalMs); break;
      case 'tpsl.create': reply = this.signedTpSl(cmd.userId, cmd.digest, () => this.createTpSl(cmd.userId, cmd.instrument, cmd.type, cmd.side, cmd.quantity, cmd.price, cmd.orderId)); break;
      case 'tpsl.modify': reply = this.signedTpSl(cmd.userId, cmd.digest, () => this.modifyTpSl(cmd.userId, cmd.instrument, cmd.id, cmd.type, cmd.side, cmd.quantity, cmd.price)); break;
      case 'tpsl.cancel': reply = this.cancelTpSl(cmd.userId, cmd.instrument, cmd.id); break;
      default: reply = fail(400, 'UNKNOWN_COMMAND', `Unknown command ${(cmd as { kind: string }).kind}`);
    }
    if (this.riskCandidates.size > 0 || this.liquidator.deficitsPayable) this.liquidator.sweep(this.riskCandidates);
    const withOrders = reply.ok && (reply.order !== undefined || reply.orders !== undefined);
    this.flushTouched(withOrders);
    return { reply: withOrders ? this.replyWithViews(reply) : (reply as Reply), events: this.events };
  }

  /** The reply's orders as the views the command's events carry (their state when the command ended). */
  private replyWithViews(draft: Draft): Reply {
    if (!draft.ok) return draft;
    const flushed = this.flushedOrders;
    const views = this.flushedViews;
    const { order, orders } = draft;
    const reply = draft as unknown as Reply & { ok: true }; // swapped in place: the draft is not used again
    if (order !== undefined) {
      const i = flushed.indexOf(order);
      reply.order = i >= 0 ? views[i] : order.view();
    }
    if (orders !== undefined) {
      // A few orders: found by scanning the flushed ones; a mass cancel's hundreds: through a map.
      if (orders.length <= 16) {
        reply.orders = orders.map((o) => {
          const i = flushed.indexOf(o);
          return i >= 0 ? views[i] : o.view();
        });
      } else {
        const byOrder = new Map<OrderState, OrderView>();
        for (let i = 0; i < flushed.length; i++) byOrder.set(flushed[i], views[i]);
        reply.orders = orders.map((o) => byOrder.get(o) ?? o.view());
      }
    }
    empty(flushed);
    empty(views);
    return reply;
  }

  // =====================================================================================================
  // Time-driven housekeeping
  // =====================================================================================================

  /** DAY orders expire at the first command at or after the UTC midnight following their creation. */
  private expireDayOrders(): void {
    const list = this.dayOrders;
    if (list.length === 0 || list[0].expiresAt > this.ts) return;
    let i = 0;
    while (i < list.length && list[i].expiresAt <= this.ts) i++;
    // Expire in a canonical order, not the list's (a restored engine rebuilds the list sorted differently),
    // so the events are the same with or without a snapshot restore in between.
    const due = list.splice(0, i).filter((o) => o.isLive);
    due.sort((a, b) => a.createdAt - b.createdAt || a.userId - b.userId || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    // cancelLive: out of the book (or the stop list), reserve released, no longer open.
    for (const o of due) this.cancelLive(o, 'EXPIRED', 'Day order expired');
  }

  /** Used order ids older than the id window can never be used again (the window refuses them): forget them. */
  private pruneUsedIds(): void {
    const today = dayNumber(this.ts);
    if (today <= this.s.prunedDay) return;
    this.s.prunedDay = today;
    this.s.orderIds.prune(today - 1);
  }

  // =====================================================================================================
  // Touch helpers: entities changed in this command; their final state is emitted once, in flushTouched.
  // Comparison fields (updatedAt, t) strictly increase per entity, as clients require.
  // =====================================================================================================

  private nextTime(prev: number): number {
    return this.ts > prev ? this.ts : prev + 1;
  }

  private touchOrder(o: OrderState): void {
    if (o.touched) return;
    o.updatedAt = this.nextTime(o.updatedAt);
    this.listTouched(o);
  }

  /** Lists an order changed by this command (a new one keeps its creation time as updatedAt). */
  private listTouched(o: OrderState): void {
    if (o.touched) return;
    o.touched = true;
    this.touchedOrders.push(o);
  }

  private touchPosition(acc: Account, pos: Position): void {
    if (pos.touched === true) return;
    pos.updatedAt = this.nextTime(pos.updatedAt);
    this.listTouchedPosition(acc, pos);
  }

  private listTouchedPosition(acc: Account, pos: Position): void {
    pos.touched = true;
    this.touchedPositions.push(pos);
    this.touchedPositionOwners.push(acc);
  }

  /** Takes a position off the changed list (closed and replaced by a new one within the command). */
  private unlistTouchedPosition(pos: Position): void {
    const i = this.touchedPositions.indexOf(pos);
    if (i < 0) return;
    pos.touched = false;
    this.touchedPositions.splice(i, 1);
    this.touchedPositionOwners.splice(i, 1);
  }

  private touchBook(m: Market): void {
    if (m.bookTouched) return;
    m.bookT = this.nextTime(m.bookT);
    m.bookTouched = true;
    this.touchedBooks.push(m);
  }

  private touchMarket(m: Market): void {
    if (m.stateTouched) return;
    m.updatedAt = this.nextTime(m.updatedAt);
    this.listTouchedMarket(m);
  }

  private listTouchedMarket(m: Market): void {
    if (m.stateTouched) return;
    m.stateTouched = true;
    this.touchedMarkets.push(m);
  }

  private touchTpSl(t: TpSlState): void {
    if (this.touchedTpsl.has(t)) return;
    t.updatedAt = this.nextTime(t.updatedAt);
    this.touchedTpsl.add(t);
  }

  /** Emits the final state of everything touched; `keepViews` keeps the order views for the reply (replyWithViews). */
  private flushTouched(keepViews: boolean): void {
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

  private fundingChange(acc: Account, quantity: Money, reason: FundingChangeView['reason']): void {
    if (quantity === 0n) return;
    acc.updatedAt = this.nextTime(acc.updatedAt);
    this.events.push({ type: 'funding', funding: { userId: acc.userId, coin: COIN, quantity, balance: acc.balance, reason, updatedAt: acc.updatedAt } });
  }

  // =====================================================================================================
  // Instruments and matcher
  // =====================================================================================================

  private upsertInstrument(config: InstrumentConfig): Draft {
    let rules: InstrumentRules;
    try {
      if (!config || typeof config.id !== 'string' || !/^[A-Z0-9_-]{2,32}$/.test(config.id)) throw new Error('invalid instrument id');
      rules = compileInstrument(config);
      if (rules.priceIncrement <= 0 || rules.quantityIncrement <= 0) throw new Error('increments must be positive');
      if (!Number.isInteger(rules.maxLeverage) || rules.maxLeverage < 1 || rules.maxLeverage > 300) throw new Error('maxLeverage must be 1..300');
      if (rules.minQuantity <= 0 || rules.maxQuantity < rules.minQuantity) throw new Error('quantity bounds');
      if (rules.minPrice <= 0 || rules.maxPrice < rules.minPrice) throw new Error('price bounds');
    } catch (e) {
      return fail(400, 'INVALID_INSTRUMENT', `Invalid instrument configuration: ${(e as Error).message}`);
    }
    const existing = this.s.markets.get(config.id);
    if (existing) {
      existing.rules = rules;
      existing.trading = config.trading;
      this.touchMarket(existing);
    } else {
      const m = new Market(rules, this.ts);
      this.s.markets.set(config.id, m);
      this.listTouchedMarket(m);
    }
    return { ok: true };
  }

  private setTrading(instrument: string, trading: TradingState): Draft {
    const m = this.s.markets.get(instrument);
    if (!m) return fail(404, 'INSTRUMENT_NOT_FOUND', `Unknown instrument ${instrument}`);
    if (!['all', 'restricted', 'none', 'onlyClose'].includes(trading)) return fail(400, 'INVALID_TRADING_STATE', `Invalid trading state ${trading}`);
    m.trading = trading;
    m.rules = { ...m.rules, config: { ...m.rules.config, trading } };
    this.touchMarket(m);
    return { ok: true };
  }

  private setMatcher(state: string): Draft {
    if (typeof state !== 'string' || state.length === 0 || state.length > 64) return fail(400, 'INVALID_MATCHER_STATE', 'Invalid matcher state');
    this.s.matcher = { state, updatedAt: this.nextTime(this.s.matcher.updatedAt) };
    this.events.push({ type: 'matcher', matcher: { ...this.s.matcher } });
    return { ok: true };
  }

  // =====================================================================================================
  // Funds
  // =====================================================================================================

  private accountOf(userId: number): Account {
    let acc = this.s.accounts.get(userId);
    if (acc === undefined) {
      acc = newAccount(userId);
      this.s.accounts.set(userId, acc);
    }
    return acc;
  }

  private static parseAmount(amount: string): Money | null {
    if (typeof amount !== 'string' || !/^[0-9]{1,30}$/.test(amount)) return null;
    const v = BigInt(amount);
    return v > 0n ? v : null;
  }

  private static validUser(userId: number): boolean {
    return Number.isSafeInteger(userId) && userId > 0;
  }

  private deposit(userId: number, amountText: string, transferId: string): Draft {
    const amount = Engine.parseAmount(amountText);
    if (!Engine.validUser(userId)) return fail(400, 'INVALID_USER', 'Invalid user');
    if (amount === null) return fail(400, 'INVALID_AMOUNT', 'Amount must be a positive integer count of 1e-8');
    if (typeof transferId !== 'string' || transferId.length === 0 || this.s.transferIds.has(transferId)) {
      return fail(409, 'DUPLICATE_TRANSFER', 'Transfer id already used');
    }
    const acc = this.accountOf(userId);
    acc.balance += amount;
    this.s.totals.deposits += amount;
    this.s.transferIds.add(transferId);
    const transfer: TransferView = { id: transferId, userId, type: 'deposit', coin: COIN, amount, fee: 0n, status: 'done', createdAt: this.ts, updatedAt: this.ts };
    this.events.push({ type: 'transfer', transfer });
    this.fundingChange(acc, amount, 'deposit');
    this.riskCandidates.add(acc); // more collateral may end a margin call
    return { ok: true, transfer };
  }

  private withdraw(userId: number, amountText: string, transferId: string, recipient: string | undefined, digest: string | undefined): Draft {
    const amount = Engine.parseAmount(amountText);
    if (!Engine.validUser(userId)) return fail(400, 'INVALID_USER', 'Invalid user');
    if (amount === null) return fail(400, 'INVALID_AMOUNT', 'Amount must be positive');
    const used = signatureRefusal(this.s.spent, userId, SIGNED_KINDS.withdraw, digest);
    if (used) return { ok: false, error: used };
    if (typeof transferId !== 'string' || transferId.length === 0 || this.s.transferIds.has(transferId)) {
      return fail(409, 'DUPLICATE_TRANSFER', 'Transfer id already used');
    }
    const acc = this.s.accounts.get(userId);
    if (!acc || this.available(acc) < amount) return fail(422, 'INSUFFICIENT_BALANCE', 'Insufficient available balance');
    acc.pendingWithdrawals += amount;
    this.s.transferIds.add(transferId);
    const transfer: TransferState = { id: transferId, userId, type: 'withdraw', coin: COIN, amount, fee: 0n, status: 'pending', createdAt: this.ts, updatedAt: this.ts };
    if (typeof recipient === 'string') transfer.recipient = recipient;
    this.s.transfers.set(transferId, transfer);
    spendSignature(this.s.spent, userId, SIGNED_KINDS.withdraw, digest);
    this.events.push({ type: 'transfer', transfer: { ...transfer } });
    return { ok: true, transfer: { ...transfer } };
  }

  private settleWithdrawal(transferId: string, success: boolean): Draft {
    const t = this.s.transfers.get(transferId);
    if (!t) return fail(404, 'TRANSFER_NOT_FOUND', 'No pending withdrawal with this id');
    if (t.status === 'blocked') return fail(409, 'TRANSFER_BLOCKED', 'The withdrawal is held by an operator');
    const acc = this.accountOf(t.userId);
    acc.pendingWithdrawals -= t.amount;
    t.status = success ? 'done' : 'error';
    t.updatedAt = this.nextTime(t.updatedAt);
    this.s.transfers.delete(transferId);
    if (success) {
      acc.balance -= t.amount;
      this.s.totals.withdrawals += t.amount;
      this.fundingChange(acc, -t.amount, 'withdraw');
    }
    this.riskCandidates.add(acc);
    this.events.push({ type: 'transfer', transfer: { ...t } });
    return { ok: true, transfer: { ...t } };
  }

  /** The funds stay locked while held; only the status (and updatedAt) changes. */
  private holdWithdrawal(transferId: string, hold: boolean): Draft {
    const t = this.s.transfers.get(transferId);
    if (!t) return fail(404, 'TRANSFER_NOT_FOUND', 'No pending withdrawal with this id');
    const status = hold ? 'blocked' : 'pending';
    if (t.status === status) return fail(409, 'TRANSFER_STATUS', `The withdrawal is already ${status}`);
    t.status = status;
    t.updatedAt = this.nextTime(t.updatedAt);
    this.events.push({ type: 'transfer', transfer: { ...t } });
    return { ok: true, transfer: { ...t } };
  }

  // =====================================================================================================
  // Margin
  // =====================================================================================================

  /**
   * Available balance per the wire contract: balance − pending withdrawals + Σ min(0, uPnL at mark) − Σ lock.
   * The extra arguments add open-order volume (exact, 1e-16 units) on one instrument and override that
   * instrument's leverage: used to test an order or a leverage change before accepting it.
   */
  private available(acc: Account, extraInstrument: string | null = null, extraBuyRaw = 0n, extraSellRaw = 0n, extraLeverage = 1): Money {
    let total = acc.pendingWithdrawals === 0n ? acc.balance : acc.balance - acc.pendingWithdrawals;
    let sawExtra = false;
    for (const vol of acc.openVolume.values()) {
      const instrument = vol.instrument;
      const pos = acc.positions.get(instrument);
      if (instrument === extraInstrument) {
        sawExtra = true;
        total -= lockOf(pos, vol.buyRaw + extraBuyRaw, vol.sellRaw + extraSellRaw, extraLeverage);
      } else {
        total -= lockOf(pos, vol.buyRaw, vol.sellRaw, acc.leverage.get(instrument) ?? 1);
      }
      if (pos !== undefined && pos.qty !== 0) {
        const m = this.s.markets.get(instrument);
        const u = unrealizedPnL(pos, m ? m.valuationPrice : null);
        if (u < 0n) total += u;
      }
    }
    // An instrument the user has no orders/position on yet has no openVolume entry: count the extra volume
    // here rather than creating the entry (a refused command must not change state).
    if (extraInstrument !== null && !sawExtra) total -= lockOf(acc.positions.get(extraInstrument), extraBuyRaw, extraSellRaw, extraLeverage);
    return total;
  }

  /**
   * available() in doubles, with `extraUnits`/`extraFrac` (parts of quantity × price, see productParts) more
   * open volume on one side of `extraInstrument` at `extraLeverage`; NaN when some amount is too large to be
   * exact in doubles (the caller then uses available()). See account.ts for the bounds that keep it exact.
   */
  private availableUnits(acc: Account, extraInstrument: string, extraIsBid: boolean, extraUnits: number, extraFrac: number, extraLeverage: number): number {
    let total = collateralUnits(acc);
    let sawExtra = false;
    for (const vol of acc.openVolume.values()) {
      const instrument = vol.instrument;
      const pos = acc.positions.get(instrument);
      let lock: number;
      if (instrument === extraInstrument) {
        sawExtra = true;
        lock = lockUnits(pos, vol, extraLeverage, extraIsBid, extraUnits, extraFrac);
      } else {
        lock = lockUnits(pos, vol, acc.leverage.get(instrument) ?? 1, false, 0, 0);
      }
      if (lock < 0) return NaN;
      total -= lock;
      if (pos !== undefined && pos.qty !== 0) {
        const m = this.s.markets.get(instrument);
        const u = unrealizedUnits(pos, m ? m.valuationPrice : null);
        if (u < 0) total += u;
        else if (u !== u) return NaN;
      }
      if (!(total <= SUM_LIMIT && total >= -SUM_LIMIT)) return NaN; // also NaN
    }
    if (!sawExtra) {
      const lock = lockUnits(acc.positions.get(extraInstrument), undefined, extraLeverage, extraIsBid, extraUnits, extraFrac);
      if (lock < 0) return NaN;
      total -= lock;
    }
    return total;
  }

  private accountView(acc: Account): AvailableBalanceView {
    const positions: AvailableBalanceView['positions'] = [];
    const openOrders: AvailableBalanceView['openOrders'] = [];
    let negative = 0n;
    let totalLock = 0n;
    for (const [instrument, vol] of acc.openVolume) {
      const pos = acc.positions.get(instrument);
      const lev = acc.leverage.get(instrument) ?? 1;
      const { im, lock, buyVolume, sellVolume } = instrumentLock(pos, vol, lev);
      totalLock += lock;
      const levN = BigInt(lev);
      if (pos && pos.qty !== 0) {
        positions.push({ instrument, side: pos.qty > 0 ? 'BUY' : 'SELL', volume: pos.cost, initialMargin: im });
        const m = this.s.markets.get(instrument);
        const u = unrealizedPnL(pos, m ? m.valuationPrice : null);
        if (u < 0n) negative += u;
      }
      if (buyVolume > 0n) openOrders.push({ instrument, side: 'BUY', unFilledVolume: buyVolume, unFilledInitialMargin: (buyVolume + levN - 1n) / levN });
      if (sellVolume > 0n) openOrders.push({ instrument, side: 'SELL', unFilledVolume: sellVolume, unFilledInitialMargin: (sellVolume + levN - 1n) / levN });
    }
    const raw = acc.balance - acc.pendingWithdrawals + negative - totalLock;
    return {
      userId: acc.userId, balance: acc.balance, pendingWithdrawals: acc.pendingWithdrawals, positions, openOrders,
      negativeUnrealizedPnL: negative, totalLock, availableBalance: raw > 0n ? raw : 0n, marginCall: acc.marginCall,
      updatedAt: acc.updatedAt,
    };
  }

  // =====================================================================================================
  // Orders: validation and placement
  // =====================================================================================================

  /** Static checks of an order input against its instrument: a refusal, or null when it may be placed. */
  private validateOrder(userId: number, input: PlaceOrderInput, m: Market | undefined): Draft | null {
    if (!Engine.validUser(userId)) return fail(400, 'INVALID_USER', 'Invalid user');
    if (!input || typeof input !== 'object') return fail(400, 'INVALID_ORDER', 'Invalid order');
    if (!m) return fail(404, 'INSTRUMENT_NOT_FOUND', `Unknown instrument ${String(input.instrument)}`);
    const r = m.rules;
    if (typeof input.id !== 'string' || !isOrderIdV2(input.id)) return fail(400, 'INVALID_ORDER_ID', 'Order id must match [0-9]{5}:[0-9A-Fa-f]{26}');
    const day = orderIdDay(input.id);
    const today = dayNumber(this.ts);
    if (day < today - 1 || day > today + 1) return fail(400, 'INVALID_ORDER_ID', 'Invalid order ID date');
    if (input.side !== 'BUY' && input.side !== 'SELL') return fail(400, 'INVALID_SIDE', 'Side must be BUY or SELL');
    if (!Number.isInteger(input.leverage) || input.leverage < 1 || input.leverage > r.maxLeverage) {
      return fail(400, 'INVALID_LEVERAGE', `Leverage must be an integer from 1 to ${r.maxLeverage}`);
    }
    const tif = input.timeInForce;
    const reduceOnly = input.reduceOnly === true;
    if (input.type === 'LIMIT' || input.type === 'STOP_LIMIT') {
      if (input.type === 'LIMIT' ? !LIMIT_TIFS.has(tif) : !STOP_TIFS.has(tif)) {
        return fail(400, 'INVALID_TIME_IN_FORCE', `Invalid timeInForce ${String(tif)} for ${input.type}`);
      }
      const bad = checkQuantity(r, input.quantity, reduceOnly) ?? checkPrice(r, input.limitPrice, 'limitPrice')
        ?? (input.type === 'STOP_LIMIT' ? checkPrice(r, input.stopPrice, 'stopPrice') : null);
      if (bad) return bad;
      if (!reduceOnly && notionalBelow(input.quantity!, input.limitPrice!, r.minVolume)) {
        return fail(400, 'INVALID_VOLUME', `Order volume must be at least ${r.config.minVolume}`);
      }
    } else if (input.type === 'MARKET') {
      if (tif !== 'IOC' && tif !== 'FOK') return fail(400, 'INVALID_TIME_IN_FORCE', 'Market orders are IOC or FOK');
      if (reduceOnly && input.cashQuantity === undefined) {
        const bad = checkQuantity(r, input.quantity, reduceOnly);
        if (bad) return bad;
      } else {
        if (!isPositiveUnits(input.cashQuantity)) return fail(400, 'INVALID_CASH_QUANTITY', 'cashQuantity must be positive');
        if (BigInt(input.cashQuantity) < r.minVolume) return fail(400, 'INVALID_VOLUME', `Order volume must be at least ${r.config.minVolume}`);
      }
    } else {
      return fail(400, 'INVALID_ORDER_TYPE', `Unsupported order type ${String(input.type)}`);
    }
    if (input.postOnly && input.type !== 'LIMIT') return fail(400, 'INVALID_POST_ONLY', 'postOnly applies to limit orders only');
    if (input.smp !== undefined && (typeof input.smp !== 'object' || typeof input.smp.smp !== 'boolean' || typeof input.smp.smpId !== 'string')) {
      return fail(400, 'INVALID_SMP', 'smp must be {smp: boolean, smpId: string}');
    }
    if (input.tpsl !== undefined) {
      if (!Array.isArray(input.tpsl) || input.tpsl.length > 10) return fail(400, 'INVALID_TPSL', 'tpsl must be an array of at most 10 items');
      for (const t of input.tpsl) {
        const bad = this.validateTpSlInput(r, t.type, t.side, t.quantity, t.price);
        if (bad) return bad;
        if (t.side === input.side) return fail(400, 'INVALID_TPSL', 'A TpSl must be on the side opposite to its order');
      }
    }
    if (this.s.orderIds.has(userId, input.id)) return fail(409, 'DUPLICATE_ORDER_ID', 'Order id already used');
    return null;
  }

  private validateTpSlInput(r: InstrumentRules, type: unknown, side: unknown, quantity: unknown, price: unknown): Draft | null {
    if (!TPSL_TYPES.includes(type as never)) return fail(400, 'INVALID_TPSL', 'TpSl type must be take-profit or stop-loss');
    if (!SIDES.includes(side as Side)) return fail(400, 'INVALID_TPSL', 'TpSl side must be BUY or SELL');
    if (!(quantity === 0 || isPositiveUnits(quantity)) || !isMultiple(quantity as number, r.quantityIncrement) || (quantity as number) > r.maxQuantity) {
      return fail(400, 'INVALID_TPSL', 'Invalid TpSl quantity');
    }
    if (!isPositiveUnits(price) || !isMultiple(price, r.priceIncrement) || price < r.minPrice || price > r.maxPrice) {
      return fail(400, 'INVALID_TPSL', 'Invalid TpSl price');
    }
    return null;
  }

  private placeCommand(userId: number, input: PlaceOrderInput): Draft {
    const m = input && typeof input === 'object' ? this.s.markets.get(input.instrument) : undefined;
    const refused = this.validateOrder(userId, input, m);
    if (refused) return refused;
    const o = this.place(this.accountOf(userId), m!, input);
    return { ok: true, order: o };
  }

  private placeBatch(userId: number, instrument: string, orders: PlaceOrderInput[]): Draft {
    const m = this.s.markets.get(instrument);
    if (!m) return fail(404, 'INSTRUMENT_NOT_FOUND', `Unknown instrument ${instrument}`);
    if (!Array.isArray(orders) || orders.length < 1 || orders.length > MAX_BATCH_CREATE) {
      return fail(400, 'INVALID_BATCH', `A batch holds 1 to ${MAX_BATCH_CREATE} orders`);
    }
    const batch: BatchItemResult[] = [];
    const placed: OrderState[] = [];
    for (const input of orders) {
      const orderId = input && typeof input.id === 'string' ? input.id : '';
      if (input && input.instrument !== instrument) {
        batch.push({ orderId, success: false, failReason: `Instrument must be ${instrument}` });
        continue;
      }
      if (input && input.type !== 'LIMIT') {
        batch.push({ orderId, success: false, failReason: 'Batch orders are limit orders' });
        continue;
      }
      const refused = this.validateOrder(userId, input, m);
      if (refused) {
        batch.push({ orderId, success: false, failReason: refused.ok ? '' : refused.error.message });
        continue;
      }
      const o = this.place(this.accountOf(userId), m, input);
      placed.push(o);
      batch.push(o.status === 'REJECTED' ? { orderId, success: false, failReason: o.rejectedReason } : { orderId, success: true });
    }
    return { ok: true, batch, orders: placed };
  }

  /** Whether an order on `side` of `qty` (null = any size) only reduces the user's position. */
  private reduces(acc: Account, instrument: string, side: Side, qty: Units | null): boolean {
    const pos = acc.positions.get(instrument);
    if (!pos || pos.qty === 0) return false;
    if ((pos.qty > 0) === (side === 'BUY')) return false;
    return qty === null || qty <= Math.abs(pos.qty);
  }

  /** Creates the order and runs it (its id is used from now on); refusals from here on are REJECTED orders. */
  private place(acc: Account, m: Market, input: PlaceOrderInput): OrderState {
    const o = this.admit(acc, m, input);
    this.retireIfDone(acc, o);
    return o;
  }

  private admit(acc: Account, m: Market, input: PlaceOrderInput): OrderState {
    const r = m.rules;
    const isMarket = input.type === 'MARKET';
    const byCash = isMarket && input.cashQuantity !== undefined;
    const reduceOnly = input.reduceOnly === true;
    const group: OrderGroup = input.group ?? 'manually';
    const o = new OrderState(
      input.id, acc.userId, m.id, input.type, input.side, input.timeInForce, input.postOnly === true, input.leverage,
      byCash ? 0 : input.quantity!, isMarket ? 0 : input.limitPrice!, input.type === 'STOP_LIMIT' ? input.stopPrice! : null,
      group, byCash ? input.cashQuantity! : 0, input.smp && input.smp.smpId !== '' ? input.smp.smpId : null, this.ts,
    );
    o.smp = input.smp?.smp === true;
    o.reduceOnly = reduceOnly;
    o.placedSeq = ++this.s.counters.placement;
    this.listTouched(o);
    if (input.tpsl) for (const t of input.tpsl) this.attachTpSl(acc, o, t);

    // ---- trading rules ----
    if (this.s.matcher.state !== 'active') return this.reject(o, 'Trading is halted');
    if (m.trading === 'none' || m.trading === 'restricted') return this.reject(o, `Trading is not allowed on ${m.id}`);
    const pos = acc.positions.get(m.id);
    if (reduceOnly) {
      if (!pos || pos.qty === 0 || (pos.qty > 0) === o.isBid) return this.reject(o, 'No position to reduce');
      const abs = Math.abs(pos.qty);
      if (!byCash && o.quantity > abs) {
        o.quantity = abs;
        o.remaining = abs;
      }
    }
    const requestedQty = byCash ? null : o.quantity;
    if (m.trading === 'onlyClose' && !this.reduces(acc, m.id, o.side, requestedQty)) {
      return this.reject(o, 'Only position-closing orders are allowed');
    }
    // A cash-sized order's quantity is only known while matching: in onlyClose it may close, never reverse.
    if (m.trading === 'onlyClose' && byCash) o.reduceOnly = true;
    const mark = m.markPrice;
    if (!isMarket && mark !== null && r.fatFinger > 0) {
      // band = mark × fraction, in price units. In safe integers when they are (every real price), else bigint.
      const band = notionalExact(r.fatFinger, mark); // (fraction, price): the split of the price keeps it exact
      const outside = band >= 0 && mark + band <= Number.MAX_SAFE_INTEGER
        ? o.limitPrice > mark + band || o.limitPrice < mark - band
        : outsideBand(o.limitPrice, mark, notional(mark, r.fatFinger));
      if (outside) return this.reject(o, 'Invalid price');
    }

    // ---- margin ----
    if (!reduceOnly) {
      const leverage = o.leverage;
      const refusal = this.marginRefusal(acc, m, o, pos, byCash, requestedQty);
      if (refusal !== null) return this.reject(o, refusal);
      if ((acc.leverage.get(m.id) ?? 1) !== leverage) {
        // The order's leverage becomes the instrument's: the open position must fit that tier too (as in position.leverage).
        const posCap = notionalCap(r, leverage);
        if (posCap !== null && pos && pos.qty !== 0 && pos.cost > posCap) {
          return this.reject(o, capRefusal(leverage));
        }
        acc.leverage.set(m.id, leverage);
        if (pos && pos.qty !== 0) this.touchPosition(acc, pos);
      }
    }

    if (o.type === 'STOP_LIMIT') return this.armStop(acc, m, o);
    return this.execute(acc, m, o);
  }

  /**
   * Why the account cannot take the order on, or null: its available balance with the order's volume added
   * (at the order's leverage) must cover the worst-case fee, and an order that grows the position must keep
   * position + same-side orders within the leverage tier's notional cap. Worked out in doubles when every
   * amount fits (the common case; see lockUnits), else in bigints: the same rules, the same answer.
   */
  private marginRefusal(acc: Account, m: Market, o: OrderState, pos: Position | undefined, byCash: boolean, requestedQty: Units | null): string | null {
    const r = m.rules;
    const leverage = o.leverage;
    const increases = !this.reduces(acc, m.id, o.side, requestedQty);
    const feeRate = r.takerFee > r.makerFee ? r.takerFee : r.makerFee;
    const cap = increases ? notionalCap(r, leverage) : null;
    const sameSidePosition = pos !== undefined && pos.qty !== 0 && (pos.qty > 0) === o.isBid;

    // Volume of the order (quantity × price, or the cash amount) as whole units + remainder at 1e-16.
    if (byCash ? o.cashQuantity <= SUM_LIMIT : productParts(o.quantity, o.limitPrice) && productScratch.units <= SUM_LIMIT) {
      const units = byCash ? o.cashQuantity : productScratch.units;
      const frac = byCash ? 0 : productScratch.frac;
      const fee = increases ? rateCeilUnits(frac > 0 ? units + 1 : units, feeRate) : 0;
      const available = fee < 0 ? NaN : this.availableUnits(acc, m.id, o.isBid, units, frac, leverage);
      if (available === available) {
        if (available - fee < 0) return 'Insufficient available balance';
        if (cap === null) return null;
        const vol = acc.openVolume.get(m.id);
        const capUnits = smallMoney(cap);
        const posValue = sameSidePosition ? costUnits(pos) : 0;
        if (capUnits === capUnits && posValue === posValue && (vol === undefined || vol.exact)) {
          const sameUnits = vol === undefined ? 0 : o.isBid ? vol.buyUnits : vol.sellUnits;
          const sameFrac = vol === undefined ? 0 : o.isBid ? vol.buyFrac : vol.sellFrac;
          const orders = sameUnits + units;
          if (orders <= SUM_LIMIT) {
            // ⌊(same side + order) / 1e8⌋ at 1e-16 = the units plus the carry of the remainders.
            return posValue + orders + (sameFrac + frac >= 100_000_000 ? 1 : 0) > capUnits ? capRefusal(leverage) : null;
          }
        }
      }
    }

    const volumeRaw = byCash ? BigInt(o.cashQuantity) * SCALE_N : BigInt(o.quantity) * BigInt(o.limitPrice);
    const fee = increases ? applyRateCeil((volumeRaw + SCALE_N - 1n) / SCALE_N, feeRate) : 0n;
    if (this.available(acc, m.id, o.isBid ? volumeRaw : 0n, o.isBid ? 0n : volumeRaw, leverage) - fee < 0n) return 'Insufficient available balance';
    if (cap !== null) {
      const vol = acc.openVolume.get(m.id);
      const sameSideRaw = o.isBid ? vol?.buyRaw ?? 0n : vol?.sellRaw ?? 0n;
      const posValue = sameSidePosition ? pos.cost : 0n;
      if (posValue + (sameSideRaw + volumeRaw) / SCALE_N > cap) return capRefusal(leverage);
    }
    return null;
  }

  private reject(o: OrderState, reason: string): OrderState {
    o.status = 'REJECTED';
    o.rejectedReason = reason;
    o.remaining = 0;
    this.endTpSlsOf(o);
    return o;
  }

  /** Runs a LIMIT or MARKET order (or a triggered stop) against the book and rests/ends the remainder. */
  private execute(acc: Account, m: Market, o: OrderState): OrderState {
    const isMarket = o.type === 'MARKET';
    const byCash = isMarket && o.cashQuantity > 0 && o.quantity === 0;
    let limit: Units | null = isMarket ? null : o.limitPrice;
    if (isMarket && m.markPrice !== null && m.rules.slippageLimit > 0) {
      const exact = notionalExact(m.rules.slippageLimit, m.markPrice); // (fraction, price): stays exact in doubles
      const band = exact >= 0 ? exact : Number(notionalFrom(exact, m.markPrice, m.rules.slippageLimit));
      limit = o.isBid ? m.markPrice + band : Math.max(m.markPrice - band, 1);
    }
    const opposite = m.book.side(!o.isBid).best();
    const crosses = opposite !== undefined && (limit === null || (o.isBid ? opposite.price <= limit : opposite.price >= limit));
    if (o.postOnly && crosses) return this.reject(o, 'Post-only order would take liquidity');
    if (o.timeInForce === 'FOK' && !this.canFillCompletely(m, o, limit, byCash)) {
      return this.finishOrder(o, 'EXPIRED', 'Fill-or-kill order could not be filled completely');
    }
    if (crosses) this.match(acc, m, o, limit, byCash);
    if (byCash) {
      o.quantity = o.filledQuantity;
      o.remaining = 0;
    }
    if (o.remaining === 0 && o.filledQuantity > 0 && (!byCash || o.status !== 'EXPIRED')) {
      if (byCash) return this.finishOrder(o, o.filledQuantity > 0 ? 'FILLED' : 'EXPIRED', '');
      this.endTpSlsOf(o); // TpSl still waiting on it resolve as for a filled maker (none were activated if its fills closed the position)
      return o; // FILLED by the last fill
    }
    if (isMarket || o.timeInForce === 'IOC' || o.timeInForce === 'FOK') {
      return this.finishOrder(o, 'EXPIRED', o.filledQuantity > 0 ? 'Unfilled remainder expired' : 'No liquidity within the price limit');
    }
    this.rest(acc, m, o);
    return o;
  }

  /** FOK pre-check: the liquidity within `limit` (not counting self-match-prevented makers) covers the order. */
  private canFillCompletely(m: Market, o: OrderState, limit: Units | null, byCash: boolean): boolean {
    const side = m.book.side(!o.isBid);
    let qtyLeft = o.quantity;
    let cashLeft = BigInt(o.cashQuantity);
    const inc = m.rules.quantityIncrement;
    // Best level first, only as far as needed (`levels` would list the whole side).
    for (let level = side.best(); level !== undefined; level = side.worse(level)) {
      if (limit !== null && (o.isBid ? level.price > limit : level.price < limit)) return false;
      for (let n = level.head as OrderState | null; n !== null; n = n.next as OrderState | null) {
        if (this.selfMatch(o, n)) continue;
        if (byCash) {
          let q = Number((cashLeft * SCALE_N) / BigInt(level.price));
          q -= q % inc;
          if (q <= 0) return true;
          const take = q < n.remaining ? q : n.remaining;
          cashLeft -= notional(take, level.price);
          if (take < n.remaining) return true;
        } else {
          qtyLeft -= n.remaining;
          if (qtyLeft <= 0) return true;
        }
      }
    }
    return false;
  }

  private selfMatch(taker: OrderState, maker: OrderState): boolean {
    if (!taker.smp) return false;
    return maker.userId === taker.userId || (taker.smpId !== null && maker.smpId === taker.smpId);
  }

  /** Price-time priority matching of `taker` against the opposite side, down to `limit` (null = none). */
  private match(acc: Account, m: Market, taker: OrderState, limit: Units | null, byCash: boolean): void {
    const side = m.book.side(!taker.isBid);
    const inc = m.rules.quantityIncrement;
    let cashLeft = BigInt(taker.cashQuantity);
    for (;;) {
      const level = side.best();
      if (level === undefined) break;
      if (limit !== null && (taker.isBid ? level.price > limit : level.price < limit)) break;
      let maker = level.head as OrderState | null;
      let stop = false;
      while (maker !== null) {
        const next = maker.next as OrderState | null;
        if (this.selfMatch(taker, maker)) {
          this.cancelLive(maker, 'CANCELLED', 'Self-match prevention');
          maker = next;
          continue;
        }
        let q: Units;
        if (byCash) {
          let affordable = Number((cashLeft * SCALE_N) / BigInt(level.price));
          affordable -= affordable % inc;
          if (taker.reduceOnly) {
            const p = acc.positions.get(m.id); // reduce-only by cash: never more than what is left of the position
            if (p === undefined || affordable > Math.abs(p.qty)) affordable = p ? Math.abs(p.qty) : 0;
          }
          if (affordable <= 0) { stop = true; break; }
          q = affordable < maker.remaining ? affordable : maker.remaining;
        } else {
          q = taker.remaining < maker.remaining ? taker.remaining : maker.remaining;
        }
        const value = this.fill(m, maker, taker, acc, q, level.price, byCash);
        if (byCash) cashLeft -= value;
        if (!byCash && taker.remaining === 0) { stop = true; break; }
        maker = next;
      }
      if (stop) break;
      if (taker.reduceOnly) {
        const pos = acc.positions.get(m.id);
        if (!pos || pos.qty === 0) break;
      }
    }
  }

  /** One trade between a resting maker and the taker at `price`. Returns the notional. */
  private fill(m: Market, maker: OrderState, taker: OrderState, takerAcc: Account, q: Units, price: Units, byCash: boolean): Money {
    const valueUnits = notionalExact(q, price); // −1 when not a safe integer
    const value = notionalFrom(valueUnits, q, price);
    const book = m.book.side(maker.isBid);
    const makerAcc = this.accountOf(maker.userId);
    this.reserve(makerAcc, maker, q, price, -1);
    if (q === maker.remaining) {
      book.remove(maker);
      maker.remaining = 0;
    } else {
      book.reduce(maker, q);
    }
    if (!byCash) taker.remaining -= q;
    const executionId = String(++this.s.counters.execution);
    this.settle(m, makerAcc, maker, 'MAKER', q, price, value, valueUnits, executionId);
    this.settle(m, takerAcc, taker, 'TAKER', q, price, value, valueUnits, executionId);
    if (maker.remaining === 0) {
      maker.status = 'FILLED';
      this.unlist(makerAcc, maker);
      this.endTpSlsOf(maker);
    } else {
      maker.status = 'PARTIALLY_FILLED';
    }
    taker.status = !byCash && taker.remaining === 0 ? 'FILLED' : 'PARTIALLY_FILLED';
    m.lastPrice = price;
    this.touchBook(m);
    this.touchMarket(m);
    this.events.push({ type: 'trade', trade: { executionId, instrument: m.id, side: taker.side, quantity: q, price, createdAt: this.ts } });
    return value;
  }

  /**
   * One side of a trade: position, realized PnL, fee, order totals, events. `valueUnits`: the notional
   * `value` as a double, or −1 when it is not a safe integer.
   */
  private settle(
    m: Market, acc: Account, o: OrderState, role: FillRole, q: Units, price: Units, value: Money, valueUnits: number, executionId: string,
  ): void {
    const r = m.rules;
    const liquidation = o.group === 'liquidation' || o.group === 'adl';
    const rate = o.group === 'liquidation' ? r.liquidationFee : o.group === 'adl' ? 0 : role === 'MAKER' ? r.makerFee : r.takerFee;
    // The fee in doubles when the notional is a safe integer (two per fill); bigints otherwise.
    const feeUnits = valueUnits >= 0 ? rateCeilUnits(valueUnits, rate) : -1;
    const fee = feeUnits === 0 ? 0n : feeUnits > 0 ? BigInt(feeUnits) : applyRateCeil(value, rate);
    let pos = acc.positions.get(m.id);
    if (pos === undefined || pos.qty === 0) {
      const fresh = newPosition({
        id: sequenceUuid('00000001', ++this.s.counters.position), instrument: m.id, qty: 0, side: o.side, cost: 0n,
        realizedPnL: 0n, fee: 0n, fundingPaid: 0n, createdAt: this.ts, updatedAt: this.ts,
      });
      if (pos !== undefined && pos.touched === true) this.unlistTouchedPosition(pos);
      acc.positions.set(m.id, fresh);
      openVolumeOf(acc, m.id);
      pos = fresh;
      this.listTouchedPosition(acc, pos);
    } else {
      this.touchPosition(acc, pos);
    }
    const before = pos.qty;
    const effect = applyFill(pos, o.isBid, q, value);
    const after = pos.qty;
    if (after === 0) m.holders.delete(acc);
    else if (before === 0) m.holders.add(acc);
    m.longInterest += (after > 0 ? after : 0) - (before > 0 ? before : 0);
    m.shortInterest += (after < 0 ? -after : 0) - (before < 0 ? -before : 0);
    // Bigint additions of zero skipped (an opening fill realizes nothing; a zero fee rate): each one is a
    // builtin call and an allocation, on both sides of every fill.
    const realized = effect.realized;
    if (realized !== 0n) {
      acc.balance += realized - fee;
      pos.realizedPnL += realized;
      o.realizedPnL += realized;
    } else if (fee !== 0n) {
      acc.balance -= fee;
    }
    this.riskCandidates.add(acc);
    if (fee !== 0n) {
      if (liquidation) this.s.totals.reserveFund += fee;
      else this.s.totals.fees += fee;
      pos.fee += fee;
      o.fee += fee;
    }
    o.filledQuantity += q;
    o.filledValue += value;
    this.touchOrder(o);
    this.events.push({
      type: 'fill',
      fill: { executionId, userId: acc.userId, orderId: o.id, instrument: m.id, side: o.side, role, quantity: q, price, fee, realizedPnL: realized, createdAt: this.ts },
    });
    if (fee !== 0n) {
      this.events.push({
        type: 'orderFee',
        fee: { id: `${executionId}-${role === 'MAKER' ? 'm' : 't'}`, userId: acc.userId, orderId: o.id, executionId, coin: COIN, quantity: fee, type: o.group === 'liquidation' ? 'liquidation' : o.group === 'adl' ? 'adl' : 'order', createdAt: this.ts },
      });
    }
    this.fundingChange(acc, realized, 'realized-pnl');
    if (fee !== 0n) this.fundingChange(acc, -fee, liquidation ? 'liquidation-fee' : 'fee');
    if (after !== 0) this.activateTpSlsOf(o);
    else this.endPositionTpSls(acc.userId, m.id, 'Position closed');
  }

  /** Adds (sign 1) or releases (sign −1) quantity × price on the order's side of the account's open volume. */
  private reserve(acc: Account, o: OrderState, quantity: Units, price: Units, sign: 1 | -1): void {
    openVolumeOf(acc, o.instrument).change(o.isBid, quantity, price, sign);
  }

  /** The order is live (resting or an armed stop): its account lists it and its id leads to it. */
  private list(acc: Account, o: OrderState): void {
    acc.orders.add(o);
    this.s.orderIds.setLive(acc.userId, o.id, orderIdDay(o.id), o);
  }

  /** The order stops being live (for good, unless it is listed again at once): its id stays used. */
  private unlist(acc: Account, o: OrderState): void {
    acc.orders.delete(o);
    this.s.orderIds.retire(acc.userId, o.id, orderIdDay(o.id));
  }

  /** After running an order that was not listed: it rested (listed) or it is done (its id is now used). */
  private retireIfDone(acc: Account, o: OrderState): void {
    if (!acc.orders.has(o)) this.s.orderIds.retire(acc.userId, o.id, orderIdDay(o.id));
  }

  /** Puts the order's remainder in the book and reserves its margin. */
  private rest(acc: Account, m: Market, o: OrderState): void {
    m.book.side(o.isBid).add(o);
    this.reserve(acc, o, o.remaining, o.price, 1);
    this.list(acc, o);
    if (o.timeInForce === 'DAY' && o.expiresAt === 0) {
      o.expiresAt = ORDER_ID_EPOCH_MS + (dayNumber(o.createdAt) + 1) * DAY_MS;
      this.dayOrders.push(o);
    }
    this.touchBook(m);
  }

  /** Ends an order that is not (or no longer) resting: status + reason; attached TpSl end with it. */
  private finishOrder(o: OrderState, status: 'EXPIRED' | 'CANCELLED' | 'FILLED', reason: string): OrderState {
    o.status = status;
    o.rejectedReason = reason;
    o.remaining = 0;
    this.touchOrder(o);
    this.endTpSlsOf(o);
    return o;
  }

  /** Takes a live order (resting or armed stop) out and releases its margin. */
  private cancelLive(o: OrderState, status: 'CANCELLED' | 'EXPIRED', reason: string, acc = this.accountOf(o.userId)): void {
    const m = this.s.markets.get(o.instrument)!;
    if (o.level !== null) {
      m.book.side(o.isBid).remove(o);
      this.touchBook(m);
    } else {
      m.stops.delete(o);
    }
    this.reserve(acc, o, o.remaining, o.price, -1);
    this.unlist(acc, o);
    this.finishOrder(o, status, reason);
  }

  // =====================================================================================================
  // Risk-engine orders (liquidation.ts decides, these execute)
  // =====================================================================================================

  private newSystemOrder(acc: Account, m: Market, group: OrderGroup, side: Side, qty: Units, price: Units): OrderState {
    const id = systemOrderId(this.ts, ++this.s.counters.systemOrder);
    const o = new OrderState(
      id, acc.userId, m.id, 'LIMIT', side, 'IOC', false, acc.leverage.get(m.id) ?? 1, qty, price, null, group, 0, null, this.ts,
    );
    o.reduceOnly = true;
    o.placedSeq = ++this.s.counters.placement;
    this.listTouched(o);
    return o;
  }

  /** Reduce-only IOC limit order closing `qty` of the account's position (trading-state rules do not apply). */
  private systemOrder(acc: Account, m: Market, group: OrderGroup, qty: Units, limit: Units): OrderState {
    const pos = acc.positions.get(m.id)!;
    return this.execute(acc, m, this.newSystemOrder(acc, m, group, pos.qty > 0 ? 'SELL' : 'BUY', qty, limit));
  }

  /** Auto-deleveraging: both positions shrink by `qty` at `price`, off the book, fee-free (fill role NONE). */
  private adlTrade(m: Market, acc: Account, counterparty: Account, qty: Units, price: Units): void {
    const pos = acc.positions.get(m.id)!;
    const side: Side = pos.qty > 0 ? 'SELL' : 'BUY';
    const mine = this.newSystemOrder(acc, m, 'adl', side, qty, price);
    const theirs = this.newSystemOrder(counterparty, m, 'adl', side === 'SELL' ? 'BUY' : 'SELL', qty, price);
    const valueUnits = notionalExact(qty, price);
    const value = notionalFrom(valueUnits, qty, price);
    const executionId = String(++this.s.counters.execution);
    this.settle(m, acc, mine, 'NONE', qty, price, value, valueUnits, executionId);
    this.settle(m, counterparty, theirs, 'NONE', qty, price, value, valueUnits, executionId);
    for (const o of [mine, theirs]) {
      o.remaining = 0;
      o.status = 'FILLED';
    }
  }

  /** Cancels every live TpSl of the user (waiting or active). */
  private cancelUserTpSls(userId: number, reason: string): void {
    for (const t of [...this.tpslIndex.ofUser(userId)]) {
      if (!isLiveTpSl(t)) continue;
      t.status = 'cancelled';
      t.cancelledReason = reason;
      this.dropTpSl(t);
      this.touchTpSl(t);
    }
  }

  // =====================================================================================================
  // Stop-limit orders
  // =====================================================================================================

  /** An untriggered stop reserves margin like a resting order and waits for the mark to cross stopPrice. */
  private armStop(acc: Account, m: Market, o: OrderState): OrderState {
    const ref = m.markPrice ?? m.lastPrice;
    const stop = o.stopPrice!;
    o.triggerUp = ref === null ? o.isBid : stop > ref;
    this.reserve(acc, o, o.remaining, o.price, 1);
    this.list(acc, o);
    m.stops.add(o);
    // A DAY stop expires at the next UTC midnight whether or not it has triggered by then.
    if (o.timeInForce === 'DAY' && o.expiresAt === 0) {
      o.expiresAt = ORDER_ID_EPOCH_MS + (dayNumber(o.createdAt) + 1) * DAY_MS;
      this.dayOrders.push(o);
    }
    if (ref !== null && ref === stop) this.triggerStop(acc, m, o);
    return o;
  }

  private triggerStop(acc: Account, m: Market, o: OrderState): void {
    m.stops.delete(o);
    this.reserve(acc, o, o.remaining, o.price, -1);
    this.unlist(acc, o); // listed again if it rests
    o.triggeredAt = this.ts;
    o.placedSeq = ++this.s.counters.placement;
    this.touchOrder(o);
    if (this.s.matcher.state !== 'active' || m.trading === 'none' || m.trading === 'restricted') {
      this.finishOrder(o, 'CANCELLED', 'Trading halted when the stop triggered');
    } else {
      this.execute(acc, m, o);
    }
    this.retireIfDone(acc, o);
  }

  // =====================================================================================================
  // Replace and cancel
  // =====================================================================================================

  private liveOrder(userId: number, orderId: string): { acc: Account; o: OrderState } | Draft {
    const digits = typeof orderId === 'string' ? orderIdDigits(orderId) : null;
    if (digits === null) return fail(400, 'INVALID_ORDER_ID', 'Invalid order id');
    const o = this.s.orderIds.lookup(userId, digits);
    const acc = this.s.accounts.get(userId);
    if (!acc || !o) {
      if (o === null) return fail(409, 'ORDER_NOT_OPEN', 'Order is not open');
      return fail(404, 'ORDER_NOT_FOUND', 'Order not found');
    }
    return { acc, o };
  }

  private replaceCommand(userId: number, input: ReplaceInput): Draft {
    const r = this.replace(userId, input, null);
    return r.ok ? { ok: true, order: r.order } : r;
  }

  private replaceBatch(userId: number, instrument: string, items: ReplaceInput[]): Draft {
    if (!this.s.markets.has(instrument)) return fail(404, 'INSTRUMENT_NOT_FOUND', `Unknown instrument ${instrument}`);
    if (!Array.isArray(items) || items.length < 1 || items.length > MAX_BATCH_REPLACE) {
      return fail(400, 'INVALID_BATCH', `A batch replace holds 1 to ${MAX_BATCH_REPLACE} items`);
    }
    const batch: BatchItemResult[] = [];
    for (const item of items) {
      const orderId = item && typeof item.orderId === 'string' ? item.orderId : '';
      const r = this.replace(userId, item, instrument);
      batch.push(r.ok ? { orderId, success: true } : { orderId, success: false, failReason: r.error.message });
    }
    return { ok: true, batch };
  }

  /** A replace whose signature (if it carries a digest) is spent, while the order stays open, when it succeeds. */
  private replace(userId: number, input: ReplaceInput, instrument: string | null): Draft {
    if (!input || typeof input !== 'object') return fail(400, 'INVALID_REPLACE', 'Invalid replace');
    const used = signatureRefusal(this.s.spent, userId, SIGNED_KINDS.replace, input.digest);
    if (used) return { ok: false, error: used };
    const r = this.replaceOrder(userId, input, instrument);
    if (r.ok && r.order !== undefined) spendSignature(this.s.spent, userId, SIGNED_KINDS.replace, input.digest, r.order.key);
    return r;
  }

  /**
   * New total quantity and price for a live LIMIT (or STOP_LIMIT, with stopPrice) order. A pure size
   * decrease keeps time priority; a price change or an increase re-queues it (and may trade).
   */
  private replaceOrder(userId: number, input: ReplaceInput, instrument: string | null): Draft {
    const found = this.liveOrder(userId, input.orderId);
    if ('ok' in found) return found;
    const { acc, o } = found;
    if (instrument !== null && o.instrument !== instrument) return fail(400, 'INVALID_INSTRUMENT', `Order ${o.id} is not on ${instrument}`);
    const m = this.s.markets.get(o.instrument)!;
    const r = m.rules;
    const isStop = o.type === 'STOP_LIMIT';
    if (o.type !== 'LIMIT' && !isStop) return fail(400, 'INVALID_ORDER_TYPE', 'Only limit and stop-limit orders can be replaced');
    if (isStop !== (input.stopPrice !== undefined)) {
      return fail(400, 'INVALID_REPLACE', isStop ? 'A stop-limit replace needs stopPrice' : 'stopPrice applies to stop-limit orders only');
    }
    if (isStop && o.triggeredAt !== null) return fail(400, 'INVALID_REPLACE', 'A triggered stop-limit order is replaced as a limit order');
    const q = input.quantity;
    if (!isPositiveUnits(q) || !isMultiple(q, r.quantityIncrement) || q > r.maxQuantity) return fail(400, 'INVALID_QUANTITY', 'Invalid quantity');
    if (q <= o.filledQuantity) return fail(400, 'INVALID_QUANTITY', 'Quantity must exceed the filled quantity');
    const price = input.limitPrice;
    if (!isPositiveUnits(price) || !isMultiple(price, r.priceIncrement) || price < r.minPrice || price > r.maxPrice) return fail(400, 'INVALID_PRICE', 'Invalid price');
    if (isStop && (!isPositiveUnits(input.stopPrice) || !isMultiple(input.stopPrice, r.priceIncrement) || input.stopPrice < r.minPrice || input.stopPrice > r.maxPrice)) {
      return fail(400, 'INVALID_PRICE', 'Invalid stop price');
    }
    if (this.s.matcher.state !== 'active') return fail(409, 'TRADING_HALTED', 'Trading is halted');
    if (m.trading === 'none' || m.trading === 'restricted') return fail(409, 'TRADING_NOT_ALLOWED', `Trading is not allowed on ${m.id}`);
    const postOnly = input.postOnly ?? o.postOnly;
    const newRemaining = q - o.filledQuantity;
    const oldRaw = BigInt(o.remaining) * BigInt(o.price);
    const newRaw = BigInt(newRemaining) * BigInt(price);
    if (m.trading === 'onlyClose' && newRaw > oldRaw) return fail(409, 'ONLY_CLOSE', 'Only position-closing orders are allowed');
    if (!isStop && postOnly) {
      const best = m.book.side(!o.isBid).best();
      if (best !== undefined && (o.isBid ? best.price <= price : best.price >= price)) {
        return fail(409, 'POST_ONLY', 'Post-only order would take liquidity');
      }
    }
    if (newRaw > oldRaw) {
      const delta = newRaw - oldRaw;
      if (this.available(acc, m.id, o.isBid ? delta : 0n, o.isBid ? 0n : delta, acc.leverage.get(m.id) ?? 1) < 0n) return fail(422, 'INSUFFICIENT_BALANCE', 'Insufficient available balance');
    }
    if (input.smp !== undefined && input.smp !== null) {
      o.smp = input.smp.smp === true;
    }
    // ---- apply ----
    this.reserve(acc, o, o.remaining, o.price, -1);
    this.reserve(acc, o, newRemaining, price, 1);
    o.postOnly = postOnly;
    o.quantity = q;
    o.limitPrice = price;
    this.touchOrder(o);
    if (isStop) {
      o.remaining = newRemaining;
      o.price = price;
      o.stopPrice = input.stopPrice!;
      const ref = m.markPrice ?? m.lastPrice;
      o.triggerUp = ref === null ? o.isBid : o.stopPrice > ref;
      m.stops.retarget(o);
      if (ref !== null && ref === o.stopPrice) this.triggerStop(acc, m, o);
      return { ok: true, order: o };
    }
    const side = m.book.side(o.isBid);
    if (price === o.price && newRemaining <= o.remaining) {
      if (newRemaining < o.remaining) {
        side.reduce(o, o.remaining - newRemaining);
        this.touchBook(m);
      }
      return { ok: true, order: o };
    }
    // Re-queue at the back (new price or more size): leave the book, then trade/rest like a new order.
    side.remove(o);
    this.reserve(acc, o, newRemaining, price, -1);
    this.unlist(acc, o); // listed again if it rests
    o.price = price;
    o.remaining = newRemaining;
    o.placedSeq = ++this.s.counters.placement;
    this.touchBook(m);
    this.execute(acc, m, o);
    this.retireIfDone(acc, o);
    return { ok: true, order: o };
  }

  private cancelCommand(userId: number, orderId: string): Draft {
    const found = this.liveOrder(userId, orderId);
    if ('ok' in found) {
      // Cancel after the order finished (e.g. FILLED): no error, nothing changes (spec).
      if (!found.ok && found.error.code === 'ORDER_NOT_OPEN') return { ok: true };
      return found;
    }
    this.cancelLive(found.o, 'CANCELLED', 'Cancelled by user', found.acc);
    return { ok: true, order: found.o };
  }

  private cancelAll(userId: number, instrument: string): Draft {
    if (!this.s.markets.has(instrument)) return fail(404, 'INSTRUMENT_NOT_FOUND', `Unknown instrument ${instrument}`);
    const acc = this.s.accounts.get(userId);
    const cancelled: OrderState[] = [];
    if (acc) {
      for (const o of acc.orders.values()) {
        if (o.instrument !== instrument) continue;
        this.cancelLive(o, 'CANCELLED', 'Cancelled by user (mass cancel)');
        cancelled.push(o);
      }
    }
    return { ok: true, orders: cancelled };
  }

  private cancelMany(userId: number, orderIds: string[]): Draft {
    if (!Array.isArray(orderIds) || orderIds.length < 1 || orderIds.length > 500) return fail(400, 'INVALID_BATCH', 'orderIds must hold 1 to 500 ids');
    const batch: BatchItemResult[] = [];
    for (const orderId of orderIds) {
      const found = this.liveOrder(userId, orderId);
      if ('ok' in found) {
        const notOpen = !found.ok && found.error.code === 'ORDER_NOT_OPEN';
        batch.push({ orderId: String(orderId), success: false, failReason: notOpen ? 'Order is not open' : found.ok ? 'Order not found' : found.error.message });
        continue;
      }
      this.cancelLive(found.o, 'CANCELLED', 'Cancelled by user');
      batch.push({ orderId, success: true });
    }
    return { ok: true, batch };
  }

  // =====================================================================================================
  // Positions
  // =====================================================================================================

  private changeLeverage(userId: number, instrument: string, leverage: number): Draft {
    const m = this.s.markets.get(instrument);
    if (!Engine.validUser(userId)) return fail(400, 'INVALID_USER', 'Invalid user');
    if (!m) return fail(404, 'INSTRUMENT_NOT_FOUND', `Unknown instrument ${instrument}`);
    if (!Number.isInteger(leverage) || leverage < 1 || leverage > m.rules.maxLeverage) {
      return fail(400, 'INVALID_LEVERAGE', `Leverage must be an integer from 1 to ${m.rules.maxLeverage}`);
    }
    const acc = this.accountOf(userId);
    const pos = acc.positions.get(instrument);
    if ((acc.leverage.get(instrument) ?? 1) !== leverage) {
      if (this.available(acc, instrument, 0n, 0n, leverage) < 0n) return fail(422, 'INSUFFICIENT_BALANCE', `Insufficient available balance for ${leverage}x leverage`);
      const cap = notionalCap(m.rules, leverage);
      if (cap !== null && pos && pos.cost > cap) return fail(422, 'LEVERAGE_LIMIT', capRefusal(leverage));
      acc.leverage.set(instrument, leverage);
      if (pos && pos.qty !== 0) this.touchPosition(acc, pos);
    }
    return pos && pos.qty !== 0 ? { ok: true, position: this.positionView(acc, pos) } : { ok: true };
  }

  /** Market order (IOC, reduce-only) against the user's position; quantity 0 = the whole position. */
  private closePosition(userId: number, instrument: string, id: string, quantity: number, leverage: number): Draft {
    const m = this.s.markets.get(instrument);
    const acc = this.s.accounts.get(userId);
    const pos = acc?.positions.get(instrument);
    if (m && (!pos || pos.qty === 0)) return fail(409, 'NO_POSITION', `No open position on ${instrument}`);
    if (!(quantity === 0 || isPositiveUnits(quantity))) return fail(400, 'INVALID_QUANTITY', 'Invalid quantity');
    const size = pos ? Math.abs(pos.qty) : 0;
    const input: PlaceOrderInput = {
      id, instrument, side: pos && pos.qty > 0 ? 'SELL' : 'BUY', type: 'MARKET', timeInForce: 'IOC', leverage,
      quantity: quantity === 0 || quantity > size ? size : quantity, reduceOnly: true, group: 'manually',
    };
    const refused = this.validateOrder(userId, input, m);
    if (refused) return refused;
    const o = this.place(acc!, m!, input);
    return { ok: true, order: o };
  }

  private positionView(acc: Account, pos: Position): PositionView {
    const m = this.s.markets.get(pos.instrument)!;
    const mark = m.valuationPrice;
    const abs = Math.abs(pos.qty);
    const leverage = acc.leverage.get(pos.instrument) ?? 1;
    const side = pos.qty > 0 ? 'BUY' : pos.qty < 0 ? 'SELL' : pos.side;
    // In doubles when every amount fits (every position update of every fill comes here); else in bigints.
    const cost = costUnits(pos);
    const upnl = unrealizedUnits(pos, mark);
    const markValue = mark !== null && abs > 0 ? notionalExact(abs, mark) : cost;
    const mm = abs === 0 ? 0 : markValue >= 0 && markValue <= 2 ** 50 ? maintenanceMarginUnits(m.rules, markValue) : -1;
    let avgPrice = 0;
    const avgExact = abs === 0 || scaledQuotient(cost, abs);
    if (abs !== 0 && avgExact) avgPrice = 2 * quotientScratch.r >= abs ? quotientScratch.q + 1 : quotientScratch.q; // half-up
    const bankruptcy = bankruptcyPriceUnits(acc, pos, this.s.markets);
    const adl = adlLevelUnits(pos, upnl, cost, leverage);
    if (upnl === upnl && mm >= 0 && avgExact && bankruptcy !== undefined && adl > 0) {
      return {
        id: pos.id, userId: acc.userId, instrument: pos.instrument, side, quantity: abs, costBasis: pos.cost, avgPrice, leverage,
        maintenanceMargin: BigInt(mm), fundingPaid: pos.fundingPaid, fee: pos.fee, realizedPnL: pos.realizedPnL, unRealizedPnL: BigInt(upnl),
        markPrice: mark ?? 0, bankruptcyPrice: bankruptcy, adlLevel: adl, createdAt: pos.createdAt, updatedAt: pos.updatedAt,
      };
    }
    const markValueBig = mark !== null && abs > 0 ? notional(abs, mark) : pos.cost;
    const upnlBig = unrealizedPnL(pos, mark);
    return {
      id: pos.id, userId: acc.userId, instrument: pos.instrument, side,
      quantity: abs, costBasis: pos.cost, avgPrice: abs === 0 ? 0 : Number(mulDivHalfUp(pos.cost, SCALE_N, BigInt(abs))),
      leverage, maintenanceMargin: abs === 0 ? 0n : maintenanceMargin(m.rules, markValueBig), fundingPaid: pos.fundingPaid, fee: pos.fee,
      realizedPnL: pos.realizedPnL, unRealizedPnL: upnlBig, markPrice: mark ?? 0,
      // Cross margin: where the account's equity reaches zero, other positions at their marks (margin.ts).
      bankruptcyPrice: bankruptcyPrice(acc, pos, this.s.markets),
      adlLevel: adlLevel(pos, upnlBig, leverage), createdAt: pos.createdAt, updatedAt: pos.updatedAt,
    };
  }

  // =====================================================================================================
  // Prices and triggers
  // =====================================================================================================

  private priceTick(instrument: string, indexPrice: number, markPrice: number | undefined): Draft {
    const m = this.s.markets.get(instrument);
    if (!m) return fail(404, 'INSTRUMENT_NOT_FOUND', `Unknown instrument ${instrument}`);
    if (!isPositiveUnits(indexPrice)) return fail(400, 'INVALID_PRICE', 'Invalid index price');
    if (markPrice !== undefined && !isPositiveUnits(markPrice)) return fail(400, 'INVALID_PRICE', 'Invalid mark price');
    m.indexPrice = indexPrice;
    m.markPrice = markPrice ?? m.computeMark(indexPrice);
    m.premiumSum += premiumSample(m, indexPrice, m.rules.lotSize);
    m.premiumSamples++;
    this.touchMarket(m);
    this.events.push({ type: 'price', instrument, indexPrice, markPrice: m.markPrice, ts: this.ts });
    this.runTriggers(m);
    for (const acc of m.holders) this.riskCandidates.add(acc);
    return { ok: true };
  }

  /** Funding of the interval that ended (funding.ts): rate from the premium samples, payments at mark. */
  private settleFunding(instrument: string, intervalMs: number): Draft {
    const m = this.s.markets.get(instrument);
    if (!m) return fail(404, 'INSTRUMENT_NOT_FOUND', `Unknown instrument ${instrument}`);
    if (!Number.isSafeInteger(intervalMs) || intervalMs <= 0 || intervalMs > MAX_FUNDING_INTERVAL_MS) {
      return fail(400, 'INVALID_INTERVAL', `intervalMs must be an integer from 1 to ${MAX_FUNDING_INTERVAL_MS}`);
    }
    const rate = fundingRate(m.premiumSum, m.premiumSamples, intervalMs);
    m.premiumSum = 0n;
    m.premiumSamples = 0;
    m.fundingRate = rate;
    m.fundingRateAt = this.nextTime(m.fundingRateAt);
    this.touchMarket(m);
    this.events.push({ type: 'fundingRate', instrument, rate, createdAt: m.fundingRateAt });
    const mark = m.valuationPrice;
    if (mark === null) return { ok: true };
    const holders: Array<{ acc: Account; pos: Position }> = [];
    for (const acc of m.holders) holders.push({ acc, pos: acc.positions.get(instrument)! });
    holders.sort((a, b) => a.acc.userId - b.acc.userId);
    const { payments, residue } = fundingPayments(holders, mark, rate);
    for (const p of payments) {
      p.acc.balance += p.amount;
      p.pos.fundingPaid += p.amount;
      this.touchPosition(p.acc, p.pos);
      this.fundingChange(p.acc, p.amount, 'funding');
      this.riskCandidates.add(p.acc);
    }
    this.s.totals.reserveFund += residue;
    return { ok: true };
  }

  /** Stops and TpSl whose trigger the mark has crossed, in arrival order. */
  private runTriggers(m: Market): void {
    const mark = m.markPrice;
    if (mark === null) return;
    for (const o of m.stops.takeDue(mark)) if (o.isLive && o.triggeredAt === null) this.triggerStop(this.accountOf(o.userId), m, o);
    for (const t of this.tpslIndex.takeDue(m.id, mark)) if (t.status === 'active') this.fireTpSl(t);
  }

  // =====================================================================================================
  // TP/SL
  // =====================================================================================================

  /** A new live TpSl; `waitsOn`: the order it waits on (status waitOrder), else null. */
  private newTpSl(
    userId: number, instrument: string, input: TpSlInput, orderId: string | null, waitsOn: OrderState | null, status: TpSlState['status'],
  ): TpSlState {
    const t: TpSlState = {
      id: sequenceUuid('00000002', ++this.s.counters.tpsl), userId, instrument, type: input.type, side: input.side,
      quantity: input.quantity, price: input.price, status, orderKey: waitsOn === null ? null : waitsOn.key, orderId, triggerOrder: null,
      triggeredQuantity: 0, cancelledReason: '', createdAt: this.ts, updatedAt: this.ts,
    };
    this.s.tpsls.set(t.id, t);
    this.tpslIndex.add(t, status === 'waitOrder' ? waitsOn : null);
    this.touchedTpsl.add(t);
    return t;
  }

  /** The TpSl is no longer live (done or cancelled). */
  private dropTpSl(t: TpSlState): void {
    this.s.tpsls.delete(t.id);
    this.tpslIndex.delete(t);
  }

  private attachTpSl(acc: Account, o: OrderState, input: TpSlInput): void {
    this.newTpSl(acc.userId, o.instrument, input, o.id, o, 'waitOrder');
  }

  /** The order filled (some): its waiting TpSl become active. */
  private activateTpSlsOf(o: OrderState): void {
    const waiting = this.tpslIndex.takeWaiting(o);
    if (waiting === undefined) return;
    for (const t of waiting) {
      t.status = 'active';
      this.tpslIndex.arm(t);
      this.touchTpSl(t);
    }
  }

  /** The order ended: TpSl still waiting on it are cancelled (it never opened a position). */
  private endTpSlsOf(o: OrderState): void {
    const waiting = this.tpslIndex.takeWaiting(o);
    if (waiting === undefined) return;
    for (const t of waiting) {
      if (o.filledQuantity > 0) {
        t.status = 'active';
        this.tpslIndex.arm(t);
      } else {
        t.status = 'cancelled';
        t.cancelledReason = `Order ${o.status.toLowerCase()} without a fill`;
        this.dropTpSl(t);
      }
      this.touchTpSl(t);
    }
  }

  private endPositionTpSls(userId: number, instrument: string, reason: string): void {
    const live = this.tpslIndex.ofUser(userId);
    if (live.size === 0) return;
    for (const t of [...live]) {
      if (t.status === 'active' && t.instrument === instrument) {
        t.status = 'cancelled';
        t.cancelledReason = reason;
        this.dropTpSl(t);
        this.touchTpSl(t);
      }
    }
  }

  /** Trigger: a reduce-only market order of group `tpsl` closes (part of) the position. */
  private fireTpSl(t: TpSlState): void {
    const acc = this.accountOf(t.userId);
    const m = this.s.markets.get(t.instrument)!;
    const pos = acc.positions.get(t.instrument);
    // The spec's TpSl states go triggered (the order is being created) → done (it exists). Both happen in
    // this command; `triggered` is published on its own so a client following the channel sees it, and
    // the final state (at the flush) gets a later updatedAt than it.
    t.status = 'triggered';
    t.updatedAt = this.nextTime(t.updatedAt);
    this.events.push({ type: 'tpsl', tpsl: tpslView(t) });
    t.updatedAt = this.nextTime(t.updatedAt); // the final state, flushed at the end of the command
    this.touchedTpsl.add(t);
    if (!pos || pos.qty === 0 || (pos.qty > 0) === (t.side === 'BUY')) {
      t.status = 'cancelled';
      t.cancelledReason = 'No position to close';
      this.dropTpSl(t);
      return;
    }
    const size = Math.abs(pos.qty);
    const qty = t.quantity === 0 || t.quantity > size ? size : t.quantity;
    const id = systemOrderId(this.ts, ++this.s.counters.systemOrder);
    const o = this.place(acc, m, {
      id, instrument: t.instrument, side: t.side, type: 'MARKET', timeInForce: 'IOC', leverage: acc.leverage.get(t.instrument) ?? 1,
      quantity: qty, reduceOnly: true, group: 'tpsl',
    });
    t.triggerOrder = o.id;
    t.triggeredQuantity = o.filledQuantity;
    t.status = 'done';
    this.dropTpSl(t);
  }

  private createTpSl(userId: number, instrument: string, type: TpSlState['type'], side: Side, quantity: number, price: number, orderId: string | null): Draft {
    const m = this.s.markets.get(instrument);
    if (!Engine.validUser(userId)) return fail(400, 'INVALID_USER', 'Invalid user');
    if (!m) return fail(404, 'INSTRUMENT_NOT_FOUND', `Unknown instrument ${instrument}`);
    const bad = this.validateTpSlInput(m.rules, type, side, quantity, price);
    if (bad) return bad;
    const acc = this.s.accounts.get(userId);
    const input: TpSlInput = { type, side, quantity, price };
    if (orderId !== null && orderId !== undefined) {
      const found = this.liveOrder(userId, orderId);
      if ('ok' in found) return found;
      if (found.o.instrument !== instrument) return fail(400, 'INVALID_INSTRUMENT', `Order ${orderId} is not on ${instrument}`);
      if (found.o.side === side) return fail(400, 'INVALID_TPSL', 'A TpSl must be on the side opposite to its order');
      const t = this.newTpSl(userId, instrument, input, found.o.id, found.o, found.o.filledQuantity > 0 ? 'active' : 'waitOrder');
      return { ok: true, tpsl: tpslView(t) };
    }
    const pos = acc?.positions.get(instrument);
    if (!pos || pos.qty === 0) return fail(409, 'NO_POSITION', `No open position on ${instrument}`);
    if ((pos.qty > 0) === (side === 'BUY')) return fail(400, 'INVALID_TPSL', 'A TpSl side must close the position (SELL for a long, BUY for a short)');
    const mark = m.markPrice;
    if (mark !== null && tpslFires({ ...input, status: 'active' } as TpSlState, mark)) {
      return fail(400, 'INVALID_TPSL', `${type === 'take-profit' ? 'Take-profit' : 'Stop-loss'} price is already crossed by the mark price`);
    }
    const t = this.newTpSl(userId, instrument, input, null, null, 'active');
    return { ok: true, tpsl: tpslView(t) };
  }

  /** A TpSl create or modify whose signature (if it carries a digest) is spent for good when it succeeds. */
  private signedTpSl(userId: number, digest: string | undefined, run: () => Draft): Draft {
    const used = signatureRefusal(this.s.spent, userId, SIGNED_KINDS.tpsl, digest);
    if (used) return { ok: false, error: used };
    const r = run();
    if (r.ok) spendSignature(this.s.spent, userId, SIGNED_KINDS.tpsl, digest);
    return r;
  }

  private findTpSl(userId: number, instrument: string, id: string): TpSlState | Draft {
    const t = this.s.tpsls.get(id);
    if (!t || t.userId !== userId || t.instrument !== instrument || !isLiveTpSl(t)) return fail(404, 'TPSL_NOT_FOUND', `TpSl ${id} not found`);
    return t;
  }

  private modifyTpSl(userId: number, instrument: string, id: string, type: TpSlState['type'], side: Side, quantity: number, price: number): Draft {
    const t = this.findTpSl(userId, instrument, id);
    if ('ok' in t) return t;
    const bad = this.validateTpSlInput(this.s.markets.get(instrument)!.rules, type, side, quantity, price);
    if (bad) return bad;
    if (side !== t.side) return fail(400, 'INVALID_TPSL', 'The side of a TpSl cannot change');
    t.type = type;
    t.quantity = quantity;
    t.price = price;
    if (t.status === 'active') this.tpslIndex.arm(t);
    this.touchTpSl(t);
    return { ok: true, tpsl: tpslView(t) };
  }

  private cancelTpSl(userId: number, instrument: string, id: string): Draft {
    const t = this.findTpSl(userId, instrument, id);
    if ('ok' in t) return t;
    t.status = 'cancelled';
    t.cancelledReason = 'Cancelled by user';
    this.dropTpSl(t);
    this.touchTpSl(t);
    return { ok: true, tpsl: tpslView(t) };
  }

  // =====================================================================================================
  // Queries
  // =====================================================================================================

  instrumentConfigs(): InstrumentConfig[] {
    return [...this.s.markets.values()].map((m) => m.rules.config);
  }

  instrumentConfig(id: string): InstrumentConfig | undefined {
    return this.s.markets.get(id)?.rules.config;
  }

  instrumentState(id: string): InstrumentStateView | undefined {
    return this.s.markets.get(id)?.stateView();
  }

  matcher(): MatcherView {
    return { ...this.s.matcher };
  }

  getOrder(userId: number, orderId: string): OrderView | undefined {
    const digits = orderIdDigits(orderId);
    return digits === null ? undefined : this.s.orderIds.lookup(userId, digits)?.view();
  }

  openOrders(userId: number): OrderView[] {
    const acc = this.s.accounts.get(userId);
    return acc ? acc.orders.values().map((o) => o.view()) : [];
  }

  positions(userId: number): PositionView[] {
    const acc = this.s.accounts.get(userId);
    if (!acc) return [];
    const out: PositionView[] = [];
    for (const pos of acc.positions.values()) if (pos.qty !== 0) out.push(this.positionView(acc, pos));
    return out;
  }

  tpsls(userId: number): TpSlView[] {
    const out: TpSlView[] = [];
    for (const t of this.tpslIndex.ofUser(userId)) out.push(tpslView(t));
    return out;
  }

  account(userId: number): AvailableBalanceView {
    const acc = this.s.accounts.get(userId) ?? newAccount(userId);
    return this.accountView(acc);
  }

  transfer(transferId: string): TransferView | undefined {
    const t = this.s.transfers.get(transferId);
    return t ? { ...t } : undefined;
  }

  /** Unsettled (pending or blocked) withdrawals, oldest first; of one user when `userId` is given. */
  pendingTransfers(userId?: number): TransferView[] {
    const out: TransferView[] = [];
    for (const t of this.s.transfers.values()) if (userId === undefined || t.userId === userId) out.push({ ...t });
    return out.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  }

  hasTransfer(transferId: string): boolean {
    return this.s.transferIds.has(transferId);
  }

  hasOrderId(userId: number, orderId: string): boolean {
    const digits = orderIdDigits(orderId);
    return digits !== null && this.s.orderIds.has(userId, digits);
  }

  depth(instrument: string, maxLevel: number, grouping: Units): DepthView | undefined {
    return this.s.markets.get(instrument)?.depth(maxLevel, grouping);
  }

  /** Largest order volume (USDT notional) the user could open on each side now. */
  power(userId: number, instrument: string): { buy: bigint; sell: bigint } | undefined {
    const m = this.s.markets.get(instrument);
    if (!m) return undefined;
    const acc = this.s.accounts.get(userId);
    if (!acc) return { buy: 0n, sell: 0n };
    const lev = BigInt(acc.leverage.get(instrument) ?? 1);
    const avail = this.available(acc);
    const base = avail > 0n ? avail * lev : 0n;
    const pos = acc.positions.get(instrument);
    const closing = pos && pos.qty !== 0 ? pos.cost * 2n : 0n; // closing frees its margin and reopens the other way
    return { buy: base + (pos && pos.qty < 0 ? closing : 0n), sell: base + (pos && pos.qty > 0 ? closing : 0n) };
  }

  // =====================================================================================================
  // Snapshots, hash, invariants
  // =====================================================================================================

  snapshot(): EngineSnapshot {
    return { version: SNAPSHOT_VERSION, seq: this.s.seq, state: serializeState(this.s) };
  }

  stateHash(): string {
    return createHash('sha256').update(JSON.stringify(serializeState(this.s))).digest('hex');
  }

  checkInvariants(): void {
    let problem = findInvariantViolation(this.s) ?? this.tpslIndex.problemWith(this.s.tpsls) ?? this.spentProblem();
    for (const m of this.s.markets.values()) problem ??= m.stops.problem();
    if (problem) throw new Error(`engine invariant violated: ${problem}`);
  }

  /** Spent keys are consistent, and each one scoped to an order (a replace) belongs to an order still open. */
  private spentProblem(): string | null {
    const problem = this.s.spent.problem();
    if (problem) return problem;
    for (const [userId, key] of this.s.spent.scopesInUse()) {
      if (!this.s.orderIds.lookup(userId, key)?.isLive) return `user ${userId}: replace signatures kept for order ${key}, which is not open`;
    }
    return null;
  }

  /** Money identity terms, for tests and the CLI (all money units). */
  ledger(): { balances: Money; fees: Money; reserveFund: Money; openCost: Money; deposits: Money; withdrawals: Money } {
    let balances = 0n;
    let openCost = 0n;
    for (const acc of this.s.accounts.values()) {
      balances += acc.balance;
      for (const p of acc.positions.values()) openCost += signedCost(p);
    }
    const t = this.s.totals;
    return { balances, fees: t.fees, reserveFund: t.reserveFund, openCost, deposits: t.deposits, withdrawals: t.withdrawals };
  }
}

export function createEngine(): Engine {
  return new Engine();
}

export function restoreEngine(snapshot: EngineSnapshot): Engine {
  if (!snapshot || !isReadableSnapshotVersion(snapshot.version)) throw new Error('unsupported engine snapshot version');
  return new Engine(restoreState(snapshot.state, snapshot.seq));
}

/** Re-exported for tests. */
export type { TimeInForce };
