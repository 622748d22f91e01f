/** Positions: the view every position event and route shows, and leverage changes. */
import { mulDivHalfUp, notional, notionalExact, quotientScratch, scaledQuotient, SCALE_N } from '../domain/fixed.js';
import { costUnits, newAccount, unrealizedPnL, unrealizedUnits, type Account, type Position } from './account.js';
import type { CommandContext } from './command-context.js';
import { maintenanceMargin, maintenanceMarginUnits, notionalCap } from './instrument-rules.js';
import { adlLevel, adlLevelUnits, bankruptcyPrice, bankruptcyPriceUnits } from './margin.js';
import { capRefusal } from './order-rules.js';
import type { PositionView } from './records.js';
import { fail, validUser, type Draft } from './refusal.js';
import type { Stages } from './stages.js';
import type { EngineState } from './state.js';

/** The position as events and routes show it, at the current mark. */
export function positionView(s: EngineState, acc: Account, pos: Position): PositionView {
  const m = s.markets.get(pos.instrument)!;
  const mark = m.valuationPrice;
  const abs = Math.abs(pos.qty);
  const leverage = acc.leverage.get(pos.instrument) ?? 1;
  const side = pos.qty > 0 ? 'BUY' : pos.qty < 0 ? 'SELL' : pos.side;
  // In doubles when every amount fits (every position update of every fill comes here); else in bigints.
  const cost = costUnits(pos);
  const upnl = unrealizedUnits(pos, mark);
  const markValue = mark !== null && abs > 0 ? notionalExact(abs, mark) : cost;
  const mm = abs === 0 ? 0 : markValue >= 0 && markValue <= 2 ** 50 ? maintenanceMarginUnits(m.rules, markValue) : -1;
  let avgPrice = 0;
  const avgExact = abs === 0 || scaledQuotient(cost, abs);
  if (abs !== 0 && avgExact) avgPrice = 2 * quotientScratch.r >= abs ? quotientScratch.q + 1 : quotientScratch.q; // half-up
  const bankruptcy = bankruptcyPriceUnits(acc, pos, s.markets);
  const adl = adlLevelUnits(pos, upnl, cost, leverage);
  if (upnl === upnl && mm >= 0 && avgExact && bankruptcy !== undefined && adl > 0) {
    return {
      id: pos.id, userId: acc.userId, instrument: pos.instrument, side, quantity: abs, costBasis: pos.cost, avgPrice, leverage,
      maintenanceMargin: BigInt(mm), fundingPaid: pos.fundingPaid, fee: pos.fee, realizedPnL: pos.realizedPnL, unRealizedPnL: BigInt(upnl),
      markPrice: mark ?? 0, bankruptcyPrice: bankruptcy, adlLevel: adl, createdAt: pos.createdAt, updatedAt: pos.updatedAt,
    };
  }
  const markValueBig = mark !== null && abs > 0 ? notional(abs, mark) : pos.cost;
  const upnlBig = unrealizedPnL(pos, mark);
  return {
    id: pos.id, userId: acc.userId, instrument: pos.instrument, side,
    quantity: abs, costBasis: pos.cost, avgPrice: abs === 0 ? 0 : Number(mulDivHalfUp(pos.cost, SCALE_N, BigInt(abs))),
    leverage, maintenanceMargin: abs === 0 ? 0n : maintenanceMargin(m.rules, markValueBig), fundingPaid: pos.fundingPaid, fee: pos.fee,
    realizedPnL: pos.realizedPnL, unRealizedPnL: upnlBig, markPrice: mark ?? 0,
    // Cross margin: where the account's equity reaches zero, other positions at their marks (margin.ts).
    bankruptcyPrice: bankruptcyPrice(acc, pos, s.markets),
    adlLevel: adlLevel(pos, upnlBig, leverage), createdAt: pos.createdAt, updatedAt: pos.updatedAt,
  };
}

export class Positions {
  constructor(private readonly ctx: CommandContext, private readonly stages: Stages) {}

  changeLeverage(userId: number, instrument: string, leverage: number): Draft {
    const ctx = this.ctx;
    const m = ctx.s.markets.get(instrument);
    if (!validUser(userId)) return fail(400, 'INVALID_USER', 'Invalid user');
    if (!m) return fail(404, 'INSTRUMENT_NOT_FOUND', `Unknown instrument ${instrument}`);
    if (!Number.isInteger(leverage) || leverage < 1 || leverage > m.rules.maxLeverage) {
      return fail(400, 'INVALID_LEVERAGE', `Leverage must be an integer from 1 to ${m.rules.maxLeverage}`);
    }
    // Checked on an unlisted account for a new user: a refusal must not create one.
    const acc = ctx.s.accounts.get(userId) ?? newAccount(userId);
    const pos = acc.positions.get(instrument);
    if ((acc.leverage.get(instrument) ?? 1) !== leverage) {
      if (this.stages.risk.available(acc, instrument, 0n, 0n, leverage) < 0n) return fail(422, 'INSUFFICIENT_BALANCE', `Insufficient available balance for ${leverage}x leverage`);
      const cap = notionalCap(m.rules, leverage);
      if (cap !== null && pos && pos.cost > cap) return fail(422, 'LEVERAGE_LIMIT', capRefusal(leverage));
      ctx.accountOf(userId).leverage.set(instrument, leverage);
      if (pos && pos.qty !== 0) ctx.touchPosition(acc, pos);
    }
    return pos && pos.qty !== 0 ? { ok: true, position: positionView(ctx.s, acc, pos) } : { ok: true };
  }
}
