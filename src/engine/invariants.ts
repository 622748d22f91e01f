/**
 * Invariants that must hold after every command (tests call Engine.checkInvariants after each one):
 * 1. Money is conserved exactly:
 *      Σ balances + fees + reserve fund − Σ signed open cost = deposits − withdrawals
 *    (signed open cost: + for longs, − for shorts; with no open positions this is the plain
 *    "balances + fees + reserve = deposits − withdrawals"; see position-math.ts for why).
 * 2. Open interest balances: Σ long sizes = Σ short sizes per instrument, and matches the market counters.
 * 3. No crossed book; every price level's total equals the sum of its orders.
 * 4. Each account's reserved open-order volume equals Σ remaining × price of its live orders.
 * 5. The reserve fund (liquidation fees and funding residue in; losses beyond collateral out) is never negative,
 *    and premium-sample counters are consistent (no samples → no premium sum).
 * 6. Each account's locked withdrawals equal Σ amounts of its unsettled (pending or blocked) withdrawals.
 */
import { safeOf } from '../domain/fixed.js';
import { smallMoney } from './account.js';
import type { EngineState } from './state.js';
import { signedCost } from './position-math.js';

export function findInvariantViolation(s: EngineState): string | null {
  // 1. money
  let balances = 0n;
  let openCost = 0n;
  for (const acc of s.accounts.values()) {
    balances += acc.balance;
    for (const p of acc.positions.values()) {
      openCost += signedCost(p);
      if (p.qty === 0 && p.cost !== 0n) return `closed position ${p.id} keeps cost ${p.cost}`;
      if (p.cost < 0n) return `position ${p.id} has negative cost`;
    }
  }
  const left = balances + s.totals.fees + s.totals.reserveFund - openCost;
  const right = s.totals.deposits - s.totals.withdrawals;
  if (s.totals.reserveFund < 0n) return `reserve fund negative: ${s.totals.reserveFund}`;
  if (left !== right) return `money not conserved: balances ${balances} + fees ${s.totals.fees} + reserve ${s.totals.reserveFund} − open cost ${openCost} = ${left} ≠ deposits − withdrawals = ${right}`;

  // 2. open interest
  const long = new Map<string, number>();
  const short = new Map<string, number>();
  for (const acc of s.accounts.values()) {
    for (const p of acc.positions.values()) {
      if (p.qty > 0) long.set(p.instrument, (long.get(p.instrument) ?? 0) + p.qty);
      if (p.qty < 0) short.set(p.instrument, (short.get(p.instrument) ?? 0) - p.qty);
    }
  }
  for (const m of s.markets.values()) {
    const l = long.get(m.id) ?? 0;
    const sh = short.get(m.id) ?? 0;
    if (l !== sh) return `${m.id}: long open interest ${l} ≠ short open interest ${sh}`;
    if (l !== m.longInterest || sh !== m.shortInterest) return `${m.id}: open interest counters ${m.longInterest}/${m.shortInterest} ≠ positions ${l}/${sh}`;

    let holding = 0;
    for (const acc of s.accounts.values()) {
      const p = acc.positions.get(m.id);
      if (p && p.qty !== 0) {
        holding++;
        if (!m.holders.has(acc)) return `${m.id}: user ${acc.userId} holds a position but is not indexed as a holder`;
      }
    }
    if (holding !== m.holders.size) return `${m.id}: ${m.holders.size} indexed holders ≠ ${holding} positions`;
    if (m.premiumSamples === 0 && m.premiumSum !== 0n) return `${m.id}: premium sum ${m.premiumSum} without samples`;

    // 3. book
    if (m.book.isCrossed()) return `${m.id}: crossed book (bid ${m.book.bestBid()} ≥ ask ${m.book.bestAsk()})`;
    for (const side of [m.book.bids, m.book.asks]) {
      for (const level of side.levels) {
        let total = 0;
        let count = 0;
        for (let o = level.head; o !== null; o = o.next) {
          if (o.price !== level.price) return `${m.id}: order at ${o.price} in level ${level.price}`;
          if (o.remaining <= 0) return `${m.id}: empty order resting at ${level.price}`;
          total += o.remaining;
          count++;
        }
        if (total !== level.total || count !== level.count || count === 0) return `${m.id}: level ${level.price} totals out of step`;
      }
    }
  }

  // 4. the doubles kept beside balances and position costs (the margin fast path reads them) match
  const sameDouble = (d: number | undefined, v: bigint) => d === undefined || Object.is(d, smallMoney(v));
  for (const acc of s.accounts.values()) {
    if (!sameDouble(acc.balanceDouble, acc.balance)) return `user ${acc.userId}: balance double ${acc.balanceDouble} ≠ ${acc.balance}`;
    if (!sameDouble(acc.pendingDouble, acc.pendingWithdrawals)) return `user ${acc.userId}: pending withdrawals double ${acc.pendingDouble} ≠ ${acc.pendingWithdrawals}`;
    for (const pos of acc.positions.values()) {
      if (!sameDouble(pos.costDouble, pos.cost)) return `user ${acc.userId} ${pos.instrument}: cost double ${pos.costDouble} ≠ ${pos.cost}`;
      if (!Object.is(pos.realizedSafe, safeOf(pos.realizedPnL)) || !Object.is(pos.feeSafe, safeOf(pos.fee)) || !Object.is(pos.costSafe, safeOf(pos.cost))) {
        return `user ${acc.userId} ${pos.instrument}: safe-integer money ${pos.costSafe}/${pos.realizedSafe}/${pos.feeSafe} ≠ ${pos.cost}/${pos.realizedPnL}/${pos.fee}`;
      }
    }
  }

  // 5. reserved volume; the id index leads to exactly the listed orders
  let listed = 0;
  for (const acc of s.accounts.values()) listed += acc.orders.size;
  if (listed !== s.orderIds.liveCount) return `${s.orderIds.liveCount} live order ids for ${listed} open orders`;
  for (const acc of s.accounts.values()) {
    const expected = new Map<string, { buy: bigint; sell: bigint }>();
    for (const o of acc.orders.values()) {
      const e = expected.get(o.instrument) ?? { buy: 0n, sell: 0n };
      const raw = BigInt(o.remaining) * BigInt(o.price);
      if (o.isBid) e.buy += raw;
      else e.sell += raw;
      expected.set(o.instrument, e);
      if (!o.isLive) return `user ${acc.userId}: finished order ${o.id} still listed as open`;
      if (s.orderIds.lookup(acc.userId, o.id) !== o) return `user ${acc.userId}: open order ${o.id} not found by its id`;
    }
    for (const [instrument, vol] of acc.openVolume) {
      const e = expected.get(instrument) ?? { buy: 0n, sell: 0n };
      if (vol.buyRaw !== e.buy || vol.sellRaw !== e.sell) {
        return `user ${acc.userId} ${instrument}: reserved volume ${vol.buyRaw}/${vol.sellRaw} ≠ open orders ${e.buy}/${e.sell}`;
      }
    }
  }
  // 6. withdrawal locks
  const locked = new Map<number, bigint>();
  for (const t of s.transfers.values()) {
    if (t.status !== 'pending' && t.status !== 'blocked') return `transfer ${t.id} is ${t.status} but still unsettled`;
    locked.set(t.userId, (locked.get(t.userId) ?? 0n) + t.amount);
  }
  for (const acc of s.accounts.values()) {
    const want = locked.get(acc.userId) ?? 0n;
    if (acc.pendingWithdrawals !== want) return `user ${acc.userId}: locked withdrawals ${acc.pendingWithdrawals} ≠ unsettled transfers ${want}`;
  }
  return null;
}
