/** Public types of the read store: filters in, pages of engine views out. */
import type { Money, Units } from '../domain/fixed.js';
import type { OrderGroup, OrderStatus, OrderType, Side, TpSlStatus, TpSlType, TransferStatus, TransferType } from '../domain/enums.js';

export type StoreDialectKind = 'sqlite' | 'postgres';

export type StoreConfig =
  | { kind: 'sqlite'; file: string }
  | { kind: 'postgres'; connectionString: string; poolSize?: number };

/** A time bound: epoch ms, an ISO-8601 string, a numeric string of epoch ms, or a Date. */
export type TimeInput = number | string | Date;

/** One value or several (matches any of them); null/undefined/[] = no filter. */
export type OneOrMany<T> = T | readonly T[] | null | undefined;

/** Refusal of a filter the caller sent (bad time, bad cursor…): the API should answer 400. */
export class StoreQueryError extends Error {
  readonly code = 'invalid-query';
}

/**
 * Paging. `limit`: default 50, clamped to [1, 500]. `offset` (deprecated) skips rows and is ignored when
 * `next` is given. `next` is the opaque cursor a previous page returned (keyset: last row's sort key + id).
 */
export interface PageInput {
  limit?: number;
  offset?: number;
  next?: string | null;
}

/**
 * Time windows are half-open: `after` is inclusive (≥), `before` exclusive (<), so back-to-back windows
 * neither overlap nor leave gaps.
 */
export interface TimeWindow {
  after?: TimeInput | null;
  before?: TimeInput | null;
}

export interface Page<T> {
  list: T[];
  /** Rows matching the filter (independent of paging). */
  count: number;
  /** Present when more rows exist after this page. */
  next?: string;
}

export type OrderGroupStatus = 'OPENED' | 'CLOSED' | 'CANCELLED' | 'INACTIVE';
export type OrderSort = 'created-at-asc' | 'created-at-desc' | 'updated-at-asc' | 'updated-at-desc';

export interface OrderFilter extends PageInput, TimeWindow {
  /** v1 or v2 ids; ids that are neither match nothing. */
  id?: OneOrMany<string>;
  instrument?: OneOrMany<string>;
  status?: OneOrMany<OrderStatus>;
  side?: Side | null;
  groupStatus?: OrderGroupStatus | null;
  group?: OneOrMany<OrderGroup>;
  type?: OneOrMany<OrderType>;
  /** 'yes' → triggeredAt set; 'no' → not set. */
  triggered?: 'yes' | 'no' | null;
  sort?: OrderSort | null;
}

export interface FillFilter extends PageInput, TimeWindow {
  instrument?: OneOrMany<string>;
  /** MAKER, TAKER, NONE. */
  role?: OneOrMany<string>;
}

export type FundingChangeFilter = PageInput & TimeWindow;

export interface TransferFilter extends PageInput, TimeWindow {
  status?: OneOrMany<TransferStatus>;
  type?: OneOrMany<TransferType>;
}

export interface TpSlFilter extends PageInput {
  instrument?: OneOrMany<string>;
  status?: OneOrMany<TpSlStatus>;
  type?: TpSlType | null;
  triggeredOrder?: OneOrMany<string>;
}

/** Close types: how the lifetime ended, from the group of the order whose fill closed it. */
export const CLOSE_TYPES = ['manually', 'liquidation', 'adl', 'tpsl'] as const;
export type CloseType = (typeof CLOSE_TYPES)[number];
export type PositionHistorySort = 'open-at-asc' | 'open-at-desc' | 'close-at-asc' | 'close-at-desc';

export interface PositionHistoryFilter extends PageInput {
  instrument?: OneOrMany<string>;
  closeType?: OneOrMany<CloseType>;
  side?: Side | null;
  openAfter?: TimeInput | null;
  openBefore?: TimeInput | null;
  closeAfter?: TimeInput | null;
  closeBefore?: TimeInput | null;
  sort?: PositionHistorySort | null;
}

/** One closed position lifetime (from open until its quantity reached 0, or it flipped side). */
export interface PositionHistoryView {
  id: string;
  userId: number;
  instrument: string;
  /** The engine's position id during this lifetime. */
  positionId: string;
  side: Side;
  openAt: number;
  closeAt: number;
  maxQuantity: Units;
  /** Σ entry cost / Σ entry quantity (Units price). */
  avgEntryPrice: Units;
  /** Σ exit value / Σ exit quantity (Units price); see position-lifetime.ts for how exits are valued. */
  avgExitPrice: Units;
  realizedPnL: Money;
  fee: Money;
  fundingPaid: Money;
  closeType: CloseType;
}

/** Latest collateral balance per coin (GET /api/user/funding). */
export interface FundingBalanceView {
  coin: string;
  balance: Money;
  updatedAt: number;
}
