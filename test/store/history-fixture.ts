/**
 * Seeded generator of engine event batches (orders with lifecycles, fills, trades, fees, collateral
 * movements, transfers, TP/SL) plus the straightforward in-memory state the read store must agree with.
 * Timestamps advance by 0–2 ms per batch so equal sort keys (and their tiebreaks) are common.
 */
import type {
  EngineEvent, FillView, FundingChangeView, OrderView, TpSlView, TradeView, TransferView,
} from '../../src/engine/records.js';
import type { OrderGroup, OrderStatus, OrderType, Side, TimeInForce } from '../../src/domain/enums.js';
import type { ProjectionBatch } from '../../src/store/projector.js';
import { mulberry32 } from '../../src/simulation/seeded-random.js';


export const USERS = [1, 2, 3];
export const INSTRUMENTS = ['BTCUSDT', 'ETHUSDT', 'SOLUSDT'];
const GROUPS: OrderGroup[] = ['manually', 'manually', 'manually', 'tpsl', 'take-profit', 'stop-loss', 'liquidation', 'adl'];
export const T0 = Date.UTC(2025, 9, 1);

export interface Reference {
  orders: Map<string, OrderView>;
  fills: Array<FillView & { seq: number; ev: number }>;
  trades: Array<TradeView & { seq: number; ev: number }>;
  funding: Array<FundingChangeView & { seq: number; ev: number }>;
  transfers: Map<string, TransferView>;
  tpsl: Map<string, TpSlView>;
}

export interface History {
  batches: ProjectionBatch[];
  ref: Reference;
}

/** `stepMs`: largest gap between consecutive commands (default 2 ms; larger spreads the history over hours or days). */
export function generateHistory(opts: { seed: number; orders: number; startSeq?: number; users?: number[]; stepMs?: number }): History {
  const r = mulberry32(opts.seed);
  const users = opts.users ?? USERS;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const hex = (n: number) => Array.from({ length: n }, () => '0123456789abcdefABCDEF'[Math.floor(r() * 22)]).join('');
  const batches: ProjectionBatch[] = [];
  const ref: Reference = { orders: new Map(), fills: [], trades: [], funding: [], transfers: new Map(), tpsl: new Map() };
  const live: OrderView[] = [];
  const balances = new Map<number, bigint>();
  let seq = opts.startSeq ?? 1;
  let t = T0;
  let created = 0;
  let exec = 0;

  const emit = (events: EngineEvent[]) => {
    batches.push({ seq, ts: t, events });
    events.forEach((e, ev) => {
      if (e.type === 'order') ref.orders.set(`${e.order.userId}|${e.order.id}`, e.order);
      else if (e.type === 'fill') ref.fills.push({ ...e.fill, seq, ev });
      else if (e.type === 'trade') ref.trades.push({ ...e.trade, seq, ev });
      else if (e.type === 'funding') ref.funding.push({ ...e.funding, seq, ev });
      else if (e.type === 'transfer') ref.transfers.set(e.transfer.id, e.transfer);
      else if (e.type === 'tpsl') ref.tpsl.set(`${e.tpsl.userId}|${e.tpsl.id}`, e.tpsl);
    });
    seq++;
  };
  const funding = (userId: number, delta: bigint, reason: FundingChangeView['reason']): EngineEvent => {
    const balance = (balances.get(userId) ?? 0n) + delta;
    balances.set(userId, balance);
    return { type: 'funding', funding: { userId, coin: 'usdt', quantity: delta, balance, reason, updatedAt: t } };
  };

  while (created < opts.orders || live.length > 0) {
    t += Math.floor(r() * ((opts.stepMs ?? 2) + 1));
    const roll = r();
    if (created < opts.orders && (roll < 0.55 || live.length === 0)) {
      created++;
      const userId = pick(users);
      const type: OrderType = pick(['LIMIT', 'LIMIT', 'LIMIT', 'MARKET', 'STOP_LIMIT', 'STOP']);
      const isStop = type === 'STOP' || type === 'STOP_LIMIT';
      const quantity = (1 + Math.floor(r() * 100)) * 1_000_000;
      const rejected = r() < 0.05;
      const o: OrderView = {
        id: `${String(70 + Math.floor(r() * 3)).padStart(5, '0')}:${hex(26)}`,
        userId,
        instrument: pick(INSTRUMENTS),
        type,
        side: pick<Side>(['BUY', 'SELL']),
        status: rejected ? 'REJECTED' : 'NEW',
        rejectedReason: rejected ? 'Insufficient available balance' : '',
        timeInForce: pick<TimeInForce>(['GTC', 'GTC', 'IOC', 'DAY']),
        postOnly: r() < 0.2,
        leverage: 1 + Math.floor(r() * 50),
        quantity,
        limitPrice: (90_000 + Math.floor(r() * 20_000)) * 100_000_000,
        stopPrice: isStop ? (95_000 + Math.floor(r() * 10_000)) * 100_000_000 : null,
        group: pick(GROUPS),
        unFilledQuantity: quantity,
        cashQuantity: type === 'MARKET' ? 50 * 100_000_000 : 0,
        filledQuantity: 0,
        filledValue: 0n,
        realizedPnL: 0n,
        fee: 0n,
        triggeredAt: null,
        createdAt: t,
        updatedAt: t,
      };
      const events: EngineEvent[] = [{ type: 'order', order: o }];
      if (!rejected) {
        live.push(o);
        if (r() < 0.15) {
          const tp: TpSlView = {
            id: `tpsl-${seq}`, userId, instrument: o.instrument, type: pick(['take-profit', 'stop-loss'] as const),
            side: o.side === 'BUY' ? 'SELL' : 'BUY', quantity: 0, price: o.limitPrice + 1000, status: 'waitOrder',
            orderId: o.id, triggerOrder: null, triggeredQuantity: 0, cancelledReason: '', createdAt: t, updatedAt: t,
          };
          events.push({ type: 'tpsl', tpsl: tp });
        }
      }
      emit(events);
    } else if (roll < 0.57) {
      const userId = pick(users);
      const id = `tr-${seq}`;
      const type = pick(['deposit', 'withdraw'] as const);
      const tr: TransferView = {
        id, userId, type, coin: 'usdt', amount: BigInt(1 + Math.floor(r() * 1e6)) * 1_000_000_000n, fee: 0n,
        status: type === 'deposit' ? 'done' : 'pending', createdAt: t, updatedAt: t,
      };
      emit([{ type: 'transfer', transfer: tr }, funding(userId, type === 'deposit' ? tr.amount : -tr.amount, type)]);
    } else if (live.length > 0) {
      const i = Math.floor(r() * live.length);
      const prev = live[i]!;
      const o: OrderView = { ...prev, updatedAt: t };
      const events: EngineEvent[] = [];
      const isStop = o.type === 'STOP' || o.type === 'STOP_LIMIT';
      const act = r();
      if (isStop && o.triggeredAt === null && act < 0.5) {
        o.triggeredAt = t;
      } else if (act < 0.75) {
        const q = Math.min(o.unFilledQuantity, (1 + Math.floor(r() * 60)) * 1_000_000);
        const price = o.limitPrice;
        const fee = BigInt(q) / 100n;
        o.unFilledQuantity -= q;
        o.filledQuantity += q;
        o.filledValue += (BigInt(q) * BigInt(price)) / 100_000_000n;
        o.fee += fee;
        o.status = o.unFilledQuantity === 0 ? 'FILLED' : 'PARTIALLY_FILLED';
        const executionId = `ex-${++exec}`;
        events.push({ type: 'fill', fill: {
          executionId, userId: o.userId, orderId: o.id, instrument: o.instrument, side: o.side,
          role: pick(['MAKER', 'TAKER'] as const), quantity: q, price, fee, realizedPnL: 0n, createdAt: t,
        } });
        events.push({ type: 'trade', trade: { executionId, instrument: o.instrument, side: o.side, quantity: q, price, createdAt: t } });
        events.push({ type: 'orderFee', fee: {
          id: `fee-${exec}`, userId: o.userId, orderId: o.id, executionId, coin: 'usdt', quantity: fee, type: 'order', createdAt: t,
        } });
        events.push(funding(o.userId, -fee, 'fee'));
      } else {
        o.status = pick<OrderStatus>(['CANCELLED', 'CANCELLED', 'EXPIRED', 'REPLACED', 'ERROR']);
      }
      events.unshift({ type: 'order', order: o });
      if (o.status === 'FILLED' || o.status === 'CANCELLED' || o.status === 'EXPIRED' || o.status === 'REPLACED' || o.status === 'ERROR') {
        live.splice(i, 1);
        for (const tp of ref.tpsl.values()) {
          if (tp.orderId === o.id && tp.userId === o.userId && tp.status === 'waitOrder') {
            const next: TpSlView = o.status === 'FILLED'
              ? { ...tp, status: 'active', updatedAt: t }
              : { ...tp, status: 'cancelled', cancelledReason: 'order cancelled', updatedAt: t };
            if (next.status === 'active' && r() < 0.5) Object.assign(next, { status: 'triggered', triggerOrder: `00071:${hex(26)}`, triggeredQuantity: o.quantity });
            events.push({ type: 'tpsl', tpsl: next });
          }
        }
      } else {
        live[i] = o;
      }
      emit(events);
    }
    // Now and then a pending withdrawal settles.
    if (r() < 0.01) {
      const pending = [...ref.transfers.values()].find((x) => x.status === 'pending');
      if (pending) emit([{ type: 'transfer', transfer: { ...pending, status: pick(['done', 'error'] as const), updatedAt: t } }]);
    }
  }
  return { batches, ref };
}
