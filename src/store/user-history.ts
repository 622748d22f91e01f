/**
 * One user's aggregates for public profiles and yield accrual: trading summary from position lifetimes
 * and the collateral balance at the end of each UTC day (from the append-only funding changes).
 */
import type { Kysely } from 'kysely';
import type { Money } from '../domain/fixed.js';
import { toMoney, toNum } from './codec.js';
import type { StoreDatabase } from './schema.js';
import { DAY_MS } from './exchange-statistics.js';

export interface UserTradingSummary {
  /** closed position lifetimes */
  positionsClosed: number;
  positionsOpen: number;
  wins: number;
  losses: number;
  realizedPnL: Money;
  fees: Money;
  fundingPaid: Money;
  /** Σ entry + exit value of all lifetimes */
  tradingVolume: Money;
}

export interface DailyBalance {
  day: number;
  balance: Money;
}

export class UserHistory {
  constructor(private readonly db: Kysely<StoreDatabase>) {}

  async tradingSummary(userId: number): Promise<UserTradingSummary> {
    const rows = await this.db.selectFrom('position_history')
      .select(['close_at', 'realized_pnl', 'fee', 'funding_paid', 'entry_value', 'exit_value'])
      .where('user_id', '=', userId)
      .execute();
    const s: UserTradingSummary = { positionsClosed: 0, positionsOpen: 0, wins: 0, losses: 0, realizedPnL: 0n, fees: 0n, fundingPaid: 0n, tradingVolume: 0n };
    for (const r of rows) {
      const pnl = toMoney(r.realized_pnl);
      s.tradingVolume += toMoney(r.entry_value) + toMoney(r.exit_value);
      s.realizedPnL += pnl;
      s.fees += toMoney(r.fee);
      s.fundingPaid += toMoney(r.funding_paid);
      if (r.close_at === null) {
        s.positionsOpen++;
        continue;
      }
      s.positionsClosed++;
      if (pnl > 0n) s.wins++;
      else if (pnl < 0n) s.losses++;
    }
    return s;
  }

  /** Balance at the end of each day in [fromDay, toDay] (carried forward; 0 before the first change). */
  async dailyBalances(userId: number, fromDay: number, toDay: number): Promise<DailyBalance[]> {
    const start = await this.db.selectFrom('funding_changes').select('balance')
      .where('user_id', '=', userId).where('updated_at', '<', fromDay * DAY_MS)
      .orderBy('updated_at', 'desc').orderBy('seq', 'desc').orderBy('ev', 'desc').limit(1)
      .executeTakeFirst();
    const rows = await this.db.selectFrom('funding_changes').select(['balance', 'updated_at'])
      .where('user_id', '=', userId)
      .where('updated_at', '>=', fromDay * DAY_MS).where('updated_at', '<', (toDay + 1) * DAY_MS)
      .orderBy('updated_at').orderBy('seq').orderBy('ev')
      .execute();
    const endOfDay = new Map<number, Money>();
    for (const r of rows) endOfDay.set(Math.floor(toNum(r.updated_at) / DAY_MS), toMoney(r.balance));
    let balance = start ? toMoney(start.balance) : 0n;
    const out: DailyBalance[] = [];
    for (let d = fromDay; d <= toDay; d++) {
      balance = endOfDay.get(d) ?? balance;
      out.push({ day: d, balance });
    }
    return out;
  }
}

