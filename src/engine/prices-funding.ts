/**
 * Prices and funding: an index tick sets the index and mark prices, samples the premium for funding, fires
 * the stops and TpSl the mark crossed and queues every position holder for the risk sweep; a funding
 * settlement turns the interval's premium samples into a rate and pays it between longs and shorts
 * (funding.ts), the rounding residue to the reserve fund.
 */
import type { Account, Position } from './account.js';
import type { CommandContext } from './command-context.js';
import { fundingPayments, fundingRate, MAX_FUNDING_INTERVAL_MS, premiumSample } from './funding.js';
import { fail, isPositiveUnits, type Draft } from './refusal.js';
import type { Stages } from './stages.js';

export class PricesFunding {
  constructor(private readonly ctx: CommandContext, private readonly stages: Stages) {}

  priceTick(instrument: string, indexPrice: number, markPrice: number | undefined): Draft {
    const ctx = this.ctx;
    const m = ctx.s.markets.get(instrument);
    if (!m) return fail(404, 'INSTRUMENT_NOT_FOUND', `Unknown instrument ${instrument}`);
    if (!isPositiveUnits(indexPrice)) return fail(400, 'INVALID_PRICE', 'Invalid index price');
    if (markPrice !== undefined && !isPositiveUnits(markPrice)) return fail(400, 'INVALID_PRICE', 'Invalid mark price');
    m.indexPrice = indexPrice;
    m.markPrice = markPrice ?? m.computeMark(indexPrice);
    m.premiumSum += premiumSample(m, indexPrice, m.rules.lotSize);
    m.premiumSamples++;
    ctx.touchMarket(m);
    ctx.events.push({ type: 'price', instrument, indexPrice, markPrice: m.markPrice, ts: ctx.ts });
    this.stages.stops.runTriggers(m);
    for (const acc of m.holders) ctx.riskCandidates.add(acc);
    return { ok: true };
  }

  /** Funding of the interval that ended: rate from the premium samples, payments at mark. */
  settleFunding(instrument: string, intervalMs: number): Draft {
    const ctx = this.ctx;
    const m = ctx.s.markets.get(instrument);
    if (!m) return fail(404, 'INSTRUMENT_NOT_FOUND', `Unknown instrument ${instrument}`);
    if (!Number.isSafeInteger(intervalMs) || intervalMs <= 0 || intervalMs > MAX_FUNDING_INTERVAL_MS) {
      return fail(400, 'INVALID_INTERVAL', `intervalMs must be an integer from 1 to ${MAX_FUNDING_INTERVAL_MS}`);
    }
    const rate = fundingRate(m.premiumSum, m.premiumSamples, intervalMs);
    m.premiumSum = 0n;
    m.premiumSamples = 0;
    m.fundingRate = rate;
    m.fundingRateAt = ctx.nextTime(m.fundingRateAt);
    ctx.touchMarket(m);
    ctx.events.push({ type: 'fundingRate', instrument, rate, createdAt: m.fundingRateAt });
    const mark = m.valuationPrice;
    if (mark === null) return { ok: true };
    const holders: Array<{ acc: Account; pos: Position }> = [];
    for (const acc of m.holders) holders.push({ acc, pos: acc.positions.get(instrument)! });
    holders.sort((a, b) => a.acc.userId - b.acc.userId);
    const { payments, residue } = fundingPayments(holders, mark, rate);
    for (const p of payments) {
      p.acc.balance += p.amount;
      p.pos.fundingPaid += p.amount;
      ctx.touchPosition(p.acc, p.pos);
      ctx.fundingChange(p.acc, p.amount, 'funding');
      ctx.riskCandidates.add(p.acc);
    }
    ctx.s.totals.reserveFund += residue;
    return { ok: true };
  }
}
