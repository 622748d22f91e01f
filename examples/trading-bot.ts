/**
 * perpx example trading bot — copy this file to start your own.
 *
 *   npm run example                       # against http://127.0.0.1:8080 with the demo wallet of ./data
 *   PERPX_URL=http://host:port PRIVATE_KEY=0x… npm run example
 *
 * What it does, step by step (each step logs what it sees):
 *   1. signs in with a wallet (SIWE / EIP-4361) and gets an access token;
 *   2. makes sure the account has collateral (demo faucet);
 *   3. listens over the real-time websocket (centrifuge client) to the order book and to its own orders
 *      and positions (private channels, authorized with the access token);
 *   4. places a limit order below the market, replaces it (new price and size), cancels it;
 *   5. opens a small position with a market order and closes it again;
 *   6. with RUN_SECONDS set, keeps trading and listening that long, then checks that the order channel
 *      delivered every order it placed in the state the REST API reports (no private event lost).
 * Every order is signed with EIP-712 by the same wallet. Exits 0 when everything worked.
 *
 * Environment: PERPX_URL (default http://127.0.0.1:8080), PRIVATE_KEY (default: DATA_DIR/demo-wallet.json,
 * else a fresh random wallet), CHAIN_ID (16182), CHANNEL_ENV (futures-perp-dev), INSTRUMENT (BTCUSDT),
 * RUN_SECONDS (0: steps 1-5 only).
 * Dependencies: ethers, siwe, centrifuge, ws — all from npm.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Centrifuge, type Subscription } from 'centrifuge';
import { Wallet } from 'ethers';
import { SiweMessage } from 'siwe';
import WebSocket from 'ws';

const BASE = (process.env.PERPX_URL || 'http://127.0.0.1:8080').replace(/\/+$/, '');
const CHAIN_ID = process.env.CHAIN_ID || '16182';
const CHANNEL_ENV = process.env.CHANNEL_ENV || 'futures-perp-dev';
const INSTRUMENT = process.env.INSTRUMENT || 'BTCUSDT';
const LEVERAGE = 10;
const RUN_SECONDS = Number(process.env.RUN_SECONDS || 0);

// EIP-712: the exchange's domain and the typed structs of the operations used here.
const DOMAIN = { name: 'EVEDEX', version: '2', chainId: CHAIN_ID, salt: '0x5792f7333c35db190e30acc144f049fd15b24f552c0010b8b3e06f9105c37c5a' };
const f = (name: string, type: string) => ({ name, type });
const TYPES = {
  'New limit order': [f('id', 'string'), f('instrument', 'string'), f('side', 'string'), f('leverage', 'uint8'), f('quantity', 'uint96'), f('limitPrice', 'uint80'), f('chainId', 'uint256')],
  'New market order': [f('id', 'string'), f('instrument', 'string'), f('side', 'string'), f('timeInForce', 'string'), f('leverage', 'uint8'), f('cashQuantity', 'uint96'), f('chainId', 'uint256')],
  'Replace limit order': [f('orderId', 'string'), f('quantity', 'uint96'), f('limitPrice', 'uint80')],
  'Position close order': [f('id', 'string'), f('instrument', 'string'), f('leverage', 'uint8'), f('quantity', 'uint96'), f('chainId', 'uint256')],
};

const log = (...args: unknown[]) => console.log(`[${new Date().toISOString().slice(11, 23)}]`, ...args);

/** Decimal → integer of 1e-8 (what EIP-712 amounts carry), exact for up to 8 decimals. */
function e8(v: string): bigint {
  const [int, frac = ''] = v.split('.');
  return BigInt(int) * 100_000_000n + BigInt((frac + '00000000').slice(0, 8));
}

/** Order id, version 2: whole UTC days since 2025-07-24 (5 digits) + ':' + 26 hex. */
function newOrderId(): string {
  const day = Math.floor((Date.now() - Date.UTC(2025, 6, 24)) / 86_400_000);
  return `${String(day).padStart(5, '0')}:${randomUUID().replace(/-/g, '').slice(0, 26)}`;
}

/** Rounds a price down to the instrument's increment and prints it with the right decimals. */
function toIncrement(price: number, increment: number): string {
  const decimals = Math.max(0, -Math.floor(Math.log10(increment)));
  return (Math.floor(price / increment) * increment).toFixed(decimals);
}

function loadWallet(): Wallet {
  if (process.env.PRIVATE_KEY) return new Wallet(process.env.PRIVATE_KEY);
  try {
    const file = join(process.env.DATA_DIR || './data', 'demo-wallet.json');
    return new Wallet((JSON.parse(readFileSync(file, 'utf8')) as { privateKey: string }).privateKey);
  } catch {
    log('no PRIVATE_KEY and no demo wallet file: using a fresh random wallet');
    return Wallet.createRandom() as unknown as Wallet;
  }
}

class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

class ExchangeClient {
  accessToken = '';
  private refreshToken = '';
  /** The refresh in flight: concurrent callers share it (a refresh token is single-use; reusing one revokes the session). */
  private refreshing: Promise<void> | undefined;

  /** Retries once after refreshing the session when the access token has expired (401). */
  async request<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    try {
      return await this.send<T>(method, path, body);
    } catch (err) {
      if (!(err instanceof HttpError) || err.status !== 401 || !this.refreshToken || path.startsWith('/auth/')) throw err;
      await this.refresh();
      return this.send<T>(method, path, body);
    }
  }

  /** An access token valid for at least another 30 s (refreshed when it is not): for websocket subscriptions. */
  async freshAccessToken(): Promise<string> {
    const exp = JSON.parse(Buffer.from(this.accessToken.split('.')[1] ?? '', 'base64url').toString() || '{}').exp as number | undefined;
    if (exp === undefined || exp * 1000 - Date.now() < 30_000) await this.refresh();
    return this.accessToken;
  }

  /** Both tokens rotate: the old refresh token is spent. */
  private refresh(): Promise<void> {
    this.refreshing ??= this.rotate().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async rotate(): Promise<void> {
    const res = await fetch(BASE + '/auth/refresh', { method: 'POST', headers: { authorization: `Bearer ${this.refreshToken}` } });
    const json = (await res.json().catch(() => ({}))) as any;
    if (!res.ok) throw new HttpError(res.status, `POST /auth/refresh → ${res.status} ${json?.error?.code}: ${json?.error?.message}`);
    this.accessToken = json.token.accessToken;
    this.refreshToken = json.token.refreshToken;
  }

  private async send<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(BASE + path, {
      method,
      headers: {
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(this.accessToken ? { authorization: `Bearer ${this.accessToken}` } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const json = (await res.json().catch(() => ({}))) as any;
    if (!res.ok) throw new HttpError(res.status, `${method} ${path} → ${res.status} ${json?.error?.code}: ${json?.error?.message}`);
    return json as T;
  }

  /** SIWE sign-in: nonce → EIP-4361 message signed with personal_sign → tokens. */
  async signIn(wallet: Wallet): Promise<void> {
    const { nonce } = await this.request<{ nonce: string }>('GET', '/auth/nonce');
    const message = new SiweMessage({
      domain: new URL(BASE).host, address: wallet.address, statement: 'Sign in to evedex.com', uri: BASE,
      version: '1', chainId: Number(CHAIN_ID), nonce,
    }).prepareMessage();
    const signature = await wallet.signMessage(message);
    const session = await this.request<{ token: { accessToken: string; refreshToken: string } }>('POST', '/auth/user/sign-up', { wallet: wallet.address, message, nonce, signature });
    this.accessToken = session.token.accessToken;
    this.refreshToken = session.token.refreshToken;
  }
}

/** Resolves when `pred` accepts a publication on the subscription (or rejects after `ms`). */
function nextPublication<T>(sub: Subscription, pred: (data: T) => boolean, what: string, ms = 10_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.off('publication', onPub);
      reject(new Error(`timed out waiting for ${what}`));
    }, ms);
    const onPub = (ctx: { data: unknown }) => {
      if (!pred(ctx.data as T)) return;
      clearTimeout(timer);
      sub.off('publication', onPub);
      resolve(ctx.data as T);
    };
    sub.on('publication', onPub);
  });
}

/**
 * `getData` supplies the subscribe data: private channels send a fresh access token each time they
 * (re)subscribe, so they outlive the token's few minutes (the server ends a subscription whose token expired
 * with a code that makes the client subscribe again).
 */
function subscribe(ws: Centrifuge, channel: string, getData?: () => Promise<unknown>): Promise<Subscription> {
  const sub = ws.newSubscription(channel, getData ? { getData: async () => await getData() } : {});
  return new Promise((resolve, reject) => {
    sub.once('subscribed', () => resolve(sub));
    sub.once('error', (ctx) => reject(new Error(`subscribe ${channel}: ${ctx.error.message}`)));
    sub.once('unsubscribed', (ctx) => reject(new Error(`subscribe ${channel}: ${ctx.code} ${ctx.reason}`)));
    sub.subscribe();
  });
}

interface OrderEvent { id: string; status: string; quantity: number; limitPrice: number; filledAvgPrice?: number }
interface PositionEvent { instrument: string; quantity: number; side: string }

export async function main(): Promise<void> {
  const wallet = loadWallet();
  const api = new ExchangeClient();

  // 1. Sign in.
  await api.signIn(wallet);
  const me = await api.request<{ exchangeId: number }>('GET', '/api/user/me');
  log(`signed in as ${wallet.address}, exchangeId ${me.exchangeId}`);

  // 2. Collateral.
  let balance = await api.request<{ availableBalance: number }>('GET', '/api/market/available-balance');
  if (balance.availableBalance < 100) {
    await api.request('POST', '/api/user/faucet');
    balance = await api.request('GET', '/api/market/available-balance');
  }
  log(`available balance ${balance.availableBalance} USDT`);

  // 3. Real-time: order book and own orders/positions.
  const wsUrl = BASE.replace(/^http/, 'ws') + '/connection/websocket';
  const ws = new Centrifuge(wsUrl, { websocket: WebSocket });
  ws.connect();
  const private_ = async () => ({ accessToken: await api.freshAccessToken() });
  const book = await subscribe(ws, `${CHANNEL_ENV}:orderBook-${INSTRUMENT}-best`);
  const orders = await subscribe(ws, `${CHANNEL_ENV}:order-${me.exchangeId}`, private_);
  const positions = await subscribe(ws, `${CHANNEL_ENV}:position-${me.exchangeId}`, private_);
  book.on('publication', (ctx) => {
    const ob = (ctx.data as { orderBook: { bids: Array<{ price: number }>; asks: Array<{ price: number }> } }).orderBook;
    log(`book ${INSTRUMENT}: bid ${ob.bids.at(-1)?.price ?? '-'} / ask ${ob.asks[0]?.price ?? '-'}`);
  });
  // The latest state of each order as the order channel told it (step 6 checks it against REST).
  const delivered = new Map<string, string>();
  orders.on('publication', (ctx) => {
    const o = ctx.data as OrderEvent;
    delivered.set(o.id, o.status);
    if (RUN_SECONDS === 0) log(`order ${o.id}: ${o.status} ${o.quantity} @ ${o.limitPrice}`);
  });
  log(`listening on ${wsUrl}`);

  const instruments = await api.request<Array<{ id: string; markPrice: number; priceIncrement: number; quantityIncrement: number; minQuantity: number }>>('GET', '/api/market/instrument');
  const inst = instruments.find((i) => i.id === INSTRUMENT);
  if (!inst) throw new Error(`no instrument ${INSTRUMENT}`);
  const qty = String(inst.minQuantity * 10);

  // 4. Limit order 5 % below the mark: it rests. Then replace it, then cancel it.
  const id = newOrderId();
  const price = toIncrement(inst.markPrice * 0.95, inst.priceIncrement);
  const limitSig = await wallet.signTypedData(DOMAIN, { 'New limit order': TYPES['New limit order'] },
    { id, instrument: INSTRUMENT, side: 'BUY', leverage: LEVERAGE, quantity: e8(qty), limitPrice: e8(price), chainId: BigInt(CHAIN_ID) });
  const resting = nextPublication<OrderEvent>(orders, (o) => o.id === id && o.status === 'NEW', 'the NEW order');
  await api.request('POST', '/api/v2/order/limit', { id, instrument: INSTRUMENT, side: 'BUY', timeInForce: 'GTC', leverage: LEVERAGE, quantity: qty, limitPrice: price, chainId: CHAIN_ID, signature: limitSig });
  await resting;
  log(`placed ${id}: BUY ${qty} @ ${price}`);

  const newPrice = toIncrement(inst.markPrice * 0.94, inst.priceIncrement);
  const newQty = String(inst.minQuantity * 5);
  const replaceSig = await wallet.signTypedData(DOMAIN, { 'Replace limit order': TYPES['Replace limit order'] }, { orderId: id, quantity: e8(newQty), limitPrice: e8(newPrice) });
  const replaced = nextPublication<OrderEvent>(orders, (o) => o.id === id && o.limitPrice === Number(newPrice), 'the replaced order');
  await api.request('PUT', `/api/order/${id}/limit`, { quantity: newQty, limitPrice: newPrice, signature: replaceSig });
  await replaced;
  log(`replaced ${id}: BUY ${newQty} @ ${newPrice}`);

  const cancelled = nextPublication<OrderEvent>(orders, (o) => o.id === id && o.status === 'CANCELLED', 'the cancelled order');
  await api.request('DELETE', `/api/order/${id}`);
  await cancelled;
  log(`cancelled ${id}`);

  // 5. Open a position with a market order (spends this much USDT of notional), then close it.
  const marketId = newOrderId();
  const cash = '200';
  const marketSig = await wallet.signTypedData(DOMAIN, { 'New market order': TYPES['New market order'] },
    { id: marketId, instrument: INSTRUMENT, side: 'BUY', timeInForce: 'IOC', leverage: LEVERAGE, cashQuantity: e8(cash), chainId: BigInt(CHAIN_ID) });
  const opened = nextPublication<PositionEvent>(positions, (p) => p.instrument === INSTRUMENT && p.quantity > 0, 'the opened position');
  await api.request('POST', '/api/v2/order/market', { id: marketId, instrument: INSTRUMENT, side: 'BUY', timeInForce: 'IOC', leverage: LEVERAGE, cashQuantity: cash, chainId: CHAIN_ID, signature: marketSig });
  const position = await opened;
  log(`position opened: ${position.side} ${position.quantity} ${INSTRUMENT}`);

  const closeId = newOrderId();
  const closeSig = await wallet.signTypedData(DOMAIN, { 'Position close order': TYPES['Position close order'] },
    { id: closeId, instrument: INSTRUMENT, leverage: LEVERAGE, quantity: 0n, chainId: BigInt(CHAIN_ID) });
  const closed = nextPublication<PositionEvent>(positions, (p) => p.instrument === INSTRUMENT && p.quantity === 0, 'the closed position');
  // quantity 0 = the whole position.
  await api.request('POST', `/api/v2/position/${INSTRUMENT}/close`, { id: closeId, quantity: 0, leverage: LEVERAGE, chainId: CHAIN_ID, signature: closeSig });
  await closed;
  log('position closed');

  if (RUN_SECONDS > 0) await keepTrading(api, wallet, inst, [id, marketId, closeId], delivered);

  balance = await api.request('GET', '/api/market/available-balance');
  log(`done; available balance ${balance.availableBalance} USDT`);
  ws.disconnect();
}

/**
 * 6. Trades for RUN_SECONDS (a resting order placed and cancelled every round, a position opened and closed
 * every fifth), refreshing its access token as it goes, then waits until the order channel has told the REST
 * state of every order it placed: a lost private event fails the run.
 */
async function keepTrading(
  api: ExchangeClient,
  wallet: Wallet,
  inst: { markPrice: number; priceIncrement: number; minQuantity: number },
  placed: string[],
  delivered: Map<string, string>,
): Promise<void> {
  const qty = String(inst.minQuantity * 10);
  const end = Date.now() + RUN_SECONDS * 1000;
  let rounds = 0;
  for (; Date.now() < end; rounds++) {
    const id = newOrderId();
    const price = toIncrement(inst.markPrice * 0.9, inst.priceIncrement);
    const sig = await wallet.signTypedData(DOMAIN, { 'New limit order': TYPES['New limit order'] },
      { id, instrument: INSTRUMENT, side: 'BUY', leverage: LEVERAGE, quantity: e8(qty), limitPrice: e8(price), chainId: BigInt(CHAIN_ID) });
    await api.request('POST', '/api/v2/order/limit', { id, instrument: INSTRUMENT, side: 'BUY', timeInForce: 'GTC', leverage: LEVERAGE, quantity: qty, limitPrice: price, chainId: CHAIN_ID, signature: sig });
    await api.request('DELETE', `/api/order/${id}`);
    placed.push(id);
    if (rounds % 5 === 0) placed.push(...(await roundTrip(api, wallet)));
    await new Promise((r) => setTimeout(r, 500));
  }
  const deadline = Date.now() + 15_000;
  for (const id of placed) {
    const { status } = await api.request<{ status: string }>('GET', `/api/order/${id}`);
    while (delivered.get(id) !== status) {
      if (Date.now() > deadline) throw new Error(`order ${id}: REST says ${status}, the order channel said ${delivered.get(id) ?? 'nothing'}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  log(`ran ${RUN_SECONDS} s: ${rounds} rounds, ${placed.length} orders, every one delivered on the order channel`);
}

/** A small market buy and the close of the position: the ids of both orders. */
async function roundTrip(api: ExchangeClient, wallet: Wallet): Promise<string[]> {
  const buyId = newOrderId();
  const cash = '200';
  const buySig = await wallet.signTypedData(DOMAIN, { 'New market order': TYPES['New market order'] },
    { id: buyId, instrument: INSTRUMENT, side: 'BUY', timeInForce: 'IOC', leverage: LEVERAGE, cashQuantity: e8(cash), chainId: BigInt(CHAIN_ID) });
  await api.request('POST', '/api/v2/order/market', { id: buyId, instrument: INSTRUMENT, side: 'BUY', timeInForce: 'IOC', leverage: LEVERAGE, cashQuantity: cash, chainId: CHAIN_ID, signature: buySig });
  const closeId = newOrderId();
  const closeSig = await wallet.signTypedData(DOMAIN, { 'Position close order': TYPES['Position close order'] },
    { id: closeId, instrument: INSTRUMENT, leverage: LEVERAGE, quantity: 0n, chainId: BigInt(CHAIN_ID) });
  await api.request('POST', `/api/v2/position/${INSTRUMENT}/close`, { id: closeId, quantity: 0, leverage: LEVERAGE, chainId: CHAIN_ID, signature: closeSig });
  return [buyId, closeId];
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error('example failed:', err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
