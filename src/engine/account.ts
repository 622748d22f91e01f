/**
 * A user's margin account: collateral balance, positions (one per instrument, netting) and the open-order
 * volume that reserves margin. Cross margin per the wire contract:
 *   available = balance − pending withdrawals + Σ min(0, uPnL at mark) − Σ lock
 *   lock(instrument) = max(IM + sameSideOpen/lev, |IM − oppositeSideOpen/lev|),  IM = qty × avgPrice / lev
 */
import { ceilDivUnits, notional, notionalExact, productParts, productScratch, SCALE_N, type Money, type Units } from '../domain/fixed.js';
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
  /** smallMoney(cost), kept with it by positions made with newPosition (PositionRecord). */
  readonly costDouble?: number;
  /** Listed in the engine's changed positions of the command being applied (not state: false between commands). */
  touched?: boolean;
}

/** The fields of a new position (cost and the rest as they start). */
export type PositionInit = Omit<Position, 'costDouble' | 'touched'>;

/** As AccountRecord's balance: the cost keeps its double beside it, written with it. */
class PositionRecord implements Position {
  readonly id: string;
  readonly instrument: string;
  qty: number;
  side: Side;
  private costBig: Money;
  costDouble: number;
  realizedPnL: Money;
  fee: Money;
  fundingPaid: Money;
  readonly createdAt: number;
  updatedAt: number;
  touched = false;

  constructor(p: PositionInit) {
    this.id = p.id;
    this.instrument = p.instrument;
    this.qty = p.qty;
    this.side = p.side;
    this.costBig = p.cost;
    this.costDouble = smallMoney(p.cost);
    this.realizedPnL = p.realizedPnL;
    this.fee = p.fee;
    this.fundingPaid = p.fundingPaid;
    this.createdAt = p.createdAt;
    this.updatedAt = p.updatedAt;
  }

  get cost(): Money {
    return this.costBig;
  }

  set cost(v: Money) {
    this.costBig = v;
    this.costDouble = smallMoney(v);
  }
}

export function newPosition(p: PositionInit): Position {
  return new PositionRecord(p);
}

const UNIT = 100_000_000;
/** Largest open volume per side kept in doubles (units of 1e-8): sums and locks built from it stay below 2^53. */
const SAFE_SUM = 2 ** 52;
const SAFE_RAW = BigInt(SAFE_SUM) * SCALE_N;

/**
 * Open-order volume per instrument: Σ remaining × price of the account's live buy and sell orders, exact at
 * 1e-16 so it never drifts. Kept as doubles — whole 1e-8 units plus the remainder below one unit — because
 * every order's margin check reads it and bigint arithmetic there was the engine's largest single cost
 * (hand-written for that reason). A side whose sum passes SAFE_SUM units (~45 million USDT of open orders)
 * switches to exact bigints until it falls back below.
 */
export class OpenVolume {
  buyUnits = 0;
  buyFrac = 0;
  sellUnits = 0;
  sellFrac = 0;
  /** The exact sums (1e-16) while a side is too large for the double parts; null otherwise. */
  private big: { buy: bigint; sell: bigint } | null = null;

  constructor(readonly instrument: string) {}

  static fromRaw(instrument: string, buyRaw: bigint, sellRaw: bigint): OpenVolume {
    const v = new OpenVolume(instrument);
    v.setRaw(buyRaw, sellRaw);
    return v;
  }

  /** Σ remaining × price of the live buy orders (1e-16 units). */
  get buyRaw(): bigint {
    return this.big !== null ? this.big.buy : BigInt(this.buyUnits) * SCALE_N + BigInt(this.buyFrac);
  }

  get sellRaw(): bigint {
    return this.big !== null ? this.big.sell : BigInt(this.sellUnits) * SCALE_N + BigInt(this.sellFrac);
  }

  /** Whether the double parts hold the sums (else only buyRaw/sellRaw do). */
  get exact(): boolean {
    return this.big === null;
  }

  /** Adds (sign 1) or removes (sign −1) quantity × price on one side. */
  change(isBid: boolean, quantity: Units, price: Units, sign: 1 | -1): void {
    if (this.big === null && productParts(quantity, price)) {
      let u = (isBid ? this.buyUnits : this.sellUnits) + sign * productScratch.units;
      let f = (isBid ? this.buyFrac : this.sellFrac) + sign * productScratch.frac;
      if (f < 0) { f += UNIT; u -= 1; } else if (f >= UNIT) { f -= UNIT; u += 1; }
      if (u <= SAFE_SUM) {
        if (isBid) {
          this.buyUnits = u;
          this.buyFrac = f;
        } else {
          this.sellUnits = u;
          this.sellFrac = f;
        }
        return;
      }
    }
    const delta = BigInt(quantity) * BigInt(price);
    const raw = sign === 1 ? delta : -delta;
    this.setRaw(isBid ? this.buyRaw + raw : this.buyRaw, isBid ? this.sellRaw : this.sellRaw + raw);
  }

  private setRaw(buyRaw: bigint, sellRaw: bigint): void {
    if (buyRaw >= 0n && sellRaw >= 0n && buyRaw <= SAFE_RAW && sellRaw <= SAFE_RAW) {
      this.big = null;
      this.buyUnits = Number(buyRaw / SCALE_N);
      this.buyFrac = Number(buyRaw % SCALE_N);
      this.sellUnits = Number(sellRaw / SCALE_N);
      this.sellFrac = Number(sellRaw % SCALE_N);
    } else {
      this.big = { buy: buyRaw, sell: sellRaw };
    }
  }
}

export interface Account {
  userId: number;
  balance: Money;
  /** smallMoney(balance), kept up to date by newAccount's accounts (see AccountRecord); NaN when too large. */
  readonly balanceDouble: number;
  pendingWithdrawals: Money;
  /** smallMoney(pendingWithdrawals), kept with it as balanceDouble is. */
  readonly pendingDouble: number;
  positions: Map<string, Position>;
  /** Live orders (resting, or untriggered stops) in listing order; EngineState.orderIds finds one by id. */
  orders: AccountOrders<OrderState>;
  openVolume: Map<string, OpenVolume>;
  leverage: Map<string, number>;
  marginCall: boolean;
  updatedAt: number;
  /** Queued for the liquidator's check of the command being applied (RiskQueue; not state: false between commands). */
  riskQueued?: boolean;
}

/**
 * The balance and the pending withdrawals keep their doubles beside them, written with them: the margin
 * check reads the doubles without touching the bigint objects (a likely cache miss per order: an account's
 * data is scattered over the heap and each balance change allocates a new bigint); a write costs one
 * conversion.
 */
class AccountRecord implements Account {
  private balanceBig: Money = 0n;
  balanceDouble = 0;
  private pendingBig: Money = 0n;
  pendingDouble = 0;
  readonly positions = new Map<string, Position>();
  readonly orders = new AccountOrders<OrderState>();
  readonly openVolume = new Map<string, OpenVolume>();
  readonly leverage = new Map<string, number>();
  marginCall = false;
  updatedAt = 0;
  riskQueued = false;

  constructor(readonly userId: number) {}

  get balance(): Money {
    return this.balanceBig;
  }

  set balance(v: Money) {
    this.balanceBig = v;
    this.balanceDouble = smallMoney(v);
  }

  get pendingWithdrawals(): Money {
    return this.pendingBig;
  }

  set pendingWithdrawals(v: Money) {
    this.pendingBig = v;
    this.pendingDouble = smallMoney(v);
  }
}

export function newAccount(userId: number): Account {
  return new AccountRecord(userId);
}

export function openVolumeOf(acc: Account, instrument: string): OpenVolume {
  let v = acc.openVolume.get(instrument);
  if (v === undefined) {
    v = new OpenVolume(instrument);
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

// ---------------------------------------------------------------------------------------------------------
// The same margin arithmetic in doubles, for the per-order check (bigint arithmetic allocates on every step).
// Exact by construction: every term is an integer of magnitude ≤ TERM_LIMIT and a running sum stays
// ≤ SUM_LIMIT, so no addition rounds; anything larger answers "not exact" and the caller uses bigints.
// ---------------------------------------------------------------------------------------------------------

const TERM_LIMIT = 2 ** 50;
/** Bound of a running sum of TERM_LIMIT terms, checked after each instrument (two terms): stays below 2^53. */
export const SUM_LIMIT = 2 ** 52;

/**
 * The amount as a double when |v| ≤ 2^50 (exact); NaN otherwise. Converts first and checks the double: the
 * conversion rounds monotonically, so a larger amount never lands inside the range, and bigint comparisons
 * are builtin calls.
 */
export function smallMoney(v: Money): number {
  const n = Number(v);
  return n <= TERM_LIMIT && n >= -TERM_LIMIT ? n : NaN;
}

/** balance − pending withdrawals (what every margin figure starts from) in doubles; NaN when too large. */
export function collateralUnits(acc: Account): number {
  // Doubles only: comparing the bigint with 0n would load it (a cache miss on every margin check).
  return acc.pendingDouble === 0 ? acc.balanceDouble : acc.balanceDouble - acc.pendingDouble;
}

/** smallMoney(pos.cost), without touching the bigint when the position keeps its double (newPosition). */
export function costUnits(pos: Position): number {
  const d = pos.costDouble;
  return d !== undefined ? d : smallMoney(pos.cost);
}

/** ⌈units + frac / 1e8⌉ for one side plus optional extra parts; −1 beyond the double range. */
function sideCeil(units: number, frac: number, extraUnits: number, extraFrac: number): number {
  let u = units + extraUnits;
  let f = frac + extraFrac;
  if (f >= UNIT) { f -= UNIT; u += 1; }
  if (u > SAFE_SUM) return -1;
  return f > 0 ? u + 1 : u;
}

/**
 * lockOf in doubles, with `extraUnits`/`extraFrac` (a quantity × price split by productParts) more open
 * volume on the buy (`extraIsBid`) or sell side; −1 when it cannot be computed exactly in doubles.
 */
export function lockUnits(
  pos: Position | undefined, vol: OpenVolume | undefined, leverage: number, extraIsBid: boolean, extraUnits: number, extraFrac: number,
): number {
  let buy: number;
  let sell: number;
  if (vol === undefined) {
    buy = sideCeil(0, 0, extraIsBid ? extraUnits : 0, extraIsBid ? extraFrac : 0);
    sell = sideCeil(0, 0, extraIsBid ? 0 : extraUnits, extraIsBid ? 0 : extraFrac);
  } else {
    if (!vol.exact) return -1;
    buy = sideCeil(vol.buyUnits, vol.buyFrac, extraIsBid ? extraUnits : 0, extraIsBid ? extraFrac : 0);
    sell = sideCeil(vol.sellUnits, vol.sellFrac, extraIsBid ? 0 : extraUnits, extraIsBid ? 0 : extraFrac);
  }
  if (buy < 0 || sell < 0 || leverage < 1) return -1;
  let im = 0;
  if (pos !== undefined && pos.qty !== 0) {
    const cost = costUnits(pos);
    if (cost !== cost) return -1;
    im = ceilDivUnits(cost, leverage);
  }
  const long = pos === undefined || pos.qty >= 0;
  const a = im + ceilDivUnits(long ? buy : sell, leverage);
  const d = im - ceilDivUnits(long ? sell : buy, leverage);
  const lock = a > (d < 0 ? -d : d) ? a : d < 0 ? -d : d;
  return lock <= TERM_LIMIT ? lock : -1;
}

/** unrealizedPnL in doubles; NaN when it cannot be computed exactly in doubles. */
export function unrealizedUnits(pos: Position, mark: Units | null): number {
  if (pos.qty === 0 || mark === null) return 0;
  const value = notionalExact(Math.abs(pos.qty), mark);
  if (value < 0 || value > TERM_LIMIT) return NaN;
  const cost = costUnits(pos);
  return pos.qty > 0 ? value - cost : cost - value;
}
