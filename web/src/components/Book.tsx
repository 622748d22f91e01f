import { store, useStore } from '../state.js';
import { bookView } from '../lib/book.js';
import { decimalsOf, fmt, fmtWire } from '../lib/decimal.js';

const GROUPINGS = ['0.1', '1', '10', '50', '100'];

export function OrderBook() {
  const book = useStore((s) => s.book);
  const grouping = useStore((s) => s.grouping);
  const inst = useStore((s) => s.instruments.find((i) => i.id === s.selected));
  const dp = inst ? Math.min(decimalsOf(String(inst.priceIncrement)), decimalsOf(grouping) || 0) : 1;
  const qdp = inst ? decimalsOf(String(inst.quantityIncrement)) : 4;
  const view = bookView(book?.asks ?? [], book?.bids ?? [], 9);
  const bar = (cum: bigint) => (view.maxCumulative > 0n ? Number((cum * 1000n) / view.maxCumulative) / 10 : 0);
  return (
    <div className="book" data-testid="order-book">
      <div className="panel-title">
        <h2>Order book</h2>
        <select aria-label="Price grouping" value={grouping} onChange={(e) => store.setGrouping(e.target.value)}>
          {GROUPINGS.map((g) => <option key={g} value={g}>{g}</option>)}
        </select>
      </div>
      <div className="book-head"><span>Price</span><span>Size</span><span>Total</span></div>
      <div className="asks">
        {[...view.asks].reverse().map((r) => (
          <div key={String(r.price)} className="row ask" style={{ ['--depth' as string]: `${bar(r.cumulative)}%` }}>
            <span className="down">{fmt(r.price, dp)}</span><span>{fmt(r.quantity, qdp)}</span><span>{fmt(r.cumulative, qdp)}</span>
          </div>
        ))}
      </div>
      <div className="spread" data-testid="spread">
        {view.spread === null ? 'No spread' : <>Spread {fmt(view.spread, dp)} <span className="muted">({view.spreadBps?.toFixed(2)} bps)</span></>}
        <span className="mark">Mark {fmtWire(inst?.markPrice, dp)}</span>
      </div>
      <div className="bids">
        {view.bids.map((r) => (
          <div key={String(r.price)} className="row bid" style={{ ['--depth' as string]: `${bar(r.cumulative)}%` }}>
            <span className="up">{fmt(r.price, dp)}</span><span>{fmt(r.quantity, qdp)}</span><span>{fmt(r.cumulative, qdp)}</span>
          </div>
        ))}
      </div>
    </div>
  );
}

export function RecentTrades() {
  const trades = useStore((s) => s.trades);
  const inst = useStore((s) => s.instruments.find((i) => i.id === s.selected));
  const dp = inst ? decimalsOf(String(inst.priceIncrement)) : 2;
  const qdp = inst ? decimalsOf(String(inst.quantityIncrement)) : 4;
  return (
    <div className="trades" data-testid="recent-trades">
      <div className="panel-title"><h2>Recent trades</h2></div>
      <div className="book-head"><span>Price</span><span>Size</span><span>Time</span></div>
      <div className="trade-rows">
        {trades.slice(0, 40).map((t, k) => (
          <div key={`${t.executionId ?? ''}${t.createdAt}-${k}`} className="row">
            <span className={t.side === 'BUY' ? 'up' : 'down'}>{fmtWire(t.fillPrice, dp)}</span>
            <span>{fmtWire(t.fillQuantity, qdp)}</span>
            <span className="muted">{new Date(typeof t.createdAt === 'number' ? t.createdAt : Date.parse(t.createdAt)).toLocaleTimeString()}</span>
          </div>
        ))}
        {trades.length === 0 && <div className="empty">No trades yet</div>}
      </div>
    </div>
  );
}
