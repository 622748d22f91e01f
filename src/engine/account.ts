/**
 * A user's margin account: collateral balance, positions (one per instrument, netting) and the open-order
 * volume that reserves margin. Cross margin per the wire contract:
 *   available = balance − pending withdrawals + Σ min(0, uPnL at mark) − Σ lock
 *   lock(instrument) = max(IM + sameSideOpen/lev, |IM − oppositeSideOpen/lev|),  IM = qty × avgPrice / lev
 */
import { notional, SCALE_N, type Money, type Units } from '../domain/fixed.js';
import type { Side } from '../domain/enums.js';
import type { OrderState } from './order.js';

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
  buyRaw: bigint;
  sellRaw: bigint;
}

export interface Account {
  userId: number;
  balance: Money;
  pendingWithdrawals: Money;
  positions: Map<string, Position>;
  /** Live orders (resting, or untriggered stops) in listing order; EngineState.orderIds finds one by id. */
  orders: Set<OrderState>;
  openVolume: Map<string, OpenVolume>;
  leverage: Map<string, number>;
  marginCall: boolean;
  updatedAt: number;
}

export function newAccount(userId: number): Account {
  return {
    userId, balance: 0n, pendingWithdrawals: 0n, positions: new Map(), orders: new Set(), openVolume: new Map(),
    leverage: new Map(), marginCall: false, updatedAt: 0,
  };
}

export function openVolumeOf(acc: Account, instrument: string): OpenVolume {
  let v = acc.openVolume.get(instrument);
  if (v === undefined) {
    v = { buyRaw: 0n, sellRaw: 0n };
    acc.openVolume.set(instrument, v);
  }
  return v;
}

function ceilDiv(a: bigint, b: bigint): bigint {
  if (a <= 0n) return 0n;
  return (a + b - 1n) / b;
}

/** Margin reserved by one instrument's position and open orders. */
export function instrumentLock(pos: Position | undefined, vol: OpenVolume | undefined, leverage: number, extraBuy = 0n, extraSell = 0n): {
  im: Money; lock: Money; buyVolume: Money; sellVolume: Money;
} {
  const lev = BigInt(leverage);
  const buyVolume = ceilDiv((vol?.buyRaw ?? 0n) + extraBuy, SCALE_N);
  const sellVolume = ceilDiv((vol?.sellRaw ?? 0n) + extraSell, SCALE_N);
  const im = pos && pos.qty !== 0 ? ceilDiv(pos.cost, lev) : 0n;
  const long = !pos || pos.qty >= 0;
  const same = ceilDiv(long ? buyVolume : sellVolume, lev);
  const opposite = ceilDiv(long ? sellVolume : buyVolume, lev);
  const a = im + same;
  const d = im - opposite;
  const b = d < 0n ? -d : d;
  return { im, lock: a > b ? a : b, buyVolume, sellVolume };
}

/** Unrealized PnL of a position at `mark`. */
export function unrealizedPnL(pos: Position, mark: Units | null): Money {
  if (pos.qty === 0 || mark === null) return 0n;
  const value = notional(Math.abs(pos.qty), mark);
  return pos.qty > 0 ? value - pos.cost : pos.cost - value;
}
