/** Instrument configuration and trading states, and the matcher's state (halts every instrument). */
import type { TradingState } from '../domain/enums.js';
import type { InstrumentConfig } from '../domain/instrument.js';
import type { CommandContext } from './command-context.js';
import { compileInstrument, type InstrumentRules } from './instrument-rules.js';
import { Market } from './market.js';
import { fail, type Draft } from './refusal.js';

export class Instruments {
  constructor(private readonly ctx: CommandContext) {}

  upsertInstrument(config: InstrumentConfig): Draft {
    let rules: InstrumentRules;
    try {
      if (!config || typeof config.id !== 'string' || !/^[A-Z0-9_-]{2,32}$/.test(config.id)) throw new Error('invalid instrument id');
      rules = compileInstrument(config);
      if (rules.priceIncrement <= 0 || rules.quantityIncrement <= 0) throw new Error('increments must be positive');
      if (!Number.isInteger(rules.maxLeverage) || rules.maxLeverage < 1 || rules.maxLeverage > 300) throw new Error('maxLeverage must be 1..300');
      if (rules.minQuantity <= 0 || rules.maxQuantity < rules.minQuantity) throw new Error('quantity bounds');
      if (rules.minPrice <= 0 || rules.maxPrice < rules.minPrice) throw new Error('price bounds');
    } catch (e) {
      return fail(400, 'INVALID_INSTRUMENT', `Invalid instrument configuration: ${(e as Error).message}`);
    }
    const existing = this.ctx.s.markets.get(config.id);
    if (existing) {
      existing.rules = rules;
      existing.trading = config.trading;
      this.ctx.touchMarket(existing);
    } else {
      const m = new Market(rules, this.ctx.ts);
      this.ctx.s.markets.set(config.id, m);
      this.ctx.listTouchedMarket(m);
    }
    return { ok: true };
  }

  setTrading(instrument: string, trading: TradingState): Draft {
    const m = this.ctx.s.markets.get(instrument);
    if (!m) return fail(404, 'INSTRUMENT_NOT_FOUND', `Unknown instrument ${instrument}`);
    if (!['all', 'restricted', 'none', 'onlyClose'].includes(trading)) return fail(400, 'INVALID_TRADING_STATE', `Invalid trading state ${trading}`);
    m.trading = trading;
    m.rules = { ...m.rules, config: { ...m.rules.config, trading } };
    this.ctx.touchMarket(m);
    return { ok: true };
  }

  setMatcher(state: string): Draft {
    const s = this.ctx.s;
    if (typeof state !== 'string' || state.length === 0 || state.length > 64) return fail(400, 'INVALID_MATCHER_STATE', 'Invalid matcher state');
    s.matcher = { state, updatedAt: this.ctx.nextTime(s.matcher.updatedAt) };
    this.ctx.events.push({ type: 'matcher', matcher: { ...s.matcher } });
    return { ok: true };
  }
}
