/**
 * The engine's read side: what the gateway reads from the live state (instruments, orders, positions, TpSl,
 * balances, pending transfers, depth, buying power) and the money identity's terms. Nothing here changes state.
 */
import type { Money, Units } from '../domain/fixed.js';
import type { InstrumentConfig } from '../domain/instrument.js';
import { orderIdDigits } from '../domain/order-id.js';
import { newAccount } from './account.js';
import { signedCost } from './position-math.js';
import { positionView } from './positions.js';
import type {
  AvailableBalanceView, DepthView, InstrumentStateView, MatcherView, OrderView, PositionView, TpSlView, TransferView,
} from './records.js';
import type { RiskChecks } from './risk-checks.js';
import type { EngineState } from './state.js';
import { tpslView } from './tpsl.js';
import type { TpSlIndex } from './tpsl-index.js';

export class EngineViews {
  /** Everything that is state lives in `s` (snapshot/hash); the rest is per-command scratch or derived. */
  constructor(readonly s: EngineState, private readonly tpslIndex: TpSlIndex, private readonly risk: RiskChecks) {}

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
    for (const pos of acc.positions.values()) if (pos.qty !== 0) out.push(positionView(this.s, acc, pos));
    return out;
  }

  tpsls(userId: number): TpSlView[] {
    const out: TpSlView[] = [];
    for (const t of this.tpslIndex.ofUser(userId)) out.push(tpslView(t));
    return out;
  }

  account(userId: number): AvailableBalanceView {
    const acc = this.s.accounts.get(userId) ?? newAccount(userId);
    return this.risk.accountView(acc);
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
    return this.risk.power(userId, instrument);
  }

  /** Money identity terms (all money units): balances + fees + reserve fund − open cost = deposits − withdrawals. */
  protected ledgerTerms(): { balances: Money; fees: Money; reserveFund: Money; openCost: Money; deposits: Money; withdrawals: Money } {
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
