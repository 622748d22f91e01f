/**
 * Netting position arithmetic (one-way mode), exact in money units.
 *
 * A position keeps its signed size and its entry cost basis (Σ fill notionals of the open quantity). A
 * fill that reduces the position releases the proportional share of the cost; realized PnL is the fill's
 * closing notional minus that share (long) or the share minus the notional (short). Because the released
 * cost is subtracted exactly from what stays, Σ over all users of (realized PnL − signed open cost) equals
 * the sum of trade cash flows, which is zero: that is the conservation identity checkInvariants proves.
 */
import { addSafe, mulDivHalfUp, mulDivHalfUpSafe, safeOf, type Money, type Units } from '../domain/fixed.js';
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
 * Where applyFillSafe leaves its effect (module scratch: the fill path allocates no result object): the
 * realized PnL as a safe integer, or NaN with the exact amount in `realized`. Read it before the next call.
 */
export const fillScratch = { realizedSafe: 0, realized: 0n as Money, closed: 0, opened: 0 };

/**
 * Applies a fill of `qty` (> 0) at notional `value` to `pos`; `buy` is the fill's side for this user.
 * Mutates the position's size and cost.
 */
export function applyFill(pos: Position, buy: boolean, qty: Units, value: Money): FillEffect {
  applyFillSafe(pos, buy, qty, value, safeOf(value));
  const r = fillScratch;
  return { realized: r.realizedSafe === r.realizedSafe ? BigInt(r.realizedSafe) : r.realized, closed: r.closed, opened: r.opened };
}

/**
 * applyFill with the notional also as a safe integer (`valueSafe`, NaN when it may not be one), its effect in
 * fillScratch. In numbers when the cost and the notional are safe integers and every product is
 * (mulDivHalfUpSafe); in bigints otherwise: the same integers either way.
 */
export function applyFillSafe(pos: Position, buy: boolean, qty: Units, value: Money, valueSafe: number): void {
  const out = fillScratch;
  const size = pos.qty;
  const sameDirection = size === 0 || (size > 0) === buy;
  if (sameDirection) {
    pos.qty = buy ? size + qty : size - qty;
    const cost = addSafe(pos.costSafe, valueSafe);
    if (cost === cost) pos.setCostSafe(cost);
    else pos.cost += value;
    pos.side = buy ? 'BUY' : 'SELL';
    out.realizedSafe = 0;
    out.closed = 0;
    out.opened = qty;
    return;
  }
  const abs = size < 0 ? -size : size;
  const closed = qty < abs ? qty : abs;
  const opened = qty - closed;
  out.closed = closed;
  out.opened = opened;
  const costSafe = pos.costSafe;
  const releasedSafe = closed === abs ? costSafe : mulDivHalfUpSafe(costSafe, closed, abs);
  const closingSafe = closed === qty ? valueSafe : mulDivHalfUpSafe(valueSafe, closed, qty);
  if (releasedSafe === releasedSafe && closingSafe === closingSafe) {
    // Both in [0, 2^53): their differences are exact safe integers.
    out.realizedSafe = size > 0 ? closingSafe - releasedSafe : releasedSafe - closingSafe;
    if (opened === 0) {
      pos.qty = size > 0 ? size - closed : size + closed;
      pos.setCostSafe(costSafe - releasedSafe);
    } else {
      pos.qty = buy ? opened : -opened;
      pos.setCostSafe(valueSafe - closingSafe);
      pos.side = buy ? 'BUY' : 'SELL';
    }
    return;
  }
  const releasedCost = closed === abs ? pos.cost : mulDivHalfUp(pos.cost, BigInt(closed), BigInt(abs));
  const closingValue = closed === qty ? value : mulDivHalfUp(value, BigInt(closed), BigInt(qty));
  const realized = size > 0 ? closingValue - releasedCost : releasedCost - closingValue;
  pos.cost -= releasedCost;
  if (opened === 0) {
    pos.qty = size > 0 ? size - closed : size + closed;
  } else {
    // Flip: the rest of the fill opens a position on the other side at the rest of the notional.
    pos.qty = buy ? opened : -opened;
    pos.cost = value - closingValue;
    pos.side = buy ? 'BUY' : 'SELL';
  }
  out.realizedSafe = NaN;
  out.realized = realized;
}

/** Signed cost: + for longs (paid), − for shorts (received). Used by the conservation identity. */
export function signedCost(pos: Position): Money {
  return pos.qty < 0 ? -pos.cost : pos.cost;
}
