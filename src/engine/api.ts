/** The engine's public surface: commands in, events out, plus read-only queries for the gateway. */
import type { Command } from './commands.js';
import type {
  AvailableBalanceView, CommandResult, DepthView, InstrumentStateView, MatcherView, OrderView, PositionView,
  TpSlView, TransferView,
} from './records.js';
import type { InstrumentConfig } from '../domain/instrument.js';
import type { Units } from '../domain/fixed.js';

/** Snapshot format written now: 2 added the spent keys (spent-keys.ts). */
export const SNAPSHOT_VERSION = 2;

/** Versions this engine restores: a version 1 snapshot is a state with no spent keys. */
export function isReadableSnapshotVersion(version: unknown): version is 1 | 2 {
  return version === 1 || version === 2;
}

/** JSON-serializable full state (bigints as decimal strings). */
export interface EngineSnapshot {
  version: 1 | 2;
  /** Sequence number of the last command applied before the snapshot. */
  seq: number;
  state: unknown;
}

/** The engine's queries without `apply`: what a gateway reads from a follower (only the log changes it). */
export type EngineQueries = Omit<ExchangeEngine, 'apply'>;

export interface ExchangeEngine {
  /**
   * Applies one command. Deterministic: no wall clock, no randomness, no I/O. With `retractRefusal`, a refusal
   * that changed nothing (no event, no state) gives back its seq and comes back `retracted`: the sequencer
   * answers it without journaling it. Replays apply without it, so journals that hold refusals still replay.
   */
  apply(cmd: Command, retractRefusal?: boolean): CommandResult;
  /** Number of commands applied so far (the journal sequence of the last one). */
  readonly seq: number;

  snapshot(): EngineSnapshot;
  /** sha256 (hex) of the canonical serialization of the state. Equal states give equal hashes. */
  stateHash(): string;
  /** Throws with a description when an invariant does not hold (money conservation, OI balance, crossed book). */
  checkInvariants(): void;
  /** Optional (test fakes lack it). Money identity terms (money units): Σ balances, fees and reserve fund collected, open cost, deposits, withdrawals. */
  ledger?(): { balances: bigint; fees: bigint; reserveFund: bigint; openCost: bigint; deposits: bigint; withdrawals: bigint };

  // ---- queries (read-only) ----
  instrumentConfigs(): InstrumentConfig[];
  instrumentConfig(id: string): InstrumentConfig | undefined;
  instrumentState(id: string): InstrumentStateView | undefined;
  matcher(): MatcherView;
  /** Accepts a v2 id or a v1 UUID; only the owner's orders are found. */
  getOrder(userId: number, orderId: string): OrderView | undefined;
  openOrders(userId: number): OrderView[];
  positions(userId: number): PositionView[];
  tpsls(userId: number): TpSlView[];
  account(userId: number): AvailableBalanceView;
  /** Pending withdrawals only (finished transfers are history, in the read model). */
  transfer(transferId: string): TransferView | undefined;
  /** Unsettled (pending or blocked) withdrawals, oldest first; of one user when `userId` is given. */
  pendingTransfers?(userId?: number): TransferView[];
  /** Whether a transfer id has been applied (deposits and withdrawals, any status). */
  hasTransfer(transferId: string): boolean;
  /** Whether the user has used this order id (any status, while the id is inside the order-id window). */
  hasOrderId(userId: number, orderId: string): boolean;
  /** Aggregated depth; `grouping` in Units (0 = raw price levels). */
  depth(instrument: string, maxLevel: number, grouping: Units): DepthView | undefined;
  /** Buying power: largest order volume (collateral) the user can open on each side. */
  power(userId: number, instrument: string): { buy: bigint; sell: bigint } | undefined;
}
