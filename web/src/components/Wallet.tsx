import { useEffect, useState } from 'react';
import { store, useStore } from '../state.js';
import { errorText } from '../lib/api.js';
import { forgetLocalKey, hasInjectedWallet, injectedWallet, localWallet, storedLocalKey } from '../lib/wallet.js';

export function WalletPanel() {
  const address = useStore((s) => s.address);
  const [busy, setBusy] = useState(false);
  const [importing, setImporting] = useState(false);
  const [key, setKey] = useState('');

  // A stored local key with a live refresh token signs back in silently after a reload.
  useEffect(() => {
    if (storedLocalKey() && !store.get().session) void store.signIn(localWallet(), true).catch(() => undefined);
  }, []);

  const run = async (f: () => Promise<unknown>) => {
    setBusy(true);
    try {
      await f();
    } catch (e) {
      store.toast('error', `Sign-in failed: ${errorText(e)}`);
    } finally {
      setBusy(false);
    }
  };

  if (address) {
    return (
      <div className="wallet signed-in">
        <span className="addr" data-testid="wallet-address" title={address}>{address.slice(0, 6)}…{address.slice(-4)}</span>
        <button className="link" onClick={() => store.signOut()}>Sign out</button>
      </div>
    );
  }
  return (
    <div className="wallet">
      <h2>Connect a wallet</h2>
      {hasInjectedWallet() && (
        <button className="primary" disabled={busy} onClick={() => run(async () => store.signIn(await injectedWallet()))}>Browser wallet</button>
      )}
      <button className="primary" disabled={busy} data-testid="local-wallet" onClick={() => run(async () => store.signIn(localWallet()))}>
        {storedLocalKey() ? 'Local wallet (stored key)' : 'Local demo wallet (new key)'}
      </button>
      <button className="link" onClick={() => setImporting(!importing)}>Import a key…</button>
      {importing && (
        <form onSubmit={(e) => { e.preventDefault(); void run(async () => store.signIn(localWallet(key))); }}>
          <input aria-label="Private key" type="password" autoComplete="off" placeholder="0x… private key" value={key} onChange={(e) => setKey(e.target.value)} />
          <button disabled={busy || key.length < 64}>Import and sign in</button>
        </form>
      )}
      {storedLocalKey() && <button className="link" onClick={() => { forgetLocalKey(); location.reload(); }}>Forget the stored key</button>}
      <p className="warning">The local wallet keeps its private key in this browser's storage, unencrypted. Use it for the demo only, never for real funds.</p>
    </div>
  );
}
