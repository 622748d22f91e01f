/**
 * Netting position arithmetic (one-way mode), exact in money units.
 *
 * A position keeps its signed size and its entry cost basis (Σ fill notionals of the open quantity). A
 * fill that reduces the position releases the proportional share of the cost; realized PnL is the fill's
 * closing notional minus that share (long) or the share minus the notional (short). Because the released
 * cost is subtracted exactly from what stays, Σ over all users of (realized PnL − signed open cost) equals
 * the sum of trade cash flows, which is zero: that is the conservation identity checkInvariants proves.
 */
import { mulDivHalfUp, type Money, type Units } from '../domain/fixed.js';
import type { Position } from './account.js';

export interface FillEffect {
  /** PnL realized by this fill (money units, signed). */
  realized: Money;
  /** Quantity by which |position| shrank (closing part of the fill). */
  closed: Units;
  /** Quantity by which the position grew on its (possibly new) side. */
  opened: Units;
}

/**
 * Applies a fill of `qty` (> 0) at notional `value` to `pos`; `buy` is the fill's side for this user.
 * Mutates the position's size and cost.
 */
export function applyFill(pos: Position, buy: boolean, qty: Units, value: Money): FillEffect {
  const size = pos.qty;
  const sameDirection = size === 0 || (size > 0) === buy;
  if (sameDirection) {
    pos.qty = buy ? size + qty : size - qty;
    pos.cost += value;
    pos.side = buy ? 'BUY' : 'SELL';
    return { realized: 0n, closed: 0, opened: qty };
  }
  const abs = size < 0 ? -size : size;
  const closed = qty < abs ? qty : abs;
  const releasedCost = closed === abs ? pos.cost : mulDivHalfUp(pos.cost, BigInt(closed), BigInt(abs));
  const closingValue = closed === qty ? value : mulDivHalfUp(value, BigInt(closed), BigInt(qty));
  const realized = size > 0 ? closingValue - releasedCost : releasedCost - closingValue;
  pos.cost -= releasedCost;
  const opened = qty - closed;
  if (opened === 0) {
    pos.qty = size > 0 ? size - closed : size + closed;
  } else {
    // Flip: the rest of the fill opens a position on the other side at the rest of the notional.
    pos.qty = buy ? opened : -opened;
    pos.cost = value - closingValue;
    pos.side = buy ? 'BUY' : 'SELL';
  }
  return { realized, closed, opened };
}

/** Signed cost: + for longs (paid), − for shorts (received). Used by the conservation identity. */
export function signedCost(pos: Position): Money {
  return pos.qty < 0 ? -pos.cost : pos.cost;
}
