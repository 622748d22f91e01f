/**
 * Order estimates computed with the engine's own functions (src/engine: compileInstrument, OpenVolume,
 * instrumentLock, applyFill, accountRisk/mustLiquidate, bankruptcyPrice; src/domain/fixed for the fee), so
 * what the form shows is what the engine will reserve and charge. Cross margin: every position of the
 * account counts, held at its mark.
 */
import { applyRateCeil, formatUnits, notional, parseMoney } from '../../../src/domain/fixed.js';
import type { InstrumentConfig } from '../../../src/domain/instrument.js';
import { instrumentLock, newAccount, newPosition, type Account, type Position } from '../../../src/engine/account.js';
import { OpenVolume } from '../../../src/engine/open-volume.js';
import { compileInstrument, type InstrumentRules } from '../../../src/engine/instrument-rules.js';
import { accountRisk, bankruptcyPrice, mustLiquidate } from '../../../src/engine/margin.js';
import type { Market } from '../../../src/engine/market.js';
import { applyFill } from '../../../src/engine/position-math.js';

type Num = number | string;

/** The fields of GET /api/market/instrument this needs. */
export interface WireInstrument {
  id: string;
  priceIncrement: Num; quantityIncrement: Num; minQuantity: Num; maxQuantity: Num; minVolume: Num; minPrice: Num; maxPrice: Num;
  maxLeverage: number;
  leverageLimit: Record<string, number>;
  maintenanceMargin: Record<string, { percent: number; deviance: number }>;
  markPrice?: Num | null;
}
export interface WireFees { maker: Num; taker: Num; liquidation: Num }
export interface WirePosition { instrument: string; side: 'BUY' | 'SELL'; quantity: Num; avgPrice: Num; leverage: number }
export interface WireOpenOrder { instrument: string; side: 'BUY' | 'SELL'; unFilledQuantity: Num; limitPrice: Num }

const dec = (v: Num): string => formatUnits(parseMoney(typeof v === 'number' ? v.toFixed(8) : v));
const units = (v: Num): number => Number(parseMoney(typeof v === 'number' ? v.toFixed(8) : v));

/** The engine's InstrumentRules rebuilt from the public instrument record and fee schedule. */
export function rulesOf(i: WireInstrument, fees: WireFees): InstrumentRules {
  const config: InstrumentConfig = {
    id: i.id, name: i.id, displayName: i.id, from: '', to: '',
    priceIncrement: dec(i.priceIncrement), quantityIncrement: dec(i.quantityIncrement), lotSize: '1', multiplier: '1',
    minQuantity: dec(i.minQuantity), maxQuantity: dec(i.maxQuantity), minVolume: dec(i.minVolume), minPrice: dec(i.minPrice), maxPrice: dec(i.maxPrice),
    maxLeverage: i.maxLeverage,
    leverageLimit: Object.entries(i.leverageLimit).map(([lev, limit]) => ({ maxLeverage: Number(lev), notionalLimit: dec(limit) })),
    // The wire carries the rate as a percent: rate = percent / 100, exact at 8 decimals for the configured tiers.
    maintenanceMargin: Object.entries(i.maintenanceMargin).map(([from, t]) => ({
      notionalFrom: from, rate: formatUnits(parseMoney(t.percent.toFixed(8)) / 100n), deviance: dec(t.deviance),
    })),
    makerFee: dec(fees.maker), takerFee: dec(fees.taker), liquidationFee: dec(fees.liquidation),
    slippageLimit: '0', fatFingerPriceProtection: '0', markPriceLimit: '0',
    trading: 'all', visibility: 'all', marketState: 'OPEN', startDate: '', isPopular: false, newLabel: false,
  } as InstrumentConfig;
  return compileInstrument(config);
}

export interface AccountInput {
  /** Funding balance (collateral), decimal. */
  balance: Num;
  positions: WirePosition[];
  openOrders: WireOpenOrder[];
  /** Mark price per instrument. */
  marks: Record<string, Num | null | undefined>;
}

export interface OrderInput {
  side: 'BUY' | 'SELL';
  /** Quantity in base units (decimal). */
  quantity: Num;
  /** Limit price, or for a market order the expected average fill price. */
  price: Num;
  leverage: number;
  /** Fills at once (market order, or a limit that crosses the book) rather than resting. */
  taker: boolean;
}

export interface Estimate {
  notional: bigint;
  /** Margin the order adds to the account's lock (the position's initial margin after a fill). */
  margin: bigint;
  fee: bigint;
  /** margin + fee: what the available balance must cover. */
  cost: bigint;
  /** Position after the fill (signed units), when the order fills. */
  positionAfter: number | null;
  liquidationPrice: bigint | null;
  bankruptcyPrice: bigint | null;
}

interface Built { acc: Account; markets: Map<string, Market> }

function buildAccount(input: AccountInput, rules: Map<string, InstrumentRules>): Built {
  const acc = newAccount(1);
  acc.balance = parseMoney(typeof input.balance === 'number' ? input.balance.toFixed(8) : input.balance);
  const markets = new Map<string, Market>();
  for (const [id, r] of rules) {
    const mark = input.marks[id];
    markets.set(id, { id, rules: r, valuationPrice: mark === null || mark === undefined ? null : units(mark) } as unknown as Market);
  }
  for (const p of input.positions) {
    const qty = units(p.quantity);
    if (qty === 0) continue;
    acc.positions.set(p.instrument, newPosition({
      id: p.instrument, instrument: p.instrument, qty: p.side === 'BUY' ? qty : -qty, side: p.side,
      cost: notional(qty, units(p.avgPrice)), realizedPnL: 0n, fee: 0n, fundingPaid: 0n, createdAt: 0, updatedAt: 0,
    }));
    acc.leverage.set(p.instrument, p.leverage);
  }
  for (const o of input.openOrders) {
    const v = acc.openVolume.get(o.instrument) ?? new OpenVolume(o.instrument);
    v.change(o.side === 'BUY', units(o.unFilledQuantity), units(o.limitPrice), 1);
    acc.openVolume.set(o.instrument, v);
  }
  return { acc, markets };
}

/**
 * Price at which the engine would liquidate the account, the position in `instrument` valued at that price and
 * everything else at its mark: the engine's own accountRisk/mustLiquidate, searched over price increments.
 */
export function liquidationPrice(acc: Account, markets: Map<string, Market>, instrument: string): bigint | null {
  const pos = acc.positions.get(instrument);
  const m = markets.get(instrument);
  if (!pos || pos.qty === 0 || !m) return null;
  const inc = m.rules.priceIncrement;
  const saved = m.valuationPrice;
  const at = (ticks: number): boolean => {
    (m as { valuationPrice: number | null }).valuationPrice = ticks * inc;
    return mustLiquidate(accountRisk(acc, markets));
  };
  try {
    const maxTicks = Math.floor(m.rules.maxPrice > 0 ? (m.rules.maxPrice * 4) / inc : 1e12 / inc);
    if (pos.qty > 0) {
      // Liquidated at and below L: the largest tick still liquidated.
      if (!at(1)) return null;
      let lo = 1, hi = maxTicks;
      if (at(hi)) return BigInt(hi * inc);
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (at(mid)) lo = mid;
        else hi = mid;
      }
      return BigInt(lo * inc);
    }
    // Short: liquidated at and above L: the smallest tick liquidated.
    if (!at(maxTicks)) return null;
    let lo = 1, hi = maxTicks;
    if (at(lo)) return BigInt(inc);
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (at(mid)) hi = mid;
      else lo = mid;
    }
    return BigInt(hi * inc);
  } finally {
    (m as { valuationPrice: number | null }).valuationPrice = saved;
  }
}

/** What the order costs and, if it fills, what the position will look like. */
export function estimateOrder(instrument: string, allRules: Map<string, InstrumentRules>, account: AccountInput, order: OrderInput): Estimate {
  const rules = allRules.get(instrument)!;
  const { acc, markets } = buildAccount(account, allRules);
  const qty = units(order.quantity);
  const price = units(order.price);
  const value = notional(qty, price);
  const buy = order.side === 'BUY';
  const pos = acc.positions.get(instrument);
  const leverage = acc.leverage.get(instrument) ?? order.leverage;
  const before = instrumentLock(pos, acc.openVolume.get(instrument), leverage).lock;
  const fee = applyRateCeil(value, order.taker ? rules.takerFee : rules.makerFee);
  if (!order.taker) {
    const vol = acc.openVolume.get(instrument) ?? new OpenVolume(instrument);
    vol.change(buy, qty, price, 1);
    acc.openVolume.set(instrument, vol);
    const after = instrumentLock(pos, vol, order.leverage).lock;
    const margin = after > before ? after - before : 0n;
    return { notional: value, margin, fee, cost: margin + fee, positionAfter: null, liquidationPrice: null, bankruptcyPrice: null };
  }
  const p: Position = pos ?? newPosition({
    id: instrument, instrument, qty: 0, side: order.side, cost: 0n, realizedPnL: 0n, fee: 0n, fundingPaid: 0n, createdAt: 0, updatedAt: 0,
  });
  acc.positions.set(instrument, p);
  const effect = applyFill(p, buy, qty, value);
  acc.balance = acc.balance + effect.realized - fee;
  acc.leverage.set(instrument, order.leverage);
  const after = instrumentLock(p, acc.openVolume.get(instrument), order.leverage).lock;
  const margin = after > before ? after - before : 0n;
  const bp = bankruptcyPrice(acc, p, markets);
  return {
    notional: value, margin, fee, cost: margin + fee, positionAfter: p.qty,
    liquidationPrice: liquidationPrice(acc, markets, instrument),
    bankruptcyPrice: bp === null ? null : BigInt(bp),
  };
}

/** Liquidation price of an existing position (positions panel), same search as for an order. */
export function positionLiquidationPrice(instrument: string, allRules: Map<string, InstrumentRules>, account: AccountInput): bigint | null {
  const { acc, markets } = buildAccount(account, allRules);
  return liquidationPrice(acc, markets, instrument);
}
