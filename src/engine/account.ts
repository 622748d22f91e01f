/**
 * A user's margin account: collateral balance, positions (one per instrument, netting) and the open-order
 * volume that reserves margin. Cross margin per the wire contract:
 *   available = balance − pending withdrawals + Σ min(0, uPnL at mark) − Σ lock
 *   lock(instrument) = max(IM + sameSideOpen/lev, |IM − oppositeSideOpen/lev|),  IM = qty × avgPrice / lev
 */
import { notional, SCALE_N, type Money, type Units } from '../domain/fixed.js';
import type { Side } from '../domain/enums.js';
import type { OrderState } from './order.js';
import { AccountOrders } from './account-orders.js';

export interface Position {
  id: string;
  instrument: string;
  /** Signed size in Units: > 0 long, < 0 short. */
  qty: number;
  /** Side of the last non-zero size (a closed position is reported with the side it had). */
  side: Side;
  /** Entry cost basis (money, ≥ 0): avgPrice = cost / |qty|. */
  cost: Money;
  realizedPnL: Money;
  fee: Money;
  fundingPaid: Money;
  createdAt: number;
  updatedAt: number;
}

/** Open-order volume per instrument, kept exact at 1e-16 (Σ remaining × price) so it never drifts. */
export interface OpenVolume {
  instrument: string;
  buyRaw: bigint;
  sellRaw: bigint;
}

export interface Account {
  userId: number;
  balance: Money;
  pendingWithdrawals: Money;
  positions: Map<string, Position>;
  /** Live orders (resting, or untriggered stops) in listing order; EngineState.orderIds finds one by id. */
  orders: AccountOrders<OrderState>;
  openVolume: Map<string, OpenVolume>;
  leverage: Map<string, number>;
  marginCall: boolean;
  updatedAt: number;
}

export function newAccount(userId: number): Account {
  return {
    userId, balance: 0n, pendingWithdrawals: 0n, positions: new Map(), orders: new AccountOrders(), openVolume: new Map(),
    leverage: new Map(), marginCall: false, updatedAt: 0,
  };
}

export function openVolumeOf(acc: Account, instrument: string): OpenVolume {
  let v = acc.openVolume.get(instrument);
  if (v === undefined) {
    v = { instrument, buyRaw: 0n, sellRaw: 0n };
    acc.openVolume.set(instrument, v);
  }
  return v;
}

function ceilDiv(a: bigint, b: bigint): bigint {
  if (a <= 0n) return 0n;
  return (a + b - 1n) / b;
}

/** Leverages 0..300 as bigints, made once (BigInt(n) allocates on every call). */
const LEVERAGE_N = Array.from({ length: 301 }, (_, i) => BigInt(i));
const bigLeverage = (leverage: number): bigint => LEVERAGE_N[leverage] ?? BigInt(leverage);

function initialMargin(pos: Position | undefined, lev: bigint): Money {
  return pos !== undefined && pos.qty !== 0 ? ceilDiv(pos.cost, lev) : 0n;
}

/** lock = max(IM + same/lev, |IM − opposite/lev|), same/opposite = open volume on the position's side / the other. */
function lockFrom(im: Money, sameVolume: Money, oppositeVolume: Money, lev: bigint): Money {
  const a = im + ceilDiv(sameVolume, lev);
  const d = im - ceilDiv(oppositeVolume, lev);
  const b = d < 0n ? -d : d;
  return a > b ? a : b;
}

/** Margin reserved by one instrument's position and open orders, with its parts (balance views). */
export function instrumentLock(pos: Position | undefined, vol: OpenVolume | undefined, leverage: number): {
  im: Money; lock: Money; buyVolume: Money; sellVolume: Money;
} {
  const lev = bigLeverage(leverage);
  const buyVolume = ceilDiv(vol?.buyRaw ?? 0n, SCALE_N);
  const sellVolume = ceilDiv(vol?.sellRaw ?? 0n, SCALE_N);
  const im = initialMargin(pos, lev);
  const long = pos === undefined || pos.qty >= 0;
  return { im, lock: lockFrom(im, long ? buyVolume : sellVolume, long ? sellVolume : buyVolume, lev), buyVolume, sellVolume };
}

/** The lock alone, from raw open volume (1e-16 units): every order's margin check runs it, so no parts object. */
export function lockOf(pos: Position | undefined, buyRaw: bigint, sellRaw: bigint, leverage: number): Money {
  const lev = bigLeverage(leverage);
  const buyVolume = ceilDiv(buyRaw, SCALE_N);
  const sellVolume = ceilDiv(sellRaw, SCALE_N);
  const long = pos === undefined || pos.qty >= 0;
  return lockFrom(initialMargin(pos, lev), long ? buyVolume : sellVolume, long ? sellVolume : buyVolume, lev);
}

/** Unrealized PnL of a position at `mark`. */
export function unrealizedPnL(pos: Position, mark: Units | null): Money {
  if (pos.qty === 0 || mark === null) return 0n;
  const value = notional(Math.abs(pos.qty), mark);
  return pos.qty > 0 ? value - pos.cost : pos.cost - value;
}
