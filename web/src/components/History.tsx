import { useEffect, useState } from 'react';
import { store, useStore, type Any } from '../state.js';
import { api, call, errorText } from '../lib/api.js';
import { fmtWire } from '../lib/decimal.js';
import { withdrawBody } from '../lib/signing.js';
import { act } from './Account.js';

const when = (t: string | number) => new Date(typeof t === 'number' ? t : Date.parse(t)).toLocaleString();
const farFuture = () => new Date(Date.now() + 86_400_000).toISOString();

export function History({ kind }: { kind: 'history' | 'fills' | 'funding' | 'transfers' }) {
  const version = useStore((s) => s.accountVersion);
  const [rows, setRows] = useState<Any[] | null>(null);
  useEffect(() => {
    let live = true;
    const load = async (): Promise<Any[]> => {
      if (kind === 'history') return ((await call((headers) => api.GET('/api/order', { headers, params: { query: { limit: 50 } as never } }))) as Any).list;
      if (kind === 'fills') return ((await call((headers) => api.GET('/api/fill', { headers, params: { query: { after: new Date(0).toISOString(), before: farFuture(), limit: 50 } as never } }))) as Any).list;
      if (kind === 'funding') return ((await call((headers) => api.GET('/api/user/funding-transfer', { headers, params: { query: { limit: 50 } as never } }))) as Any).list;
      const t = await call((headers) => api.GET('/api/transfer', { headers, params: { query: { limit: 50 } as never } })) as Any;
      return Array.isArray(t) ? t : t.list;
    };
    load().then((r) => live && setRows(r)).catch((e) => store.toast('error', errorText(e)));
    return () => { live = false; };
  }, [kind, version]);
  if (!rows) return <div className="empty">Loading…</div>;
  if (rows.length === 0) return <div className="empty">Nothing yet</div>;
  return (
    <div className="table-wrap">
      <table data-testid={`history-${kind}`}>
        {kind === 'history' && <>
          <thead><tr><th>Time</th><th>Market</th><th>Type</th><th>Side</th><th>Price</th><th>Size</th><th>Avg fill</th><th>Status</th></tr></thead>
          <tbody>{rows.map((o) => <tr key={o.id}><td>{when(o.createdAt)}</td><td>{o.instrument}</td><td>{o.type}{o.group !== 'manually' ? ` (${o.group})` : ''}</td><td className={o.side === 'BUY' ? 'up' : 'down'}>{o.side}</td><td>{o.type === 'MARKET' ? '—' : fmtWire(o.limitPrice, 2)}</td><td>{fmtWire(o.quantity, 4)}</td><td>{fmtWire(o.filledAvgPrice, 2)}</td><td>{o.status}</td></tr>)}</tbody>
        </>}
        {kind === 'fills' && <>
          <thead><tr><th>Time</th><th>Market</th><th>Price</th><th>Size</th><th>Role</th></tr></thead>
          <tbody>{rows.map((f) => <tr key={f.id}><td>{when(f.createdAt)}</td><td>{f.instrument}</td><td>{fmtWire(f.fillPrice, 2)}</td><td>{fmtWire(f.fillQuantity, 4)}</td><td>{f.fillRole}</td></tr>)}</tbody>
        </>}
        {kind === 'funding' && <>
          <thead><tr><th>Time</th><th>Change</th><th>Balance</th><th>Reason</th></tr></thead>
          <tbody>{rows.map((f, k) => <tr key={k}><td>{when(f.updatedAt ?? f.createdAt)}</td><td>{fmtWire(f.quantity, 4)}</td><td>{fmtWire(f.balance, 2)}</td><td>{f.reason ?? f.type ?? ''}</td></tr>)}</tbody>
        </>}
        {kind === 'transfers' && <>
          <thead><tr><th>Time</th><th>Type</th><th>Amount</th><th>Status</th></tr></thead>
          <tbody>{rows.map((t) => <tr key={t.id}><td>{when(t.createdAt)}</td><td>{t.type}</td><td>{fmtWire(t.amount, 2)}</td><td>{t.status}</td></tr>)}</tbody>
        </>}
      </table>
    </div>
  );
}

export function Funds() {
  const s = useStore((st) => st);
  const [to, setTo] = useState('');
  const [amount, setAmount] = useState('');
  return (
    <div className="funds">
      <div>
        <h3>Demo faucet</h3>
        <button className="primary" data-testid="faucet" onClick={() => act('Faucet', () => call((headers) => api.POST('/api/user/faucet', { headers })), 'Demo USDT credited')}>Get demo USDT</button>
      </div>
      <form onSubmit={(e) => {
        e.preventDefault();
        void act('Withdraw', async () => {
          const body = await withdrawBody(s.session!.signer, s.config!.chainId, to || s.address!, amount);
          await call((headers) => api.POST('/api/transfer/pf/withdraw', { headers, body: body as never }));
          setAmount('');
        }, 'Withdrawal requested');
      }}>
        <h3>Withdraw (signed)</h3>
        <label>Recipient<input aria-label="Recipient" placeholder={s.address ?? '0x…'} value={to} onChange={(e) => setTo(e.target.value)} /></label>
        <label>Amount (USDT)<input aria-label="Withdraw amount" inputMode="decimal" value={amount} onChange={(e) => setAmount(e.target.value)} /></label>
        <button disabled={!amount}>Withdraw</button>
      </form>
    </div>
  );
}
