/**
 * Wallets the terminal signs with: a built-in local wallet (a key kept in this browser's localStorage, for the
 * demo and for tests) or an injected EIP-1193 wallet (window.ethereum) through ethers' BrowserProvider.
 */
import { BrowserProvider, Wallet, type Eip1193Provider } from 'ethers';
import type { TypedDataSigner } from './signing.js';

const LOCAL_KEY = 'perpx.localWalletKey';

declare global {
  interface Window { ethereum?: Eip1193Provider }
}

export function storedLocalKey(): string | null {
  return localStorage.getItem(LOCAL_KEY);
}

export function forgetLocalKey(): void {
  localStorage.removeItem(LOCAL_KEY);
}

/** The local wallet: the stored key, or `importKey`, or a fresh random one (then stored). */
export function localWallet(importKey?: string): TypedDataSigner {
  let key = importKey?.trim() || storedLocalKey();
  const w = key ? new Wallet(key.startsWith('0x') ? key : `0x${key}`) : Wallet.createRandom();
  key = w.privateKey;
  localStorage.setItem(LOCAL_KEY, key);
  return {
    address: w.address,
    signTypedData: (d, t, v) => w.signTypedData(d, t, v),
    signMessage: (m) => w.signMessage(m),
  };
}

export const hasInjectedWallet = (): boolean => typeof window !== 'undefined' && window.ethereum !== undefined;

/** Asks the injected wallet for an account (eth_requestAccounts) and signs through it. */
export async function injectedWallet(): Promise<TypedDataSigner> {
  if (!window.ethereum) throw new Error('No browser wallet found (window.ethereum)');
  const provider = new BrowserProvider(window.ethereum);
  const signer = await provider.getSigner();
  return {
    address: await signer.getAddress(),
    signTypedData: (d, t, v) => signer.signTypedData(d, t, v),
    signMessage: (m) => signer.signMessage(m),
  };
}
