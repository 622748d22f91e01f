/**
 * Funding (Binance USDT-M style), all in exact integers. Rates and premiums are fractions in 1e-8 units.
 *
 * Premium index, sampled at every price tick:
 *   P_i = (max(0, impactBid − index) − max(0, index − impactAsk)) / index
 * where impactBid/impactAsk are the average prices of selling/buying `lotSize` into the book (a side
 * without `lotSize` of depth counts as index: no premium from it).
 *
 * At settlement (`funding.settle`, once per interval), P = average of the samples since the last settlement
 * (0 without samples) and, for an 8-hour interval,
 *   F8 = P + clamp(I − P, −0.05%, +0.05%),  I = 0.01% (interest),  F8 capped to ±0.75%;
 * for another interval length F = F8 × interval / 8 h (Binance scales by the interval the same way).
 *
 * Payments at the mark price: F > 0 longs pay shorts, F < 0 shorts pay longs. Each payer pays
 * floor(|size| × mark × |F|); the total T is shared among receivers by size, floor(T × size / Σ sizes);
 * the rounding residue (< one 1e-8 unit per receiver) goes to the reserve fund, so payments sum to zero
 * exactly (conservation includes the reserve fund).
 */
import type { Money, Units } from '../domain/fixed.js';
import type { Account, Position } from './account.js';
import type { Market } from './market.js';
import type { BookSide } from './order-book.js';

export const FUNDING_BASE_INTERVAL_MS = 8 * 3600_000;
/** 0.01% per 8 h. */
export const FUNDING_INTEREST = 10_000n;
/** ±0.05% per 8 h. */
export const FUNDING_CLAMP = 50_000n;
/** ±0.75% per 8 h. */
export const FUNDING_CAP = 750_000n;
/** Longest funding interval a settlement may claim (a week). */
export const MAX_FUNDING_INTERVAL_MS = 7 * 86_400_000;

const ONE = 100_000_000n;

/** Average price of trading `lot` against `side` from its best level; undefined when the depth is short. */
export function impactPrice(side: BookSide, lot: Units): bigint | undefined {
  if (lot <= 0) return undefined;
  let left = BigInt(lot);
  let value = 0n; // Σ q × price, 1e-16 units
  // Best level first, only as deep as the lot reaches (`levels` would list the whole side).
  for (let level = side.best(); level !== undefined && left > 0n; level = side.worse(level)) {
    const q = BigInt(level.total) < left ? BigInt(level.total) : left;
    value += q * BigInt(level.price);
    left -= q;
  }
  if (left > 0n) return undefined;
  return value / BigInt(lot);
}

/** One premium-index sample (1e-8 fraction, signed) of the market's book against `index`. */
export function premiumSample(m: Market, index: Units, lot: Units): bigint {
  const idx = BigInt(index);
  const bid = impactPrice(m.book.bids, lot) ?? idx;
  const ask = impactPrice(m.book.asks, lot) ?? idx;
  const up = bid > idx ? bid - idx : 0n;
  const down = idx > ask ? idx - ask : 0n;
  return ((up - down) * ONE) / idx;
}

function clamp(v: bigint, lo: bigint, hi: bigint): bigint {
  return v < lo ? lo : v > hi ? hi : v;
}

/** Funding rate of one settlement from the premium samples, for an interval of `intervalMs`. */
export function fundingRate(premiumSum: bigint, samples: number, intervalMs: number): bigint {
  const p = samples > 0 ? premiumSum / BigInt(samples) : 0n;
  const f8 = clamp(p + clamp(FUNDING_INTEREST - p, -FUNDING_CLAMP, FUNDING_CLAMP), -FUNDING_CAP, FUNDING_CAP);
  return (f8 * BigInt(intervalMs)) / BigInt(FUNDING_BASE_INTERVAL_MS);
}

export interface FundingPayment {
  acc: Account;
  pos: Position;
  /** Signed: − paid, + received. */
  amount: Money;
}

/**
 * Payments of one settlement. `holders` must be in a canonical order (ascending user id) so the receivers'
 * shares are deterministic. Returns the payments and the residue for the reserve fund (≥ 0).
 */
export function fundingPayments(holders: Array<{ acc: Account; pos: Position }>, mark: Units, rate: bigint): { payments: FundingPayment[]; residue: Money } {
  const payments: FundingPayment[] = [];
  if (rate === 0n || holders.length === 0) return { payments, residue: 0n };
  const longsPay = rate > 0n;
  const absRate = rate < 0n ? -rate : rate;
  const price = BigInt(mark);
  let total = 0n;
  let receiverSize = 0n;
  const receivers: Array<{ acc: Account; pos: Position; size: bigint }> = [];
  for (const h of holders) {
    const q = h.pos.qty;
    if (q === 0) continue;
    const size = BigInt(q < 0 ? -q : q);
    if ((q > 0) === longsPay) {
      const pay = (size * price * absRate) / (ONE * ONE);
      if (pay > 0n) {
        total += pay;
        payments.push({ acc: h.acc, pos: h.pos, amount: -pay });
      }
    } else {
      receivers.push({ ...h, size });
      receiverSize += size;
    }
  }
  let paid = 0n;
  if (receiverSize > 0n && total > 0n) {
    for (const r of receivers) {
      const share = (total * r.size) / receiverSize;
      if (share > 0n) {
        paid += share;
        payments.push({ acc: r.acc, pos: r.pos, amount: share });
      }
    }
  }
  return { payments, residue: total - paid };
}
