/** TradeSignalStore on PostgreSQL (AUTH_STORE=postgres): a signal posted through one gateway is read on every other. */
import type pg from 'pg';
import { toSignal, type SignalRow, type TradeSignal, type TradeSignalStore } from './trade-signals.js';

export class PgTradeSignalStore implements TradeSignalStore {
  constructor(private readonly pool: pg.Pool) {}

  async create(signal: TradeSignal): Promise<TradeSignal> {
    const s = signal;
    await this.pool.query(
      `INSERT INTO acct_trade_signals (id, user_id, instrument, side, entry_price, take_profit, stop_loss, leverage, comment, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [s.id, s.userId, s.instrument, s.side, s.entryPrice, s.takeProfit, s.stopLoss, s.leverage, s.comment, s.createdAt],
    );
    return signal;
  }

  async get(id: string): Promise<TradeSignal | undefined> {
    const r = (await this.pool.query<SignalRow>('SELECT * FROM acct_trade_signals WHERE id = $1', [id])).rows[0];
    return r && toSignal(r);
  }

  async listByUser(userId: string, limit: number, offset: number): Promise<{ list: TradeSignal[]; count: number }> {
    const [list, count] = await Promise.all([
      this.pool.query<SignalRow>('SELECT * FROM acct_trade_signals WHERE user_id = $1 ORDER BY created_at DESC, id LIMIT $2 OFFSET $3', [userId, limit, offset]),
      this.pool.query<{ n: string }>('SELECT COUNT(*) AS n FROM acct_trade_signals WHERE user_id = $1', [userId]),
    ]);
    return { list: list.rows.map(toSignal), count: Number(count.rows[0]!.n) };
  }
}
