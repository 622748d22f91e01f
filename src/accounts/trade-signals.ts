/**
 * Trade signals: a user publishes an idea (instrument, side, entry and exit levels); its author lists
 * their own, anyone may read one by id. Prices are fixed-point Units like everywhere else. Adapters: SQLite here
 * (auth.db), PostgreSQL in pg-trade-signals.ts (AUTH_STORE=postgres).
 */
import type { Database, Statement } from 'better-sqlite3';
import type { Units } from '../domain/fixed.js';

export interface TradeSignal {
  id: string;
  /** author's user id (uuid) */
  userId: string;
  instrument: string;
  side: 'BUY' | 'SELL';
  entryPrice: Units;
  takeProfit: Units | null;
  stopLoss: Units | null;
  leverage: number;
  comment: string;
  createdAt: number;
}

/** A stored row (PostgreSQL hands back int8 as strings). */
export interface SignalRow {
  id: string;
  user_id: string;
  instrument: string;
  side: 'BUY' | 'SELL';
  entry_price: number | string;
  take_profit: number | string | null;
  stop_loss: number | string | null;
  leverage: number;
  comment: string;
  created_at: number | string;
}

export const TRADE_SIGNAL_SCHEMA = `
CREATE TABLE IF NOT EXISTS acct_trade_signals (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  instrument TEXT NOT NULL,
  side TEXT NOT NULL,
  entry_price INTEGER NOT NULL,
  take_profit INTEGER,
  stop_loss INTEGER,
  leverage INTEGER NOT NULL,
  comment TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS acct_trade_signals_user ON acct_trade_signals(user_id, created_at);
`;

const unitsOrNull = (v: number | string | null): Units | null => (v === null ? null : Number(v));

export const toSignal = (r: SignalRow): TradeSignal => ({
  id: r.id, userId: r.user_id, instrument: r.instrument, side: r.side, entryPrice: Number(r.entry_price), takeProfit: unitsOrNull(r.take_profit),
  stopLoss: unitsOrNull(r.stop_loss), leverage: r.leverage, comment: r.comment, createdAt: Number(r.created_at),
});

export interface TradeSignalStore {
  create(signal: TradeSignal): Promise<TradeSignal>;
  get(id: string): Promise<TradeSignal | undefined>;
  /** The author's signals, newest first. */
  listByUser(userId: string, limit: number, offset: number): Promise<{ list: TradeSignal[]; count: number }>;
}

export class SqliteTradeSignalStore implements TradeSignalStore {
  private readonly st: {
    insert: Statement<[Record<string, unknown>]>;
    byId: Statement<[string], SignalRow>;
    byUser: Statement<[string, number, number], SignalRow>;
    countByUser: Statement<[string], { n: number }>;
  };

  constructor(db: Database) {
    this.st = {
      insert: db.prepare(
        `INSERT INTO acct_trade_signals (id, user_id, instrument, side, entry_price, take_profit, stop_loss, leverage, comment, created_at)
         VALUES (@id, @userId, @instrument, @side, @entryPrice, @takeProfit, @stopLoss, @leverage, @comment, @createdAt)`,
      ),
      byId: db.prepare('SELECT * FROM acct_trade_signals WHERE id = ?'),
      byUser: db.prepare('SELECT * FROM acct_trade_signals WHERE user_id = ? ORDER BY created_at DESC, id LIMIT ? OFFSET ?'),
      countByUser: db.prepare('SELECT COUNT(*) AS n FROM acct_trade_signals WHERE user_id = ?'),
    };
  }

  async create(signal: TradeSignal): Promise<TradeSignal> {
    this.st.insert.run({ ...signal });
    return signal;
  }

  async get(id: string): Promise<TradeSignal | undefined> {
    const r = this.st.byId.get(id);
    return r && toSignal(r);
  }

  async listByUser(userId: string, limit: number, offset: number): Promise<{ list: TradeSignal[]; count: number }> {
    return { list: this.st.byUser.all(userId, limit, offset).map(toSignal), count: this.st.countByUser.get(userId)!.n };
  }
}
