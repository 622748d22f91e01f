/**
 * `groupStatus` of GET /api/order, as SQL conditions on (status, type, triggered_at).
 *
 * - OPENED: the order is live — INTENTION, NEW or PARTIALLY_FILLED, including stop orders still waiting
 *   for their trigger (they are listed as open orders too).
 * - INACTIVE: the live orders that are not in the book yet: type STOP or STOP_LIMIT with triggeredAt null
 *   (a subset of OPENED).
 * - CLOSED: FILLED.
 * - CANCELLED: every other terminal status — CANCELLED, EXPIRED, REJECTED, REPLACED, ERROR.
 */
import type { OrderStatus, OrderType } from '../domain/enums.js';
import type { OrderGroupStatus } from './types.js';

export const LIVE_STATUSES: readonly OrderStatus[] = ['INTENTION', 'NEW', 'PARTIALLY_FILLED'];
export const STOP_TYPES: readonly OrderType[] = ['STOP', 'STOP_LIMIT'];

export interface GroupStatusCondition {
  statuses: readonly OrderStatus[];
  /** When set, also type ∈ these and triggered_at IS NULL. */
  untriggeredStopsOnly: boolean;
}

export function groupStatusCondition(g: OrderGroupStatus): GroupStatusCondition {
  switch (g) {
    case 'OPENED':
      return { statuses: LIVE_STATUSES, untriggeredStopsOnly: false };
    case 'INACTIVE':
      return { statuses: LIVE_STATUSES, untriggeredStopsOnly: true };
    case 'CLOSED':
      return { statuses: ['FILLED'], untriggeredStopsOnly: false };
    case 'CANCELLED':
      return { statuses: ['CANCELLED', 'EXPIRED', 'REJECTED', 'REPLACED', 'ERROR'], untriggeredStopsOnly: false };
  }
}

/** The same rule in memory (tests, and anyone filtering engine views directly). */
export function matchesGroupStatus(o: { status: OrderStatus; type: OrderType; triggeredAt: number | null }, g: OrderGroupStatus): boolean {
  const c = groupStatusCondition(g);
  if (!c.statuses.includes(o.status)) return false;
  return !c.untriggeredStopsOnly || (STOP_TYPES.includes(o.type) && o.triggeredAt === null);
}
