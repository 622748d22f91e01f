/**
 * One user's aggregates for public profiles and yield accrual: trading summary from position lifetimes
 * and the collateral balance at the end of each UTC day (the balance chart's query, user-charts.ts).
 */
import type { Kysely } from 'kysely';
import type { Money } from '../domain/fixed.js';
import { toMoney } from './codec.js';
import type { StoreDatabase } from './schema.js';
import type { StoreStatistics } from './user-charts.js';
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
  constructor(
    private readonly db: Kysely<StoreDatabase>,
    private readonly charts: Pick<StoreStatistics, 'balanceChart'>,
  ) {}

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
    // The same end-of-period balance the balance chart route serves, by day.
    const points = await this.charts.balanceChart(userId, { after: fromDay * DAY_MS, before: (toDay + 1) * DAY_MS, group: 'day' });
    return points.map((p) => ({ day: Math.floor(p.start / DAY_MS), balance: p.balance }));
  }
}

