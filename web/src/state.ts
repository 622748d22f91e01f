/**
 * The terminal's state: public market data (REST snapshot, then live from the channels) and, once signed in,
 * the account (REST snapshots refreshed whenever a private channel says something changed). One store, read
 * by components through useStore.
 */
import { useSyncExternalStore } from 'react';
import { api, call } from './lib/api.js';
import { rulesOf, type WireInstrument } from './lib/estimate.js';
import { Realtime, type ConnectionStatus } from './lib/realtime.js';
import { Session } from './lib/session.js';
import type { TypedDataSigner } from './lib/signing.js';
import type { InstrumentRules } from '../../src/engine/instrument-rules.js';

export type Any = Record<string, any>;
export interface Toast { id: number; kind: 'error' | 'ok'; text: string }

export interface State {
  config: { chainId: string; channelEnv: string; websocketPath: string; fundingIntervalMs: number } | null;
  instruments: Any[];
  fees: { maker: string; taker: string; liquidation: string } | null;
  rules: Map<string, InstrumentRules>;
  selected: string;
  book: { asks: Array<{ price: number; quantity: number }>; bids: Array<{ price: number; quantity: number }>; t: number } | null;
  grouping: string;
  trades: Any[];
  status: ConnectionStatus;
  session: Session | null;
  address: string | null;
  balance: Any | null;
  positions: Any[];
  openOrders: Any[];
  toasts: Toast[];
  /** Bumped on every private change; panels that show history reload on it. */
  accountVersion: number;
  /** Index price per base coin symbol (GET /api/coin, then the coin-price channel). */
  indexPrices: Record<string, number>;
}

type Listener = () => void;

class Store {
  state: State = {
    config: null, instruments: [], fees: null, rules: new Map(), selected: localStorage.getItem('perpx.instrument') ?? 'BTCUSDT',
    book: null, grouping: '0.1', trades: [], status: 'connecting', session: null, address: null, balance: null, positions: [],
    openOrders: [], toasts: [], accountVersion: 0, indexPrices: {},
  };
  rt: Realtime | null = null;
  private listeners = new Set<Listener>();
  private marketSubs: Array<() => void> = [];
  private privateSubs: Array<() => void> = [];
  private tradeListeners = new Set<(t: Any) => void>();
  private reloadTimer: ReturnType<typeof setTimeout> | null = null;
  private toastId = 0;

  subscribe = (l: Listener) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };
  get = () => this.state;
  set(p: Partial<State>): void {
    this.state = { ...this.state, ...p };
    for (const l of this.listeners) l();
  }

  toast(kind: Toast['kind'], text: string): void {
    const id = ++this.toastId;
    this.set({ toasts: [...this.state.toasts, { id, kind, text }].slice(-4) });
    setTimeout(() => this.set({ toasts: this.state.toasts.filter((t) => t.id !== id) }), kind === 'error' ? 8000 : 4000);
  }

  async start(): Promise<void> {
    const config = await call(() => api.GET('/api/config'));
    const market = await call(() => api.GET('/api/market')) as Any;
    this.set({ config, fees: market.fees });
    await this.loadInstruments();
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    this.rt = new Realtime(`${proto}//${location.host}${config.websocketPath}`, config.channelEnv);
    this.rt.onStatus((status) => this.set({ status }));
    this.rt.onReconnect(() => {
      void this.loadInstruments();
      void this.loadMarket();
      this.scheduleAccountReload();
    });
    this.rt.subscribe('instruments', (d) => this.applyInstrument(d as Any));
    const coins = await call(() => api.GET('/api/coin')) as Any;
    this.set({ indexPrices: Object.fromEntries((coins.list as Any[]).map((c) => [c.symbol, c.price])) });
    this.rt.subscribe('coin-price', (d) => {
      const c = d as Any;
      this.set({ indexPrices: { ...this.state.indexPrices, [c.symbol]: c.price } });
    });
    this.rt.subscribe('funding-rate', (d) => {
      const f = d as Any;
      this.set({ instruments: this.state.instruments.map((i) => (i.id === f.instrument ? { ...i, fundingRate: Number(f.fundingRate), fundingRateCreatedAt: f.createdAt } : i)) });
    });
    this.selectInstrument(this.state.selected);
    setInterval(() => void this.loadInstruments().catch(() => undefined), 15_000);
  }

  async loadInstruments(): Promise<void> {
    const list = await call(() => api.GET('/api/market/instrument', { params: { query: { fields: 'metrics' } } })) as Any[];
    const rules = new Map<string, InstrumentRules>();
    if (this.state.fees) for (const i of list) rules.set(i.id, rulesOf(i as WireInstrument, this.state.fees));
    const selected = list.some((i) => i.id === this.state.selected) ? this.state.selected : list[0]?.id ?? '';
    this.set({ instruments: list, rules, selected });
  }

  private applyInstrument(d: Any): void {
    this.set({ instruments: this.state.instruments.map((i) => (i.id === d.id ? { ...i, ...d } : i)) });
  }

  instrument(): Any | undefined {
    return this.state.instruments.find((i) => i.id === this.state.selected);
  }

  onTrade(f: (t: Any) => void): () => void {
    this.tradeListeners.add(f);
    return () => this.tradeListeners.delete(f);
  }

  selectInstrument(id: string): void {
    localStorage.setItem('perpx.instrument', id);
    this.set({ selected: id, book: null, trades: [] });
    for (const u of this.marketSubs) u();
    this.marketSubs = [];
    if (!this.rt) return;
    this.subscribeBook();
    this.marketSubs.push(this.rt.subscribe(`trade-${id}`, (d) => {
      const t = d as Any;
      this.set({ trades: [t, ...this.state.trades].slice(0, 60) });
      for (const f of this.tradeListeners) f(t);
    }));
    void this.loadMarket();
  }

  private bookUnsub: (() => void) | null = null;
  private subscribeBook(): void {
    this.bookUnsub?.();
    const id = this.state.selected;
    this.bookUnsub = this.rt!.subscribe(`orderBook-${id}-${this.state.grouping}`, (d) => {
      const b = (d as Any).orderBook;
      if (!this.state.book || b.t >= this.state.book.t) this.set({ book: b });
    });
  }

  setGrouping(g: string): void {
    this.set({ grouping: g, book: null });
    this.subscribeBook();
    void this.loadMarket();
  }

  async loadMarket(): Promise<void> {
    const instrument = this.state.selected;
    const [book, trades] = await Promise.all([
      call(() => api.GET('/api/market/{instrument}/deep', { params: { path: { instrument }, query: { maxLevel: 50, roundPrice: this.state.grouping as '0.1' } } })),
      call(() => api.GET('/api/market/{instrument}/recent-trades', { params: { path: { instrument }, query: { limit: 60 } } })),
    ]);
    if (instrument !== this.state.selected) return;
    const b = book as Any;
    if (!this.state.book || b.t >= this.state.book.t) this.set({ book: b as State['book'] });
    this.set({ trades: trades as Any[] });
  }

  // ---------------------------------------------------------------------------------------------- account

  async signIn(signer: TypedDataSigner, resumeOnly = false): Promise<boolean> {
    const session = new Session(signer, this.state.config!.chainId);
    session.onExpired = () => {
      this.toast('error', 'Your session ended: sign in again.');
      this.signOut(false);
    };
    const resumed = await session.resume().catch(() => false);
    if (!resumed) {
      if (resumeOnly) return false;
      await session.signIn();
    }
    this.set({ session, address: signer.address });
    this.subscribePrivate(session);
    await this.loadAccount();
    return true;
  }

  signOut(remote = true): void {
    for (const u of this.privateSubs) u();
    this.privateSubs = [];
    if (remote) void this.state.session?.signOut();
    this.set({ session: null, address: null, balance: null, positions: [], openOrders: [] });
  }

  private subscribePrivate(session: Session): void {
    const id = session.user!.exchangeId;
    const token = () => session.token();
    for (const name of ['order', 'position', 'funding', 'transfer-update', 'orderFills', 'tpsl', 'user']) {
      this.privateSubs.push(this.rt!.subscribe(`${name}-${id}`, () => this.scheduleAccountReload(), token));
    }
  }

  scheduleAccountReload(): void {
    if (!this.state.session || this.reloadTimer) return;
    this.reloadTimer = setTimeout(() => {
      this.reloadTimer = null;
      void this.loadAccount().catch(() => undefined);
    }, 120);
  }

  async loadAccount(): Promise<void> {
    if (!this.state.session) return;
    const [balance, positions, openOrders] = await Promise.all([
      call((headers) => api.GET('/api/market/available-balance', { headers })),
      call((headers) => api.GET('/api/position', { headers, params: { query: { withTpSL: 'yes' } } })),
      call((headers) => api.GET('/api/order/opened', { headers })),
    ]);
    this.set({
      balance: balance as Any, positions: ((positions as Any).list as Any[]).filter((p) => Number(p.quantity) !== 0),
      openOrders: openOrders as Any[], accountVersion: this.state.accountVersion + 1,
    });
  }
}

export const store = new Store();

export function useStore<T>(pick: (s: State) => T): T {
  return useSyncExternalStore(store.subscribe, () => pick(store.get()));
}
