/**
 * The exchange engine: one deterministic state machine. `apply(command)` runs the command through the
 * stages (stages.ts) and returns a reply plus the events it caused. No I/O, no wall clock, no randomness:
 * time and ids arrive with the command, so replaying the journal rebuilds the same state.
 *
 * Rules worth knowing (docs/engine-rules.md has the full list):
 * - Refusals that change nothing (bad input, unknown instrument/order, duplicate id) are `{ok:false}`
 *   replies. Orders that pass validation but break a trading rule (halt, margin, post-only, leverage cap)
 *   are recorded as REJECTED with a `rejectedReason` (their id is used).
 * - Stop-limit orders and TpSl trigger on the MARK price, at price ticks.
 * - Market orders spend `cashQuantity` of notional (USDT) and never fill beyond mark × (1 ± slippageLimit).
 * - IOC/FOK remainders and DAY orders at the next UTC midnight end as EXPIRED.
 */
import { createHash } from 'node:crypto';
import type { Money } from '../domain/fixed.js';
import { isReadableSnapshotVersion, SNAPSHOT_VERSION, type EngineSnapshot, type ExchangeEngine } from './api.js';
import { CommandContext } from './command-context.js';
import type { Command } from './commands.js';
import { Funds } from './funds.js';
import { Instruments } from './instruments.js';
import { findInvariantViolation } from './invariants.js';
import { Liquidator } from './liquidation.js';
import { Matching } from './matching.js';
import { OrderAmend } from './order-amend.js';
import { OrderEntry } from './order-entry.js';
import { OrderIdIndex } from './order-id-index.js';
import { OrderLifecycle } from './order-lifecycle.js';
import { positionView, Positions } from './positions.js';
import { PricesFunding } from './prices-funding.js';
import type { CommandResult, OrderView, Reply } from './records.js';
import { fail, type Draft } from './refusal.js';
import { RiskChecks } from './risk-checks.js';
import { empty } from './scratch.js';
import { Settlement } from './settlement.js';
import { restoreState, serializeState } from './snapshot.js';
import { SpentKeys } from './spent-keys.js';
import type { Stages } from './stages.js';
import { Totals, type EngineState } from './state.js';
import { StopTriggers } from './stop-triggers.js';
import { TpSlOrders } from './tpsl-orders.js';
import { EngineViews } from './views.js';

export { MAX_BATCH_CREATE } from './order-entry.js';
export { MAX_BATCH_REPLACE } from './order-amend.js';

export class Engine extends EngineViews implements ExchangeEngine {
  private readonly ctx: CommandContext;
  private readonly stages: Stages;
  private readonly liquidator: Liquidator;

  constructor(state?: EngineState) {
    const s: EngineState = state ?? {
      seq: 0,
      matcher: { state: 'active', updatedAt: 0 },
      markets: new Map(),
      accounts: new Map(),
      tpsls: new Map(),
      transfers: new Map(),
      transferIds: new Set(),
      totals: new Totals(0n, 0n, 0n, 0n),
      counters: { execution: 0, position: 0, tpsl: 0, systemOrder: 0, placement: 0 },
      orderIds: new OrderIdIndex(),
      prunedDay: 0,
      spent: new SpentKeys(),
    };
    const ctx = new CommandContext(s, (acc, pos) => positionView(s, acc, pos));
    const risk = new RiskChecks(s);
    super(s, ctx.tpslIndex, risk);
    this.ctx = ctx;
    // Stages call each other through this one record (a stage is only used once all exist).
    const stages = { risk } as Stages;
    stages.lifecycle = new OrderLifecycle(ctx, stages);
    stages.matching = new Matching(ctx, stages);
    stages.settlement = new Settlement(ctx, stages);
    stages.entry = new OrderEntry(ctx, stages);
    stages.amend = new OrderAmend(ctx, stages);
    stages.stops = new StopTriggers(ctx, stages);
    stages.tpsl = new TpSlOrders(ctx, stages);
    stages.funds = new Funds(ctx, stages);
    stages.prices = new PricesFunding(ctx, stages);
    stages.instruments = new Instruments(ctx);
    stages.positions = new Positions(ctx, stages);
    this.stages = stages;

    // Derived indexes, rebuilt from the state (DAY orders: in OrderLifecycle).
    for (const acc of s.accounts.values()) {
      for (const pos of acc.positions.values()) if (pos.qty !== 0) s.markets.get(pos.instrument)!.holders.add(acc);
    }
    for (const t of s.tpsls.values()) {
      const order = t.status === 'waitOrder' && t.orderKey !== null ? s.orderIds.lookup(t.userId, t.orderKey) ?? null : null;
      ctx.tpslIndex.add(t, order);
    }
    this.liquidator = new Liquidator({
      s,
      cancelOrders: (acc, reason) => {
        for (const o of acc.orders.values().sort((a, b) => a.placedSeq - b.placedSeq)) stages.lifecycle.cancelLive(o, 'CANCELLED', reason);
      },
      cancelTpSls: (userId, reason) => stages.tpsl.cancelUserTpSls(userId, reason),
      liquidationOrder: (acc, m, qty, limit) => stages.settlement.systemOrder(acc, m, 'liquidation', qty, limit),
      adlTrade: (m, acc, counterparty, qty, price) => stages.settlement.adlTrade(m, acc, counterparty, qty, price),
      coverFromReserve: (acc, amount) => {
        acc.balance += amount;
        s.totals.reserveFund -= amount;
        ctx.fundingChange(acc, amount, 'reserve-fund');
      },
      setMarginCall: (acc, flag) => {
        if (acc.marginCall === flag) return;
        acc.marginCall = flag;
        acc.updatedAt = ctx.nextTime(acc.updatedAt);
        ctx.events.push({ type: 'account', userId: acc.userId, marginCall: flag, updatedAt: acc.updatedAt });
      },
    });
  }

  get seq(): number {
    return this.s.seq;
  }

  /**
   * The pipeline: housekeeping due at this time (DAY expiry, old order ids), the command's own stage, the
   * risk sweep (liquidation and ADL of every account the command may have put in breach), then the final
   * state of everything changed, as events.
   */
  apply(cmd: Command, retractRefusal = false): CommandResult {
    const { ctx, stages, s } = this;
    s.seq++;
    // What housekeeping or a refusal path could change without an event (checked before retracting).
    const accounts = s.accounts.size;
    const prunedDay = s.prunedDay;
    ctx.begin(cmd.ts);
    stages.lifecycle.expireDayOrders();
    stages.lifecycle.pruneUsedIds();
    const reply = this.dispatch(cmd);
    if (ctx.riskCandidates.size > 0 || this.liquidator.deficitsPayable) this.liquidator.sweep(ctx.riskCandidates);
    const withOrders = reply.ok && (reply.order !== undefined || reply.orders !== undefined);
    ctx.flush(withOrders);
    if (retractRefusal && !reply.ok && ctx.events.length === 0 && s.accounts.size === accounts && s.prunedDay === prunedDay) {
      s.seq--;
      return { reply: reply as Reply, events: ctx.events, retracted: true };
    }
    return { reply: withOrders ? this.replyWithViews(reply) : (reply as Reply), events: ctx.events };
  }

  private dispatch(cmd: Command): Draft {
    const { entry, amend, funds, prices, tpsl, instruments, positions } = this.stages;
    switch (cmd.kind) {
      case 'instrument.upsert': return instruments.upsertInstrument(cmd.config);
      case 'instrument.trading': return instruments.setTrading(cmd.instrument, cmd.trading);
      case 'matcher.state': return instruments.setMatcher(cmd.state);
      case 'funds.deposit': return funds.deposit(cmd.userId, cmd.amount, cmd.transferId);
      case 'funds.withdraw': return funds.withdraw(cmd.userId, cmd.amount, cmd.transferId, cmd.recipient, cmd.digest);
      case 'funds.withdraw.settle': return funds.settleWithdrawal(cmd.transferId, cmd.success);
      case 'funds.withdraw.hold': return funds.holdWithdrawal(cmd.transferId, cmd.hold);
      case 'order.place': return entry.placeCommand(cmd.userId, cmd.order);
      case 'order.placeBatch': return entry.placeBatch(cmd.userId, cmd.instrument, cmd.orders);
      case 'order.replace': return amend.replaceCommand(cmd.userId, cmd.replace);
      case 'order.replaceBatch': return amend.replaceBatch(cmd.userId, cmd.instrument, cmd.items);
      case 'order.cancel': return amend.cancelCommand(cmd.userId, cmd.orderId);
      case 'order.cancelAll': return amend.cancelAll(cmd.userId, cmd.instrument);
      case 'order.cancelMany': return amend.cancelMany(cmd.userId, cmd.orderIds);
      case 'position.leverage': return positions.changeLeverage(cmd.userId, cmd.instrument, cmd.leverage);
      case 'position.close': return entry.closePosition(cmd.userId, cmd.instrument, cmd.id, cmd.quantity, cmd.leverage);
      case 'price.tick': return prices.priceTick(cmd.instrument, cmd.indexPrice, cmd.markPrice);
      case 'funding.settle': return prices.settleFunding(cmd.instrument, cmd.intervalMs);
      case 'tpsl.create': return tpsl.signed(cmd.userId, cmd.digest, () => tpsl.createTpSl(cmd.userId, cmd.instrument, cmd.type, cmd.side, cmd.quantity, cmd.price, cmd.orderId));
      case 'tpsl.modify': return tpsl.signed(cmd.userId, cmd.digest, () => tpsl.modifyTpSl(cmd.userId, cmd.instrument, cmd.id, cmd.type, cmd.side, cmd.quantity, cmd.price));
      case 'tpsl.cancel': return tpsl.cancelTpSl(cmd.userId, cmd.instrument, cmd.id);
      default: return fail(400, 'UNKNOWN_COMMAND', `Unknown command ${(cmd as { kind: string }).kind}`);
    }
  }

  /** The reply's orders as the views the command's events carry (their state when the command ended). */
  private replyWithViews(draft: Draft): Reply {
    if (!draft.ok) return draft;
    const flushed = this.ctx.flushedOrders;
    const views = this.ctx.flushedViews;
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
        const byOrder = new Map<unknown, OrderView>();
        for (let i = 0; i < flushed.length; i++) byOrder.set(flushed[i], views[i]);
        reply.orders = orders.map((o) => byOrder.get(o) ?? o.view());
      }
    }
    empty(flushed);
    empty(views);
    return reply;
  }

  snapshot(): EngineSnapshot {
    return { version: SNAPSHOT_VERSION, seq: this.s.seq, state: serializeState(this.s) };
  }

  stateHash(): string {
    return createHash('sha256').update(JSON.stringify(serializeState(this.s))).digest('hex');
  }

  checkInvariants(): void {
    let problem = findInvariantViolation(this.s) ?? this.ctx.tpslIndex.problemWith(this.s.tpsls) ?? this.spentProblem();
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
    return this.ledgerTerms();
  }
}

export function createEngine(): Engine {
  return new Engine();
}

export function restoreEngine(snapshot: EngineSnapshot): Engine {
  if (!snapshot || !isReadableSnapshotVersion(snapshot.version)) throw new Error('unsupported engine snapshot version');
  return new Engine(restoreState(snapshot.state, snapshot.seq));
}
