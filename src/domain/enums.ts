/** Wire enumerations, spelled exactly as public clients send and expect them (docs/api.md). */
export const SIDES = ['BUY', 'SELL'] as const;
export type Side = (typeof SIDES)[number];

export const TIME_IN_FORCE = ['GTC', 'DAY', 'IOC', 'FOK'] as const;
export type TimeInForce = (typeof TIME_IN_FORCE)[number];

export const ORDER_TYPES = ['LIMIT', 'MARKET', 'STOP', 'STOP_LIMIT'] as const;
export type OrderType = (typeof ORDER_TYPES)[number];

export const ORDER_STATUSES = [
  'INTENTION', 'NEW', 'PARTIALLY_FILLED', 'FILLED', 'CANCELLED', 'REJECTED', 'EXPIRED', 'REPLACED', 'ERROR',
] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export const ORDER_GROUPS = ['manually', 'tpsl', 'take-profit', 'stop-loss', 'liquidation', 'adl', 'otc', 'otc-hidden'] as const;
export type OrderGroup = (typeof ORDER_GROUPS)[number];

export const TRADING_STATES = ['all', 'restricted', 'none', 'onlyClose'] as const;
export type TradingState = (typeof TRADING_STATES)[number];

export const VISIBILITY_STATES = ['all', 'restricted', 'none'] as const;
export type Visibility = (typeof VISIBILITY_STATES)[number];

export const MARKET_STATES = ['INHERITED', 'OPEN', 'CLOSED', 'PAUSED', 'HALTED', 'PRE_OPEN_NO_CANCEL', 'PRE_OPEN'] as const;
export type MarketState = (typeof MARKET_STATES)[number];

/** Matcher states seen in the wild; anything but `active` is a global halt. */
export const MATCHER_STATES = ['active', 'request-status-fail', 'me-dead', 'db-admin-dead'] as const;
export type MatcherState = (typeof MATCHER_STATES)[number];

export const FILL_ROLES = ['MAKER', 'TAKER', 'NONE'] as const;
export type FillRole = (typeof FILL_ROLES)[number];

export const TPSL_TYPES = ['take-profit', 'stop-loss'] as const;
export type TpSlType = (typeof TPSL_TYPES)[number];

export const TPSL_STATUSES = ['waitOrder', 'active', 'process', 'triggered', 'done', 'cancelled'] as const;
export type TpSlStatus = (typeof TPSL_STATUSES)[number];

export const TRANSFER_TYPES = [
  'deposit', 'withdraw', 'transfer-pfutures-balance', 'transfer-balance-pfutures', 'paymaster-fee', 'paymaster-refund',
  'cashback-withdraw', 'lucky-shot-withdraw', 'transfer-balance-sub-pfutures',
] as const;
export type TransferType = (typeof TRANSFER_TYPES)[number];

export const TRANSFER_STATUSES = ['pending', 'blocked', 'done', 'error'] as const;
export type TransferStatus = (typeof TRANSFER_STATUSES)[number];

export const ORDER_BOOK_GROUPINGS = ['0.1', '1', '10', '50', '100'] as const;
export type OrderBookGrouping = (typeof ORDER_BOOK_GROUPINGS)[number];

export const COLLATERAL_COIN = 'usdt';

export function oppositeSide(side: Side): Side {
  return side === 'BUY' ? 'SELL' : 'BUY';
}
