/**
 * Engine state ⇄ JSON. The serialization is canonical (accounts sorted by id, books walked worst → best
 * level and FIFO within a level, every other collection in its deterministic insertion order), so it is
 * also what the state hash is computed over: two engines with equal state give equal JSON.
 *
 * Orders are arrays (field order in ORDER_FIELDS) to keep snapshots of a million resting orders small.
 */
import type { InstrumentConfig } from '../domain/instrument.js';
import type { OrderGroup, OrderStatus, OrderType, Side, TimeInForce, TradingState } from '../domain/enums.js';
import { newAccount, newPosition, type Position } from './account.js';
import { OpenVolume } from './open-volume.js';
import { compileInstrument } from './instrument-rules.js';
import { Market } from './market.js';
import { OrderState } from './order.js';
import type { BookSide } from './order-book.js';
import { Totals, type EngineState, type TransferState } from './state.js';
import type { TpSlState } from './tpsl.js';
import { OrderIdIndex, USED_ID_WORDS } from './order-id-index.js';
import { orderIdDay } from '../domain/order-id.js';
import { SpentKeys, type SpentEntry } from './spent-keys.js';

type OrderJson = [
  id: string, userId: number, instrument: string, type: OrderType, side: Side, tif: TimeInForce, postOnly: boolean,
  leverage: number, quantity: number, limitPrice: number, stopPrice: number | null, group: OrderGroup, cashQuantity: number,
  smpId: string | null, createdAt: number, price: number, remaining: number, status: OrderStatus, rejectedReason: string,
  filledQuantity: number, filledValue: string, realizedPnL: string, fee: string, triggeredAt: number | null, updatedAt: number,
  triggerUp: boolean, smp: boolean, reduceOnly: boolean, expiresAt: number, placedSeq: number,
];

interface PositionJson {
  id: string; instrument: string; qty: number; side: Side; cost: string; realizedPnL: string; fee: string; fundingPaid: string;
  createdAt: number; updatedAt: number;
}

interface AccountJson {
  userId: number; balance: string; pendingWithdrawals: string; marginCall: boolean; updatedAt: number;
  leverage: Array<[string, number]>;
  /** Used order ids, OrderIdIndex.usedByUser's flat numbers (5 per id). Older snapshots hold `usedIds` as [key, day] pairs. */
  usedIdWords?: number[];
  usedIds?: Array<[string, number]>;
  openVolume: Array<[string, string, string]>;
  positions: PositionJson[];
}

interface MarketJson {
  config: InstrumentConfig; trading: TradingState; indexPrice: number | null; markPrice: number | null; lastPrice: number | null;
  longInterest: number; shortInterest: number; bookT: number; updatedAt: number;
  /** Funding state (funding.ts): premium sum and sample count since the last settlement, last rate and its time. */
  funding?: { premiumSum: string; samples: number; rate: string; rateAt: number };
  /** Levels worst → best, orders FIFO within a level. */
  bids: OrderJson[]; asks: OrderJson[]; stops: OrderJson[];
}

interface TransferJson extends Omit<TransferState, 'amount' | 'fee'> { amount: string; fee: string }

export interface StateJson {
  seq: number;
  matcher: { state: string; updatedAt: number };
  markets: MarketJson[];
  accounts: AccountJson[];
  tpsls: TpSlState[];
  transfers: TransferJson[];
  transferIds: string[];
  totals: { deposits: string; withdrawals: string; fees: string; reserveFund: string };
  counters: EngineState['counters'];
  prunedDay: number;
  /** Spent keys (snapshot version 2; absent when there are none, so the hash of a state without any is unchanged). */
  spent?: SpentEntry[];
}

function orderJson(o: OrderState): OrderJson {
  return [
    o.id, o.userId, o.instrument, o.type, o.side, o.timeInForce, o.postOnly, o.leverage, o.quantity, o.limitPrice, o.stopPrice,
    o.group, o.cashQuantity, o.smpId, o.createdAt, o.price, o.remaining, o.status, o.rejectedReason, o.filledQuantity,
    o.filledValue.toString(), o.realizedPnL.toString(), o.fee.toString(), o.triggeredAt, o.updatedAt, o.triggerUp, o.smp,
    o.reduceOnly, o.expiresAt, o.placedSeq,
  ];
}

function orderFromJson(j: OrderJson): OrderState {
  const o = new OrderState(j[0], j[1], j[2], j[3], j[4], j[5], j[6], j[7], j[8], j[9], j[10], j[11], j[12], j[13], j[14]);
  o.price = j[15];
  o.remaining = j[16];
  o.status = j[17];
  o.rejectedReason = j[18];
  o.filledQuantity = j[19];
  o.filledValue = BigInt(j[20]);
  o.realizedPnL = BigInt(j[21]);
  o.fee = BigInt(j[22]);
  o.triggeredAt = j[23];
  o.updatedAt = j[24];
  o.triggerUp = j[25];
  o.smp = j[26];
  o.reduceOnly = j[27];
  o.expiresAt = j[28];
  o.placedSeq = j[29];
  return o;
}

function sideJson(side: BookSide): OrderJson[] {
  const out: OrderJson[] = [];
  for (const level of side.levels) {
    for (let o = level.head; o !== null; o = o.next) out.push(orderJson(o as OrderState));
  }
  return out;
}

function positionJson(p: Position): PositionJson {
  return {
    id: p.id, instrument: p.instrument, qty: p.qty, side: p.side, cost: p.cost.toString(), realizedPnL: p.realizedPnL.toString(),
    fee: p.fee.toString(), fundingPaid: p.fundingPaid.toString(), createdAt: p.createdAt, updatedAt: p.updatedAt,
  };
}

export function serializeState(s: EngineState): StateJson {
  const markets: MarketJson[] = [];
  for (const m of s.markets.values()) {
    markets.push({
      config: m.rules.config, trading: m.trading, indexPrice: m.indexPrice, markPrice: m.markPrice, lastPrice: m.lastPrice,
      longInterest: m.longInterest, shortInterest: m.shortInterest, bookT: m.bookT, updatedAt: m.updatedAt,
      funding: { premiumSum: m.premiumSum.toString(), samples: m.premiumSamples, rate: m.fundingRate.toString(), rateAt: m.fundingRateAt },
      bids: sideJson(m.book.bids), asks: sideJson(m.book.asks), stops: [...m.stops].map(orderJson),
    });
  }
  const usedIds = s.orderIds.usedByUser();
  const accounts: AccountJson[] = [...s.accounts.values()]
    .sort((a, b) => a.userId - b.userId)
    .map((a) => ({
      userId: a.userId, balance: a.balance.toString(), pendingWithdrawals: a.pendingWithdrawals.toString(), marginCall: a.marginCall,
      updatedAt: a.updatedAt, leverage: [...a.leverage], usedIdWords: usedIds.get(a.userId) ?? [],
      openVolume: [...a.openVolume].map(([k, v]) => [k, v.buyRaw.toString(), v.sellRaw.toString()] as [string, string, string]),
      positions: [...a.positions.values()].map(positionJson),
    }));
  return {
    seq: s.seq,
    matcher: { ...s.matcher },
    markets,
    accounts,
    tpsls: [...s.tpsls.values()].map((t) => ({ ...t })),
    transfers: [...s.transfers.values()].map((t) => ({ ...t, amount: t.amount.toString(), fee: t.fee.toString() })),
    transferIds: [...s.transferIds],
    totals: {
      deposits: s.totals.deposits.toString(), withdrawals: s.totals.withdrawals.toString(), fees: s.totals.fees.toString(),
      reserveFund: s.totals.reserveFund.toString(),
    },
    counters: { ...s.counters },
    prunedDay: s.prunedDay,
    ...(s.spent.size > 0 ? { spent: s.spent.entries() } : {}),
  };
}

export function restoreState(raw: unknown, seq: number): EngineState {
  const j = raw as StateJson;
  const accounts = new Map<number, ReturnType<typeof newAccount>>();
  let idCount = 0;
  for (const a of j.accounts) idCount += (a.usedIdWords?.length ?? 0) / USED_ID_WORDS + (a.usedIds?.length ?? 0);
  for (const mj of j.markets) idCount += mj.bids.length + mj.asks.length + mj.stops.length;
  const orderIds = new OrderIdIndex<OrderState>(idCount);
  for (const a of j.accounts) {
    const acc = newAccount(a.userId);
    acc.balance = BigInt(a.balance);
    acc.pendingWithdrawals = BigInt(a.pendingWithdrawals);
    acc.marginCall = a.marginCall;
    acc.updatedAt = a.updatedAt;
    for (const [k, v] of a.leverage) acc.leverage.set(k, v);
    if (a.usedIdWords) orderIds.restoreUsed(a.userId, a.usedIdWords);
    for (const [k, v] of a.usedIds ?? []) orderIds.retire(a.userId, k, v);
    for (const [k, b, s] of a.openVolume) acc.openVolume.set(k, OpenVolume.fromRaw(k, BigInt(b), BigInt(s)));
    for (const p of a.positions) {
      acc.positions.set(p.instrument, newPosition({
        id: p.id, instrument: p.instrument, qty: p.qty, side: p.side, cost: BigInt(p.cost), realizedPnL: BigInt(p.realizedPnL),
        fee: BigInt(p.fee), fundingPaid: BigInt(p.fundingPaid), createdAt: p.createdAt, updatedAt: p.updatedAt,
      }));
    }
    accounts.set(a.userId, acc);
  }
  const markets = new Map<string, Market>();
  const live: OrderState[] = [];
  for (const mj of j.markets) {
    const m = new Market(compileInstrument(mj.config), mj.updatedAt);
    m.trading = mj.trading;
    m.indexPrice = mj.indexPrice;
    m.markPrice = mj.markPrice;
    m.lastPrice = mj.lastPrice;
    m.longInterest = mj.longInterest;
    m.shortInterest = mj.shortInterest;
    m.bookT = mj.bookT;
    if (mj.funding) {
      m.premiumSum = BigInt(mj.funding.premiumSum);
      m.premiumSamples = mj.funding.samples;
      m.fundingRate = BigInt(mj.funding.rate);
      m.fundingRateAt = mj.funding.rateAt;
    }
    for (const oj of mj.bids) {
      const o = orderFromJson(oj);
      m.book.bids.add(o);
      live.push(o);
    }
    for (const oj of mj.asks) {
      const o = orderFromJson(oj);
      m.book.asks.add(o);
      live.push(o);
    }
    for (const oj of mj.stops) {
      const o = orderFromJson(oj);
      m.stops.add(o);
      live.push(o);
    }
    markets.set(m.id, m);
  }
  live.sort((a, b) => a.placedSeq - b.placedSeq);
  for (const o of live) {
    let acc = accounts.get(o.userId);
    if (!acc) {
      acc = newAccount(o.userId);
      accounts.set(o.userId, acc);
    }
    acc.orders.add(o);
    orderIds.setLive(o.userId, o.id, orderIdDay(o.id), o);
  }
  return {
    seq,
    matcher: { ...j.matcher },
    markets,
    accounts,
    tpsls: new Map(j.tpsls.map((t) => [t.id, { ...t }])),
    transfers: new Map(j.transfers.map((t) => [t.id, { ...t, amount: BigInt(t.amount), fee: BigInt(t.fee) }])),
    transferIds: new Set(j.transferIds),
    totals: new Totals(BigInt(j.totals.deposits), BigInt(j.totals.withdrawals), BigInt(j.totals.fees), BigInt(j.totals.reserveFund)),
    counters: { ...j.counters, placement: j.counters.placement ?? 0 },
    orderIds,
    prunedDay: j.prunedDay,
    spent: SpentKeys.restore(j.spent),
  };
}
