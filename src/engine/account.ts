/**
 * A user's margin account: collateral balance, positions (one per instrument, netting) and the open-order
 * volume that reserves margin. Cross margin per the wire contract:
 *   available = balance − pending withdrawals + Σ min(0, uPnL at mark) − Σ lock
 *   lock(instrument) = max(IM + sameSideOpen/lev, |IM − oppositeSideOpen/lev|),  IM = qty × avgPrice / lev
 */
import {
  addSafe, ceilDivUnits, notional, notionalExact, safeOf, SCALE_N, type Money, type Units,
} from '../domain/fixed.js';
import type { Side } from '../domain/enums.js';
import type { OrderState } from './order.js';
import { AccountOrders } from './account-orders.js';
import { OpenVolume, SAFE_SUM } from './open-volume.js';

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
  /** smallMoney(cost). */
  readonly costDouble: number;
  /** cost, realizedPnL and fee as safe integers (exactly equal), or NaN where they may not fit. */
  readonly costSafe: number;
  readonly realizedSafe: number;
  readonly feeSafe: number;
  /** cost = n for a safe integer n. */
  setCostSafe(n: number): void;
  /** realizedPnL += realized, fee += fee for safe integers (numbers while the sums stay safe integers). */
  addRealizedAndFee(realized: number, fee: number): void;
  /** Listed in the engine's changed positions of the command being applied (not state: false between commands). */
  touched?: boolean;
}

/** The fields of a new position (cost and the rest as they start). */
export type PositionInit = Pick<Position, 'id' | 'instrument' | 'qty' | 'side' | 'cost' | 'realizedPnL' | 'fee' | 'fundingPaid' | 'createdAt' | 'updatedAt'>;

/**
 * A position's money kept as safe-integer numbers, with a bigint only where it may not fit (the field's
 * number is then NaN) or once asked for (cached until the next write): each fill writes cost, realized PnL
 * and fee, and bigint arithmetic there allocated on every step.
 */
class PositionRecord implements Position {
  readonly id: string;
  readonly instrument: string;
  qty: number;
  side: Side;
  /** Safe-integer cost, or NaN when only costBig holds it. */
  costSafe: number;
  /** smallMoney(cost), a plain field: the margin check reads it for every order. */
  costDouble: number;
  private costBig: Money | null;
  realizedSafe: number;
  private realizedBig: Money | null;
  feeSafe: number;
  private feeBig: Money | null;
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
    this.costSafe = safeOf(p.cost);
    this.costDouble = smallUnits(this.costSafe);
    this.realizedBig = p.realizedPnL;
    this.realizedSafe = safeOf(p.realizedPnL);
    this.feeBig = p.fee;
    this.feeSafe = safeOf(p.fee);
    this.fundingPaid = p.fundingPaid;
    this.createdAt = p.createdAt;
    this.updatedAt = p.updatedAt;
  }

  get cost(): Money {
    return this.costBig ?? (this.costBig = BigInt(this.costSafe));
  }

  set cost(v: Money) {
    this.costBig = v;
    this.costSafe = safeOf(v);
    this.costDouble = smallUnits(this.costSafe);
  }

  /** Sets the cost from a safe integer. */
  setCostSafe(n: number): void {
    this.costSafe = n;
    this.costDouble = smallUnits(n);
    this.costBig = null;
  }

  get realizedPnL(): Money {
    return this.realizedBig ?? (this.realizedBig = BigInt(this.realizedSafe));
  }

  set realizedPnL(v: Money) {
    this.realizedBig = v;
    this.realizedSafe = safeOf(v);
  }

  get fee(): Money {
    return this.feeBig ?? (this.feeBig = BigInt(this.feeSafe));
  }

  set fee(v: Money) {
    this.feeBig = v;
    this.feeSafe = safeOf(v);
  }

  /** Adds a safe-integer realized PnL and fee, in numbers while the sums stay safe integers. */
  addRealizedAndFee(realized: number, fee: number): void {
    if (realized !== 0) {
      const r = addSafe(this.realizedSafe, realized);
      if (r === r) {
        this.realizedSafe = r;
        this.realizedBig = null;
      } else {
        this.realizedPnL = this.realizedPnL + BigInt(realized);
      }
    }
    if (fee !== 0) {
      const f = addSafe(this.feeSafe, fee);
      if (f === f) {
        this.feeSafe = f;
        this.feeBig = null;
      } else {
        this.fee = this.fee + BigInt(fee);
      }
    }
  }
}

export function newPosition(p: PositionInit): Position {
  return new PositionRecord(p);
}

const UNIT = 100_000_000;

export interface Account {
  userId: number;
  balance: Money;
  /** smallMoney(balance), kept up to date by newAccount's accounts (see AccountRecord); NaN when too large. */
  readonly balanceDouble: number;
  /** balance += delta for a safe-integer delta, in numbers while the sum stays a safe integer. */
  addBalance(delta: number): void;
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
 * The balance is kept as a safe-integer number, with a bigint only where it may not fit (the number is then
 * NaN) or once asked for (cached until the next write): the margin check reads the number without touching a
 * bigint object (a likely cache miss per order), and a fill adds to it without bigint arithmetic. The pending
 * withdrawals keep their double beside the bigint (written rarely).
 */
class AccountRecord implements Account {
  /** Safe-integer balance, or NaN when only balanceBig holds it. */
  private balanceSafe = 0;
  /** smallMoney(balance), a plain field: the margin check reads it for every order. */
  balanceDouble = 0;
  private balanceBig: Money | null = 0n;
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
    return this.balanceBig ?? (this.balanceBig = BigInt(this.balanceSafe));
  }

  set balance(v: Money) {
    this.balanceBig = v;
    this.balanceSafe = safeOf(v);
    this.balanceDouble = smallUnits(this.balanceSafe);
  }

  addBalance(delta: number): void {
    const b = addSafe(this.balanceSafe, delta);
    if (b === b) {
      this.balanceSafe = b;
      this.balanceDouble = smallUnits(b);
      this.balanceBig = null;
    } else {
      this.balance = this.balance + BigInt(delta);
    }
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
  return smallUnits(Number(v));
}

/** A number (a safe integer or NaN) as smallMoney gives it: itself when |n| ≤ 2^50, else NaN. */
function smallUnits(n: number): number {
  return n <= TERM_LIMIT && n >= -TERM_LIMIT ? n : NaN;
}

/** balance − pending withdrawals (what every margin figure starts from) in doubles; NaN when too large. */
export function collateralUnits(acc: Account): number {
  // Doubles only: comparing the bigint with 0n would load it (a cache miss on every margin check).
  return acc.pendingDouble === 0 ? acc.balanceDouble : acc.balanceDouble - acc.pendingDouble;
}

/** smallMoney(pos.cost), without touching the bigint when the position keeps its double (newPosition). */
export function costUnits(pos: Position): number {
  return pos.costDouble;
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
