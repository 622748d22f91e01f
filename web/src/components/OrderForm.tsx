import { useMemo, useState } from 'react';
import { store, useStore } from '../state.js';
import { api, call, errorText } from '../lib/api.js';
import { bookView } from '../lib/book.js';
import { decimalsOf, fmt, formatUnits, toUnits, wireUnits } from '../lib/decimal.js';
import { estimateOrder, type Estimate } from '../lib/estimate.js';
import { limitBody, marketBody, stopLimitBody, type Side, type TpSlInput } from '../lib/signing.js';

type Kind = 'limit' | 'market' | 'stop-limit';

export function OrderForm() {
  const s = useStore((st) => st);
  const inst = s.instruments.find((i) => i.id === s.selected);
  const [kind, setKind] = useState<Kind>('limit');
  const [side, setSide] = useState<Side>('BUY');
  const [price, setPrice] = useState('');
  const [stop, setStop] = useState('');
  const [qty, setQty] = useState('');
  const [cash, setCash] = useState('');
  const [leverage, setLeverage] = useState(10);
  const [postOnly, setPostOnly] = useState(false);
  const [tif, setTif] = useState('GTC');
  const [withTpSl, setWithTpSl] = useState(false);
  const [tp, setTp] = useState('');
  const [sl, setSl] = useState('');
  const [busy, setBusy] = useState(false);
  const maxLev = inst?.maxLeverage ?? 100;
  const dp = inst ? decimalsOf(String(inst.priceIncrement)) : 2;
  const view = bookView(s.book?.asks ?? [], s.book?.bids ?? [], 1);
  const bestAsk = view.asks[0]?.price, bestBid = view.bids[0]?.price;

  const est: Estimate | null = useMemo(() => {
    if (!inst || !s.fees || !s.rules.has(inst.id)) return null;
    const p = kind === 'market' ? (side === 'BUY' ? bestAsk : bestBid) ?? wireUnits(inst.markPrice) : toUnits(price);
    const q = kind === 'market' ? (p && toUnits(cash) ? (toUnits(cash)! * 100_000_000n) / p : null) : toUnits(qty);
    if (!p || !q || q <= 0n) return null;
    const crosses = kind === 'market' || (kind === 'limit' && ((side === 'BUY' && bestAsk !== undefined && p >= bestAsk) || (side === 'SELL' && bestBid !== undefined && p <= bestBid)));
    const marks = Object.fromEntries(s.instruments.map((i) => [i.id, i.markPrice]));
    try {
      return estimateOrder(inst.id, s.rules, {
        balance: s.balance?.funding?.balance ?? 0,
        positions: s.positions.map((x) => ({ instrument: x.instrument, side: x.side, quantity: x.quantity, avgPrice: x.avgPrice, leverage: x.leverage })),
        openOrders: s.openOrders.map((o) => ({ instrument: o.instrument, side: o.side, unFilledQuantity: o.unFilledQuantity, limitPrice: o.limitPrice })),
        marks,
      }, { side, quantity: formatUnits(q), price: formatUnits(p), leverage, taker: crosses });
    } catch {
      return null;
    }
  }, [inst, s.fees, s.rules, s.balance, s.positions, s.openOrders, s.instruments, kind, side, price, qty, cash, leverage, bestAsk, bestBid]);

  if (!inst) return null;
  const signedIn = !!s.session;

  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    if (!s.session || !s.config) return;
    setBusy(true);
    try {
      const signer = s.session.signer;
      const chainId = s.config.chainId;
      const closeSide: Side = side === 'BUY' ? 'SELL' : 'BUY';
      const tpsl: TpSlInput[] = withTpSl ? [
        ...(tp ? [{ type: 'take-profit' as const, side: closeSide, quantity: '0', price: tp }] : []),
        ...(sl ? [{ type: 'stop-loss' as const, side: closeSide, quantity: '0', price: sl }] : []),
      ] : [];
      let order: Record<string, any>;
      if (kind === 'limit') {
        const body = await limitBody(signer, chainId, { instrument: inst.id, side, leverage, quantity: qty, limitPrice: price, timeInForce: tif, postOnly, tpsl });
        order = await call((headers) => api.POST('/api/v2/order/limit', { headers, body: body as never })) as Record<string, any>;
      } else if (kind === 'market') {
        const body = await marketBody(signer, chainId, { instrument: inst.id, side, leverage, cashQuantity: cash, timeInForce: 'IOC', tpsl });
        order = await call((headers) => api.POST('/api/v2/order/market', { headers, body: body as never })) as Record<string, any>;
      } else {
        const body = await stopLimitBody(signer, chainId, { instrument: inst.id, side, leverage, quantity: qty, limitPrice: price, stopPrice: stop, tpsl });
        order = await call((headers) => api.POST('/api/v2/order/stop-limit', { headers, body: body as never })) as Record<string, any>;
      }
      if (order.status === 'REJECTED') store.toast('error', `Order rejected: ${order.rejectedReason}`);
      else store.toast('ok', `${side === 'BUY' ? 'Buy' : 'Sell'} ${kind} order ${order.status === 'FILLED' ? 'filled' : 'placed'}`);
      await store.loadAccount();
    } catch (err) {
      store.toast('error', `Order failed: ${errorText(err)}`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="order-form" onSubmit={submit} aria-label="Order entry" data-testid="order-form">
      <div className="tabs" role="tablist">
        {(['limit', 'market', 'stop-limit'] as Kind[]).map((k) => (
          <button type="button" role="tab" aria-selected={kind === k} key={k} className={kind === k ? 'active' : ''} onClick={() => setKind(k)}>
            {k === 'limit' ? 'Limit' : k === 'market' ? 'Market' : 'Stop-limit'}
          </button>
        ))}
      </div>
      <div className="sides">
        <button type="button" className={`buy ${side === 'BUY' ? 'active' : ''}`} onClick={() => setSide('BUY')}>Buy / Long</button>
        <button type="button" className={`sell ${side === 'SELL' ? 'active' : ''}`} onClick={() => setSide('SELL')}>Sell / Short</button>
      </div>
      <label>Leverage <span className="muted">{leverage}× (max {maxLev}×)</span>
        <input aria-label="Leverage" type="range" min={1} max={maxLev} value={leverage} onChange={(e) => setLeverage(Number(e.target.value))} />
      </label>
      {kind === 'stop-limit' && <label>Stop price<input name="stopPrice" inputMode="decimal" value={stop} onChange={(e) => setStop(e.target.value)} placeholder={`Mark ${formatUnits(wireUnits(inst.markPrice))}`} /></label>}
      {kind !== 'market' && (
        <label>Price (USDT)
          <span className="with-btn">
            <input name="price" inputMode="decimal" value={price} onChange={(e) => setPrice(e.target.value)} placeholder="0.0" />
            <button type="button" className="small" onClick={() => setPrice(formatUnits((side === 'BUY' ? bestBid : bestAsk) ?? wireUnits(inst.markPrice)))}>Best</button>
          </span>
        </label>
      )}
      {kind === 'market'
        ? <label>Notional (USDT)<input name="cashQuantity" inputMode="decimal" value={cash} onChange={(e) => setCash(e.target.value)} placeholder="0" /></label>
        : <label>Size ({inst.from?.symbol ?? 'base'})<input name="quantity" inputMode="decimal" value={qty} onChange={(e) => setQty(e.target.value)} placeholder={String(inst.minQuantity)} /></label>}
      {kind === 'limit' && (
        <div className="options">
          <label className="check"><input type="checkbox" checked={postOnly} onChange={(e) => setPostOnly(e.target.checked)} /> Post-only</label>
          <label className="inline">TIF
            <select aria-label="Time in force" value={tif} onChange={(e) => setTif(e.target.value)}>
              {['GTC', 'DAY', 'IOC', 'FOK'].map((t) => <option key={t}>{t}</option>)}
            </select>
          </label>
        </div>
      )}
      <label className="check"><input type="checkbox" checked={withTpSl} onChange={(e) => setWithTpSl(e.target.checked)} /> Take-profit / stop-loss</label>
      {withTpSl && (
        <div className="tpsl-inputs">
          <label>TP price<input name="tp" inputMode="decimal" value={tp} onChange={(e) => setTp(e.target.value)} /></label>
          <label>SL price<input name="sl" inputMode="decimal" value={sl} onChange={(e) => setSl(e.target.value)} /></label>
        </div>
      )}
      <dl className="estimate" data-testid="estimate">
        <div><dt>Notional</dt><dd>{est ? fmt(est.notional, 2) : '—'}</dd></div>
        <div><dt>Margin</dt><dd data-testid="est-margin">{est ? fmt(est.margin, 2) : '—'}</dd></div>
        <div><dt>Fee</dt><dd data-testid="est-fee">{est ? fmt(est.fee, 4) : '—'}</dd></div>
        <div><dt>Cost</dt><dd>{est ? fmt(est.cost, 2) : '—'}</dd></div>
        <div><dt>Liq. price</dt><dd data-testid="est-liq">{est?.liquidationPrice ? fmt(est.liquidationPrice, dp) : est?.positionAfter ? 'none' : '—'}</dd></div>
        <div><dt>Available</dt><dd>{s.balance ? fmt(wireUnits(s.balance.availableBalance), 2) : '—'}</dd></div>
      </dl>
      <button className={`submit ${side === 'BUY' ? 'buy' : 'sell'}`} disabled={!signedIn || busy} data-testid="submit-order">
        {!signedIn ? 'Connect a wallet to trade' : busy ? 'Signing…' : `${side === 'BUY' ? 'Buy' : 'Sell'} ${inst.id}`}
      </button>
    </form>
  );
}
