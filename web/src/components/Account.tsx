import { useEffect, useState } from 'react';
import { store, useStore, type Any } from '../state.js';
import { api, call, errorText } from '../lib/api.js';
import { fmt, fmtWire, wireUnits } from '../lib/decimal.js';
import { positionLiquidationPrice } from '../lib/estimate.js';
import { closeBody, replaceBody, tpslBody } from '../lib/signing.js';
import { Funds, History } from './History.js';

type Tab = 'positions' | 'orders' | 'history' | 'fills' | 'funding' | 'transfers' | 'funds';
const TABS: Array<[Tab, string]> = [['positions', 'Positions'], ['orders', 'Open orders'], ['history', 'Order history'], ['fills', 'Fills'], ['funding', 'Funding'], ['transfers', 'Transfers'], ['funds', 'Funds']];

export async function act(what: string, f: () => Promise<unknown>, ok?: string): Promise<boolean> {
  try {
    await f();
    if (ok) store.toast('ok', ok);
    await store.loadAccount();
    return true;
  } catch (e) {
    store.toast('error', `${what}: ${errorText(e)}`);
    return false;
  }
}

export function AccountPanels() {
  const [tab, setTab] = useState<Tab>('positions');
  const session = useStore((s) => s.session);
  const balance = useStore((s) => s.balance);
  const positions = useStore((s) => s.positions);
  const orders = useStore((s) => s.openOrders);
  return (
    <div className="account">
      <div className="balances" data-testid="balances">
        <span>Balance <b>{balance ? fmtWire(balance.funding?.balance, 2) : '—'}</b></span>
        <span>Available <b data-testid="available">{balance ? fmtWire(balance.availableBalance, 2) : '—'}</b></span>
        <span className="muted">USDT</span>
      </div>
      <div className="tabs" role="tablist">
        {TABS.map(([t, label]) => (
          <button key={t} role="tab" aria-selected={tab === t} className={tab === t ? 'active' : ''} onClick={() => setTab(t)}>
            {label}{t === 'positions' && positions.length ? ` (${positions.length})` : ''}{t === 'orders' && orders.length ? ` (${orders.length})` : ''}
          </button>
        ))}
      </div>
      {!session ? <div className="empty">Connect a wallet to see your account.</div>
        : tab === 'positions' ? <Positions />
        : tab === 'orders' ? <OpenOrders />
        : tab === 'funds' ? <Funds />
        : <History kind={tab} />}
    </div>
  );
}

function Positions() {
  const s = useStore((st) => st);
  if (s.positions.length === 0) return <div className="empty">No open positions</div>;
  const marks = Object.fromEntries(s.instruments.map((i) => [i.id, i.markPrice]));
  const account = {
    balance: s.balance?.funding?.balance ?? 0,
    positions: s.positions.map((x) => ({ instrument: x.instrument, side: x.side, quantity: x.quantity, avgPrice: x.avgPrice, leverage: x.leverage })),
    openOrders: [], marks,
  };
  return (
    <div className="table-wrap">
      <table data-testid="positions">
        <thead><tr><th>Market</th><th>Size</th><th>Entry</th><th>Mark</th><th>uPnL (ROE)</th><th>Liq. price</th><th>Margin</th><th>TP / SL</th><th /></tr></thead>
        <tbody>{s.positions.map((p) => {
          const qty = wireUnits(p.quantity), entry = wireUnits(p.avgPrice), mark = wireUnits(marks[p.instrument]);
          const dir = p.side === 'BUY' ? 1n : -1n;
          const upnl = (dir * (mark - entry) * qty) / 100_000_000n;
          const margin = (entry * qty) / 100_000_000n / BigInt(p.leverage || 1);
          const roe = margin > 0n ? Number((upnl * 10_000n) / margin) / 100 : 0;
          let liq: bigint | null = null;
          try { liq = s.rules.size ? positionLiquidationPrice(p.instrument, s.rules, account) : null; } catch { liq = null; }
          return <PositionRow key={p.instrument} p={p} upnl={upnl} roe={roe} liq={liq} margin={margin} mark={mark} />;
        })}</tbody>
      </table>
    </div>
  );
}

function PositionRow({ p, upnl, roe, liq, margin, mark }: { p: Any; upnl: bigint; roe: number; liq: bigint | null; margin: bigint; mark: bigint }) {
  const s = useStore((st) => st);
  const [closeQty, setCloseQty] = useState('');
  const [tp, setTp] = useState('');
  const [sl, setSl] = useState('');
  const closeSide = p.side === 'BUY' ? 'SELL' : 'BUY';
  const tpsl: Any[] = (p.tpslList ?? []).filter((t: Any) => t.status === 'active' || t.status === 'waitOrder');
  const close = (quantity: string) => act('Close', async () => {
    const body = await closeBody(s.session!.signer, s.config!.chainId, { instrument: p.instrument, leverage: p.leverage, quantity });
    const o = await call((headers) => api.POST('/api/v2/position/{instrument}/close', { headers, params: { path: { instrument: p.instrument } }, body: body as never })) as Any;
    if (o.status === 'REJECTED') throw new Error(`rejected: ${o.rejectedReason}`);
  }, 'Close order sent');
  const addTpSl = () => act('TP/SL', async () => {
    for (const [type, price] of [['take-profit', tp], ['stop-loss', sl]] as const) {
      if (!price) continue;
      const body = await tpslBody(s.session!.signer, s.config!.chainId, p.instrument, { type, side: closeSide, quantity: '0', price });
      await call((headers) => api.POST('/api/tpsl/{instrument}', { headers, params: { path: { instrument: p.instrument } }, body: body as never }));
    }
    setTp('');
    setSl('');
  }, 'TP/SL set');
  return (
    <tr data-testid={`position-${p.instrument}`}>
      <td>{p.instrument} <span className={p.side === 'BUY' ? 'up' : 'down'}>{p.side === 'BUY' ? 'Long' : 'Short'} {p.leverage}×</span></td>
      <td>{fmtWire(p.quantity, 4)}</td>
      <td>{fmtWire(p.avgPrice, 2)}</td>
      <td>{fmt(mark, 2)}</td>
      <td className={upnl >= 0n ? 'up' : 'down'} data-testid="upnl">{fmt(upnl, 2)} ({roe.toFixed(2)}%)</td>
      <td>{liq ? fmt(liq, 2) : '—'}</td>
      <td>{fmt(margin, 2)}</td>
      <td>
        {tpsl.map((t) => (
          <span key={t.id} className="tag" data-testid="tpsl-tag">{t.type === 'take-profit' ? 'TP' : 'SL'} {t.price}
            <button className="link" aria-label="Remove" onClick={() => act('TP/SL', () => call((headers) => api.DELETE('/api/tpsl/{instrument}/{id}', { headers, params: { path: { instrument: p.instrument, id: t.id } } })), 'TP/SL removed')}>×</button>
          </span>
        ))}
        <span className="inline-form">
          <input aria-label="Take-profit price" placeholder="TP" value={tp} onChange={(e) => setTp(e.target.value)} />
          <input aria-label="Stop-loss price" placeholder="SL" value={sl} onChange={(e) => setSl(e.target.value)} />
          <button className="small" disabled={!tp && !sl} onClick={addTpSl}>Set</button>
        </span>
      </td>
      <td className="actions">
        <button className="small" onClick={() => close(String(p.quantity))}>Close</button>
        <span className="inline-form">
          <input aria-label="Close size" placeholder="size" value={closeQty} onChange={(e) => setCloseQty(e.target.value)} />
          <button className="small" disabled={!closeQty} onClick={() => void close(closeQty).then((ok) => ok && setCloseQty(''))}>Partial</button>
        </span>
      </td>
    </tr>
  );
}

function OpenOrders() {
  const s = useStore((st) => st);
  const [editing, setEditing] = useState<string | null>(null);
  const [price, setPrice] = useState('');
  const [qty, setQty] = useState('');
  useEffect(() => setEditing(null), [s.openOrders.length]);
  if (s.openOrders.length === 0) return <div className="empty">No open orders</div>;
  const instruments = [...new Set(s.openOrders.map((o) => o.instrument))];
  return (
    <div className="table-wrap">
      <button className="small" onClick={() => act('Cancel all', async () => {
        for (const instrument of instruments) await call((headers) => api.POST('/api/order/mass-cancel', { headers, body: { instrument } as never }));
      }, 'All orders cancelled')}>Cancel all</button>
      <table data-testid="open-orders">
        <thead><tr><th>Market</th><th>Type</th><th>Side</th><th>Price</th><th>Size</th><th>Filled</th><th>Stop</th><th /></tr></thead>
        <tbody>{s.openOrders.map((o) => (
          <tr key={o.id} data-testid="open-order">
            <td>{o.instrument}</td><td>{o.type}</td><td className={o.side === 'BUY' ? 'up' : 'down'}>{o.side}</td>
            {editing === o.id ? <>
              <td><input aria-label="New price" value={price} onChange={(e) => setPrice(e.target.value)} /></td>
              <td><input aria-label="New size" value={qty} onChange={(e) => setQty(e.target.value)} /></td>
            </> : <><td>{fmtWire(o.limitPrice, 2)}</td><td>{fmtWire(o.quantity, 4)}</td></>}
            <td>{fmtWire(Number(o.quantity) - Number(o.unFilledQuantity), 4)}</td>
            <td>{o.stopPrice === null ? '—' : fmtWire(o.stopPrice, 2)}</td>
            <td className="actions">
              {o.type === 'LIMIT' && (editing === o.id
                ? <button className="small" onClick={() => act('Edit', async () => {
                    const body = await replaceBody(s.session!.signer, s.config!.chainId, { orderId: o.id, quantity: qty, limitPrice: price });
                    await call((headers) => api.PUT('/api/order/{orderId}/limit', { headers, params: { path: { orderId: o.id } }, body: body as never }));
                    setEditing(null);
                  }, 'Order changed')}>Save</button>
                : <button className="small" onClick={() => { setEditing(o.id); setPrice(String(o.limitPrice)); setQty(String(o.unFilledQuantity)); }}>Edit</button>)}
              <button className="small" onClick={() => act('Cancel', () => call((headers) => api.DELETE('/api/order/{orderId}', { headers, params: { path: { orderId: o.id } } })), 'Order cancelled')}>Cancel</button>
            </td>
          </tr>
        ))}</tbody>
      </table>
    </div>
  );
}
