/** The engine's whole state: what snapshots hold and the state hash covers. */
import { addSafe, safeOf, type Money } from '../domain/fixed.js';
import type { Account } from './account.js';
import type { Market } from './market.js';
import type { MatcherView, TransferView } from './records.js';
import type { TpSlState } from './tpsl.js';
import type { OrderIdIndex } from './order-id-index.js';
import type { OrderState } from './order.js';
import type { SpentKeys } from './spent-keys.js';

export type TransferState = TransferView;

/**
 * Running totals of the money identity (see checkInvariants). Fees and the reserve fund grow on every fill:
 * kept as safe integers (NaN where they may not be one) with the bigint made when asked or holding the exact
 * value, so a fill adds to them without bigint arithmetic.
 */
export class Totals {
  private feesSafe: number;
  private feesBig: Money | null;
  private reserveSafe: number;
  private reserveBig: Money | null;

  constructor(public deposits: Money, public withdrawals: Money, fees: Money, reserveFund: Money) {
    this.feesBig = fees;
    this.feesSafe = safeOf(fees);
    this.reserveBig = reserveFund;
    this.reserveSafe = safeOf(reserveFund);
  }

  /** Trading fees collected by the exchange. */
  get fees(): Money {
    return this.feesBig ?? (this.feesBig = BigInt(this.feesSafe));
  }

  set fees(v: Money) {
    this.feesBig = v;
    this.feesSafe = safeOf(v);
  }

  /** Insurance fund: liquidation fees in, bankrupt losses out. */
  get reserveFund(): Money {
    return this.reserveBig ?? (this.reserveBig = BigInt(this.reserveSafe));
  }

  set reserveFund(v: Money) {
    this.reserveBig = v;
    this.reserveSafe = safeOf(v);
  }

  /** fees += n (liquidation: reserveFund += n) for a safe integer n, in numbers while the sum stays safe. */
  addFeeSafe(n: number, liquidation: boolean): void {
    if (liquidation) {
      const r = addSafe(this.reserveSafe, n);
      if (r === r) {
        this.reserveSafe = r;
        this.reserveBig = null;
      } else {
        this.reserveFund = this.reserveFund + BigInt(n);
      }
      return;
    }
    const f = addSafe(this.feesSafe, n);
    if (f === f) {
      this.feesSafe = f;
      this.feesBig = null;
    } else {
      this.fees = this.fees + BigInt(n);
    }
  }
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
