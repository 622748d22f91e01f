import { useEffect, useState } from 'react';
import { store, useStore } from '../state.js';
import { decimalsOf, fmtWire } from '../lib/decimal.js';

function countdown(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const hh = Math.floor(s / 3600), mm = Math.floor((s % 3600) / 60), ss = s % 60;
  return `${String(hh).padStart(2, '0')}:${String(mm).padStart(2, '0')}:${String(ss).padStart(2, '0')}`;
}

export function Header() {
  const instruments = useStore((s) => s.instruments);
  const selected = useStore((s) => s.selected);
  const status = useStore((s) => s.status);
  const interval = useStore((s) => s.config?.fundingIntervalMs ?? 0);
  const indexPrices = useStore((s) => s.indexPrices);
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  const i = instruments.find((x) => x.id === selected);
  // Zero means "none yet" for these fields (no trade so far).
  const nz = (v: unknown) => (v === null || v === undefined || Number(v) === 0 ? null : (v as number));
  const dp = i ? decimalsOf(String(i.priceIncrement)) : 2;
  const last = Number(i?.lastPrice ?? 0);
  const close = Number(i?.closePrice ?? 0);
  const change = close > 0 && last > 0 ? ((last - close) / close) * 100 : null;
  const next = interval > 0 ? Math.ceil((now + 1) / interval) * interval : null;
  return (
    <header className="header">
      <div className="brand">perpx</div>
      <label className="market-select">
        <span className="sr-only">Market</span>
        <select aria-label="Market" value={selected} onChange={(e) => store.selectInstrument(e.target.value)}>
          {instruments.map((x) => <option key={x.id} value={x.id}>{x.displayName ?? x.id}</option>)}
        </select>
      </label>
      <dl className="ticker" data-testid="ticker">
        <div><dt>Last</dt><dd data-testid="last-price">{fmtWire(nz(i?.lastPrice), dp)}</dd></div>
        <div><dt>Mark</dt><dd data-testid="mark-price">{fmtWire(i?.markPrice, dp)}</dd></div>
        <div><dt>Index</dt><dd>{fmtWire(nz(indexPrices[i?.from?.symbol ?? '']), dp)}</dd></div>
        <div><dt>24h change</dt><dd className={change === null ? '' : change >= 0 ? 'up' : 'down'}>{change === null ? '—' : `${change >= 0 ? '+' : ''}${change.toFixed(2)}%`}</dd></div>
        <div><dt>24h high</dt><dd>{fmtWire(nz(i?.high), dp)}</dd></div>
        <div><dt>24h low</dt><dd>{fmtWire(nz(i?.low), dp)}</dd></div>
        <div><dt>24h volume</dt><dd>{fmtWire(i?.volume, 0)}</dd></div>
        <div><dt>Open interest</dt><dd>{fmtWire(i?.openInterest, 4)}</dd></div>
        <div><dt>Funding / next</dt><dd>{i?.fundingRate === undefined ? '—' : `${(Number(i.fundingRate) * 100).toFixed(4)}%`} / {next ? countdown(next - now) : '—'}</dd></div>
      </dl>
      <div className={`status ${status}`} data-testid="connection-status" title="Real-time connection">
        <span className="dot" />{status === 'connected' ? 'Live' : status === 'connecting' ? 'Connecting…' : 'Offline'}
      </div>
    </header>
  );
}
