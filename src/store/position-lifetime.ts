/**
 * Position history from PositionView events (pure; the projector loads and saves the state).
 *
 * A lifetime opens when a user's position on an instrument goes from nothing to a quantity, and closes
 * when the quantity reaches 0, the side flips in one event, or the engine starts reporting a different
 * position id. How each figure is derived (the engine does not report them directly):
 * - entry: every quantity increase adds Δquantity and ΔcostBasis → avgEntry = Σcost / Σquantity;
 * - exit: every decrease adds Δquantity and the exit value = removed cost basis ± ΔrealizedPnL (long: +,
 *   short: −) → avgExit = Σexit value / Σexit quantity. This assumes PositionView.realizedPnL is gross of
 *   fees and funding (they have their own fields); if it were net, avgExit would be off by fee/quantity;
 * - realizedPnL / fee / fundingPaid: deltas of the view's cumulative counters while the lifetime is open
 *   (deltas, so it does not matter whether the engine resets them per position or keeps a running total);
 *   on a one-event flip, the whole delta goes to the closing lifetime (the fill's fee cannot be split);
 * - closeType: the group of the order of the last fill for that user+instrument in the same batch as the
 *   closing event (liquidation → 'liquidation', adl → 'adl', tpsl/take-profit/stop-loss → 'tpsl',
 *   anything else or no fill found → 'manually'); supplied by the projector.
 */
import type { PositionView } from '../engine/records.js';
import type { OrderGroup, Side } from '../domain/enums.js';
import type { CloseType } from './types.js';

export interface LastSeenPosition {
  positionId: string;
  side: Side;
  quantity: bigint;
  costBasis: bigint;
  realizedPnL: bigint;
  fee: bigint;
  fundingPaid: bigint;
}

export interface Lifetime {
  id: string;
  userId: number;
  instrument: string;
  positionId: string;
  side: Side;
  openAt: number;
  closeAt: number | null;
  maxQuantity: bigint;
  quantity: bigint;
  entryQuantity: bigint;
  entryValue: bigint;
  exitQuantity: bigint;
  exitValue: bigint;
  realizedPnL: bigint;
  fee: bigint;
  fundingPaid: bigint;
  closeType: CloseType | null;
  seq: number;
}

/** What the projector keeps per (user, instrument). */
export interface PositionTrack {
  last: LastSeenPosition | null;
  open: Lifetime | null;
}

export function closeTypeOfGroup(group: OrderGroup | string | undefined): CloseType {
  switch (group) {
    case 'liquidation':
      return 'liquidation';
    case 'adl':
      return 'adl';
    case 'tpsl':
    case 'take-profit':
    case 'stop-loss':
      return 'tpsl';
    default:
      return 'manually';
  }
}

function openLifetime(p: PositionView, seq: number, ev: number): Lifetime {
  const q = BigInt(p.quantity);
  return {
    id: `${p.userId}:${p.instrument}:${seq}:${ev}`,
    userId: p.userId,
    instrument: p.instrument,
    positionId: p.id,
    side: p.side,
    openAt: p.updatedAt,
    closeAt: null,
    maxQuantity: q,
    quantity: q,
    entryQuantity: q,
    entryValue: p.costBasis,
    exitQuantity: 0n,
    exitValue: 0n,
    realizedPnL: 0n,
    fee: 0n,
    fundingPaid: 0n,
    closeType: null,
    seq,
  };
}

/**
 * Applies one position event to the track. Returns the lifetimes it changed (closed and/or opened), which
 * the projector upserts. `closeType` is asked for only when a lifetime closes.
 */
export function applyPositionEvent(
  track: PositionTrack,
  p: PositionView,
  seq: number,
  ev: number,
  closeType: () => CloseType,
): Lifetime[] {
  const changed: Lifetime[] = [];
  const sameId = track.last !== null && track.last.positionId === p.id;
  // Cumulative counters restart when the engine reports a new position object.
  const dR = p.realizedPnL - (sameId ? track.last!.realizedPnL : 0n);
  const dFee = p.fee - (sameId ? track.last!.fee : 0n);
  const dFund = p.fundingPaid - (sameId ? track.last!.fundingPaid : 0n);
  const q = BigInt(p.quantity);
  const prevQty = track.last?.quantity ?? 0n;
  const prevCost = track.last?.costBasis ?? 0n;
  let open = track.open;

  if (open !== null && open.positionId !== p.id) {
    // The engine moved on to a new position object without reporting the old one at 0: close it as is.
    open.exitQuantity += open.quantity;
    open.exitValue += prevCost;
    open.quantity = 0n;
    open.closeAt = p.updatedAt;
    open.closeType = closeType();
    changed.push(open);
    open = null;
  }

  if (open !== null) {
    const sign = open.side === 'BUY' ? 1n : -1n;
    open.realizedPnL += dR;
    open.fee += dFee;
    open.fundingPaid += dFund;
    if (q > 0n && p.side === open.side) {
      if (q > prevQty) {
        open.entryQuantity += q - prevQty;
        open.entryValue += p.costBasis - prevCost;
      } else if (q < prevQty) {
        open.exitQuantity += prevQty - q;
        open.exitValue += prevCost - p.costBasis + sign * dR;
      }
      open.quantity = q;
      if (q > open.maxQuantity) open.maxQuantity = q;
      open.seq = seq;
      changed.push(open);
    } else {
      // Closed (q = 0) or flipped in one event: everything held is exited.
      open.exitQuantity += prevQty;
      open.exitValue += prevCost + sign * dR;
      open.quantity = 0n;
      open.closeAt = p.updatedAt;
      open.closeType = closeType();
      open.seq = seq;
      changed.push(open);
      open = q > 0n ? openLifetime(p, seq, ev) : null;
      if (open) changed.push(open);
    }
  } else if (q > 0n) {
    open = openLifetime(p, seq, ev);
    open.realizedPnL = dR;
    open.fee = dFee;
    open.fundingPaid = dFund;
    changed.push(open);
  }

  track.open = open;
  track.last = {
    positionId: p.id,
    side: p.side,
    quantity: q,
    costBasis: p.costBasis,
    realizedPnL: p.realizedPnL,
    fee: p.fee,
    fundingPaid: p.fundingPaid,
  };
  return changed;
}
