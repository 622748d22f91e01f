/**
 * Order ids.
 * - Version 2 (clients make these): `DDDDD:` + 26 hex characters, DDDDD = whole UTC days since 2025-07-24.
 * - Version 1 (legacy, still accepted where the spec says so): a canonical UUID `8-4-4-4-12`. A v1 id
 *   names the order whose v2 suffix equals the UUID's first 26 hex digits (dashes removed), so both
 *   spellings reach the same order.
 */
export const ORDER_ID_V2_RE = /^[0-9]{5}:[0-9A-Fa-f]{26}$/;
export const ORDER_ID_V1_RE = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;
export const ORDER_ID_EPOCH_MS = Date.UTC(2025, 6, 24);
const DAY_MS = 86_400_000;

/**
 * Scans a v2 id by character codes (hand-written: the regex plus a second pass to lower-case cost more per
 * order than the rest of validation). Returns -1 when it is not a v2 id, 1 when its hex has upper case, else 0.
 */
function scanV2(id: string): number {
  if (id.length !== 32 || id.charCodeAt(5) !== 58 /* : */) return -1;
  for (let i = 0; i < 5; i++) {
    const c = id.charCodeAt(i);
    if (c < 48 || c > 57) return -1;
  }
  let upper = 0;
  for (let i = 6; i < 32; i++) {
    const c = id.charCodeAt(i);
    if ((c >= 48 && c <= 57) || (c >= 97 && c <= 102)) continue;
    if (c >= 65 && c <= 70) { upper = 1; continue; }
    return -1;
  }
  return upper;
}

export function isOrderIdV2(id: string): boolean {
  return typeof id === 'string' && scanV2(id) >= 0;
}

/** The DDDDD day prefix of a v2 id, read from its char codes (no substring: the engine reads it several times per order). */
export function orderIdDay(id: string): number {
  let day = 0;
  for (let i = 0; i < 5; i++) {
    const d = id.charCodeAt(i) - 48;
    if (!(d >= 0 && d <= 9)) return Number(id.slice(0, 5)); // not five digits: whatever Number() reads there, as before
    day = day * 10 + d;
  }
  return day;
}

export function dayNumber(tsMs: number): number {
  return Math.floor((tsMs - ORDER_ID_EPOCH_MS) / DAY_MS);
}

export function orderIdPrefix(tsMs: number): string {
  return String(dayNumber(tsMs)).padStart(5, '0');
}

/**
 * The spec's batch rule: the prefix may not be earlier than midnight of the previous day. We also refuse
 * prefixes dated more than one day ahead of the server's day, so ids cannot be minted for the far future.
 */
export function isOrderIdDateAllowed(id: string, nowMs: number): boolean {
  const day = orderIdDay(id);
  const today = dayNumber(nowMs);
  return day >= today - 1 && day <= today + 1;
}

/** Canonical key for lookups: v2 id with lower-case hex; v1 UUIDs map onto the v2 suffix. */
export function canonicalOrderKey(id: string): string | null {
  const v2 = scanV2(id);
  if (v2 === 0) return id.slice(6);
  if (v2 === 1) return id.slice(6).toLowerCase();
  if (ORDER_ID_V1_RE.test(id)) return id.replace(/-/g, '').slice(0, 26).toLowerCase();
  return null;
}

/**
 * The text holding an order id's 26 hex digits at its end, for lookups that read them in place: a v2 id
 * itself (digits after `DDDDD:`, either case), or the canonical key of a v1 UUID; null when it is neither.
 */
export function orderIdDigits(id: string): string | null {
  return scanV2(id) >= 0 ? id : canonicalOrderKey(id);
}

/** The hex digits that start every system order id's 26 (all f): the namespace isSystemOrderIdSpace reserves. */
const SYSTEM_ID_MARK = 10;

/** Deterministic id for orders the engine creates itself (liquidation, ADL, TP/SL triggers). */
export function systemOrderId(tsMs: number, sequence: number): string {
  return `${orderIdPrefix(tsMs)}:${'f'.repeat(SYSTEM_ID_MARK)}${sequence.toString(16).padStart(26 - SYSTEM_ID_MARK, '0')}`;
}

/**
 * Whether a v2 id lies in the namespace of systemOrderId (26 hex digits starting with ten f's, either case).
 * Lookups key an order by its 26 digits per user, so a client order holding such an id would share it with
 * an order the engine creates for that user later; the gateway refuses these ids on create. A random UUID
 * starts with ten f's once in 2^40.
 */
export function isSystemOrderIdSpace(id: string): boolean {
  if (typeof id !== 'string' || scanV2(id) < 0) return false;
  for (let i = 6; i < 6 + SYSTEM_ID_MARK; i++) {
    const c = id.charCodeAt(i);
    if (c !== 102 /* f */ && c !== 70 /* F */) return false;
  }
  return true;
}
