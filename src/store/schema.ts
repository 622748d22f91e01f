/**
 * Table shapes of the read models, as Kysely sees them. Column conventions (both dialects):
 * - prices/quantities (Units) and money (Money) are BIGINT counts of 1e-8; never floats;
 * - times are BIGINT epoch milliseconds;
 * - booleans are INTEGER 0/1;
 * - `seq` is the journal sequence of the batch that last wrote the row, `ev` the event's index in it
 *   (together they order rows that share a timestamp, deterministically, on every rebuild).
 *
 * Integers read back as number (SQLite small), bigint (SQLite with safeIntegers) or string (pg int8),
 * so every read goes through `codec.ts`.
 */
import type { ColumnType } from 'kysely';

/** An integer column: written as number/bigint, read as whatever the driver returns. */
export type Int = ColumnType<number | bigint | string, number | bigint, number | bigint>;
export type NullableInt = ColumnType<number | bigint | string | null, number | bigint | null, number | bigint | null>;

export interface OrdersTable {
  user_id: Int;
  id: string;
  /** canonicalOrderKey(id): v1 and v2 spellings of one order meet here. */
  order_key: string;
  instrument: string;
  type: string;
  side: string;
  status: string;
  rejected_reason: string;
  time_in_force: string;
  post_only: Int;
  leverage: Int;
  quantity: Int;
  limit_price: Int;
  stop_price: NullableInt;
  order_group: string;
  unfilled_quantity: Int;
  cash_quantity: Int;
  filled_quantity: Int;
  filled_value: Int;
  realized_pnl: Int;
  fee: Int;
  triggered_at: NullableInt;
  created_at: Int;
  updated_at: Int;
  seq: Int;
}

export interface FillsTable {
  execution_id: string;
  order_id: string;
  order_key: string;
  user_id: Int;
  instrument: string;
  side: string;
  role: string;
  quantity: Int;
  price: Int;
  fee: Int;
  realized_pnl: Int;
  created_at: Int;
  seq: Int;
  ev: Int;
  /** Rank among the user's fills in (created_at, seq, ev) order, from 1 (row-ordinals.ts). */
  user_seq: NullableInt;
  /** Rank among the user's fills on this instrument, in this role, on this instrument in this role. */
  user_inst_seq: NullableInt;
  user_role_seq: NullableInt;
  user_inst_role_seq: NullableInt;
}

export interface TradesTable {
  execution_id: string;
  instrument: string;
  side: string;
  quantity: Int;
  price: Int;
  created_at: Int;
  seq: Int;
  ev: Int;
}

export interface FundingChangesTable {
  seq: Int;
  ev: Int;
  user_id: Int;
  coin: string;
  quantity: Int;
  balance: Int;
  reason: string;
  updated_at: Int;
  /** Rank among the user's movements in (updated_at, seq, ev) order, from 1 (row-ordinals.ts). */
  user_seq: NullableInt;
}

export interface OrderFeesTable {
  id: string;
  user_id: Int;
  order_id: string;
  execution_id: string;
  coin: string;
  quantity: Int;
  type: string;
  created_at: Int;
  seq: Int;
  ev: Int;
}

export interface TransfersTable {
  id: string;
  user_id: Int;
  type: string;
  coin: string;
  amount: Int;
  fee: Int;
  status: string;
  created_at: Int;
  updated_at: Int;
  seq: Int;
}

export interface TpslTable {
  user_id: Int;
  id: string;
  instrument: string;
  type: string;
  side: string;
  quantity: Int;
  price: Int;
  status: string;
  order_id: string | null;
  /** canonicalOrderKey(order_id), for tpslForOrders. */
  order_key: string | null;
  trigger_order: string | null;
  triggered_quantity: Int;
  cancelled_reason: string;
  created_at: Int;
  updated_at: Int;
  seq: Int;
}

/** Last PositionView seen per (user, instrument): the base for fee/PnL/funding deltas. Internal. */
export interface PositionLastTable {
  user_id: Int;
  instrument: string;
  position_id: string;
  side: string;
  quantity: Int;
  cost_basis: Int;
  realized_pnl: Int;
  fee: Int;
  funding_paid: Int;
}

/** One row per position lifetime (open → quantity 0). close_at NULL = still open (not served). */
export interface PositionHistoryTable {
  id: string;
  user_id: Int;
  instrument: string;
  position_id: string;
  side: string;
  open_at: Int;
  close_at: NullableInt;
  max_quantity: Int;
  /** Quantity currently held (working state while open). */
  quantity: Int;
  entry_quantity: Int;
  entry_value: Int;
  exit_quantity: Int;
  exit_value: Int;
  realized_pnl: Int;
  fee: Int;
  funding_paid: Int;
  close_type: string | null;
  seq: Int;
}

/** Maintained by triggers (count-triggers.ts): rows per order combination of one user. */
export interface OrderCountsTable {
  user_id: Int;
  instrument: string;
  status: string;
  side: string;
  type: string;
  order_group: string;
  triggered: Int;
  n: Int;
  min_created: Int;
  max_created: Int;
  version: Int;
}

export interface ProjectorMetaTable {
  id: Int;
  last_seq: Int;
}

export interface StoreDatabase {
  orders: OrdersTable;
  fills: FillsTable;
  trades: TradesTable;
  funding_changes: FundingChangesTable;
  order_fees: OrderFeesTable;
  transfers: TransfersTable;
  tpsl: TpslTable;
  position_last: PositionLastTable;
  position_history: PositionHistoryTable;
  projector_meta: ProjectorMetaTable;
  order_counts: OrderCountsTable;
}

export type TableName = keyof StoreDatabase;
