import { useEffect, useState } from 'react';
import { store, useStore } from './state.js';
import { errorText } from './lib/api.js';
import { Header } from './components/Header.js';
import { Chart } from './components/Chart.js';
import { OrderBook, RecentTrades } from './components/Book.js';
import { OrderForm } from './components/OrderForm.js';
import { AccountPanels } from './components/Account.js';
import { WalletPanel } from './components/Wallet.js';

export function App() {
  const [failed, setFailed] = useState<string | null>(null);
  const [tab, setTab] = useState<'chart' | 'book' | 'trade'>('chart');
  const ready = useStore((s) => s.config !== null && s.instruments.length > 0);
  const toasts = useStore((s) => s.toasts);
  useEffect(() => {
    store.start().catch((e) => setFailed(errorText(e)));
  }, []);
  if (failed) return <div className="fatal" role="alert">The exchange did not answer: {failed} <button onClick={() => location.reload()}>Retry</button></div>;
  if (!ready) return <div className="loading">Loading the terminal…</div>;
  return (
    <div className="app" data-tab={tab}>
      <Header />
      <nav className="mobile-tabs" aria-label="Sections">
        {(['chart', 'book', 'trade'] as const).map((t) => (
          <button key={t} className={tab === t ? 'active' : ''} onClick={() => setTab(t)}>{t === 'chart' ? 'Chart' : t === 'book' ? 'Book & trades' : 'Trade'}</button>
        ))}
      </nav>
      <main className="grid">
        <section className="panel chart-panel"><Chart /></section>
        <section className="panel book-panel"><OrderBook /></section>
        <section className="panel trades-panel"><RecentTrades /></section>
        <section className="panel form-panel"><WalletPanel /><OrderForm /></section>
        <section className="panel account-panel"><AccountPanels /></section>
      </main>
      <div className="toasts" aria-live="polite">
        {toasts.map((t) => <div key={t.id} className={`toast ${t.kind}`} role={t.kind === 'error' ? 'alert' : 'status'}>{t.text}</div>)}
      </div>
    </div>
  );
}
