/** The engine's whole state: what snapshots hold and the state hash covers. */
import type { Money } from '../domain/fixed.js';
import type { Account } from './account.js';
import type { Market } from './market.js';
import type { MatcherView, TransferView } from './records.js';
import type { TpSlState } from './tpsl.js';
import type { OrderIdIndex } from './order-id-index.js';
import type { OrderState } from './order.js';
import type { SpentKeys } from './spent-keys.js';

export type TransferState = TransferView;

/** Running totals of the money identity (see checkInvariants). */
export interface Totals {
  deposits: Money;
  withdrawals: Money;
  /** Trading fees collected by the exchange. */
  fees: Money;
  /** Insurance fund: liquidation fees in, bankrupt losses out. */
  reserveFund: Money;
}

/** Counters behind deterministic ids. */
export interface Counters {
  execution: number;
  position: number;
  tpsl: number;
  systemOrder: number;
  /** Arrival order of live orders (also several per command, e.g. a batch): restores per-user order lists. */
  placement: number;
}

export interface EngineState {
  seq: number;
  matcher: MatcherView;
  /** Insertion order = listing order of instruments. */
  markets: Map<string, Market>;
  accounts: Map<number, Account>;
  /** Live TpSl only (finished ones are history, kept by the read model). */
  tpsls: Map<string, TpSlState>;
  /** Pending withdrawals. */
  transfers: Map<string, TransferState>;
  /** Every transfer id ever applied (a repeat is refused, so a retried deposit cannot credit twice). */
  transferIds: Set<string>;
  totals: Totals;
  counters: Counters;
  /** Client order ids of every user: live ones lead to their order; used ones are kept until they leave the id window (pruned daily). */
  orderIds: OrderIdIndex<OrderState>;
  /** Last UTC day for which used order ids were pruned. */
  prunedDay: number;
  /** Keys spent by users' commands (signed instructions' digests, spent-signatures.ts): refused a second time. */
  spent: SpentKeys;
}
