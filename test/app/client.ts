/**
 * A bot-like HTTP client for end-to-end tests against the real exchange (startExchange on port 0, temp
 * DATA_DIR). It talks only HTTP (global fetch) and signs with real ethers v6 wallets. The EIP-712 types
 * are written out here from the public schema in docs/api.md (not imported from src/signing), so a drift of the
 * server's schema from the public one makes these tests fail.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Wallet } from 'ethers';
import { loadConfig } from '../../src/app/config.js';
import { startExchange, type RunningExchange } from '../../src/app/exchange.js';
import { clientSignIn, randomWallet } from '../auth/helpers.js';

export const CHAIN_ID = '16182';

// ---------------------------------------------------------------------------------------------------
// Exchange
// ---------------------------------------------------------------------------------------------------

export interface TestExchange {
  ex: RunningExchange;
  url: string;
  /** Stops the exchange and removes its data directory. */
  stop(): Promise<void>;
}

/**
 * Every test client shares one IP and many sign in and trade in bursts: the request budgets are raised (not
 * turned off: the hooks still run) unless a test sets its own (test/app/rate-limits.test.ts).
 */
export const RAISED_RATE_LIMITS: Record<string, string> = Object.fromEntries(
  ['IP', 'SIGN_IN', 'ORDERS', 'FAUCET', 'READS'].map((b) => [`RATE_LIMIT_${b}_MAX`, '1000000']),
);

/**
 * PERPX_TEST_TARGET=cluster runs the end-to-end tests against a cluster in this process (engine leader,
 * projector, two gateways; test/cluster/test-cluster.ts) through gateway 1's URL instead of the single process.
 */
export const TEST_TARGET = process.env.PERPX_TEST_TARGET === 'cluster' ? 'cluster' : 'single';

/** For tests of the single process's own machinery (files in DATA_DIR, start-up report): skipped on a cluster. */
export const singleProcessOnly = TEST_TARGET === 'cluster' ? 'tests the single process (PERPX_TEST_TARGET=cluster)' : false;

export async function startTestExchange(env: Record<string, string> = {}): Promise<TestExchange> {
  if (TEST_TARGET === 'cluster') {
    const { startClusterAsExchange } = await import('../cluster/test-cluster.js');
    return startClusterAsExchange(env);
  }
  const dir = mkdtempSync(join(tmpdir(), 'perpx-e2e-'));
  const config = loadConfig({
    PORT: '0', DATA_DIR: dir, SIGNATURE_THREADS: '0', LOG_LEVEL: 'silent', SEED_DEMO: 'true', HEARTBEAT_MS: '1000',
    // Tests that assert exact books and balances run without the demo bots, demo wallet, moving index and funding.
    MARKET_MAKERS: '0', DEMO_WALLET: 'false', INDEX_FEED: 'off', FUNDING_INTERVAL_MS: '0', ...RAISED_RATE_LIMITS, ...env,
  });
  const ex = await startExchange(config);
  return {
    ex,
    url: ex.url,
    async stop() {
      try {
        await ex.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Numbers, ids, EIP-712
// ---------------------------------------------------------------------------------------------------

/** round(v, 8) × 10^8 as an integer (half-up), from a decimal string or number. */
export function units(v: string | number): bigint {
  const s = typeof v === 'number' ? v.toFixed(12) : v;
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(s.trim());
  if (!m) throw new Error(`not a decimal: ${s}`);
  const frac = (m[3] ?? '').padEnd(9, '0');
  let n = BigInt(m[2]) * 100_000_000n + BigInt(frac.slice(0, 8));
  if (Number(frac[8]) >= 5) n += 1n;
  return m[1] === '-' ? -n : n;
}

/** Version 2 order id: whole UTC days since 2025-07-24, 5 digits, ':' + 26 hex of a random UUID. */
export function newOrderId(now = Date.now()): string {
  const day = Math.floor((now - Date.UTC(2025, 6, 24)) / 86_400_000);
  return `${String(day).padStart(5, '0')}:${randomUUID().replace(/-/g, '').slice(0, 26)}`;
}

export const DOMAIN = (chainId = CHAIN_ID) => ({
  name: 'EVEDEX', version: '2', chainId, salt: '0x5792f7333c35db190e30acc144f049fd15b24f552c0010b8b3e06f9105c37c5a',
});

const f = (name: string, type: string) => ({ name, type });
export const TYPES = {
  'New limit order': [f('id', 'string'), f('instrument', 'string'), f('side', 'string'), f('leverage', 'uint8'), f('quantity', 'uint96'), f('limitPrice', 'uint80'), f('chainId', 'uint256')],
  'New market order': [f('id', 'string'), f('instrument', 'string'), f('side', 'string'), f('timeInForce', 'string'), f('leverage', 'uint8'), f('cashQuantity', 'uint96'), f('chainId', 'uint256')],
  'New stop-limit order': [f('id', 'string'), f('instrument', 'string'), f('side', 'string'), f('leverage', 'uint8'), f('quantity', 'uint96'), f('limitPrice', 'uint80'), f('stopPrice', 'uint80'), f('chainId', 'uint256')],
  'Position close order': [f('id', 'string'), f('instrument', 'string'), f('leverage', 'uint8'), f('quantity', 'uint96'), f('chainId', 'uint256')],
  'New take-profit/stop-loss': [f('instrument', 'string'), f('type', 'string'), f('side', 'string'), f('quantity', 'uint96'), f('price', 'uint80')],
  'Replace limit order': [f('orderId', 'string'), f('quantity', 'uint96'), f('limitPrice', 'uint80')],
  'Replace stop-limit order': [f('orderId', 'string'), f('quantity', 'uint96'), f('limitPrice', 'uint80'), f('stopPrice', 'uint80')],
} as const;
export type SignedTypeName = keyof typeof TYPES;

export function sign(wallet: Wallet, type: SignedTypeName, value: Record<string, unknown>, chainId = CHAIN_ID): Promise<string> {
  return wallet.signTypedData(DOMAIN(chainId), { [type]: [...TYPES[type]] }, value);
}

type Num = string | number;

export interface LimitInput { instrument?: string; side: 'BUY' | 'SELL'; quantity: Num; limitPrice: Num; leverage?: number; id?: string; chainId?: string; timeInForce?: string; postOnly?: 'yes' }
export interface StopLimitInput { instrument?: string; side: 'BUY' | 'SELL'; quantity: Num; limitPrice: Num; stopPrice: Num; leverage?: number; id?: string }
export interface MarketInput { instrument?: string; side: 'BUY' | 'SELL'; cashQuantity: Num; leverage?: number; id?: string; timeInForce?: 'IOC' | 'FOK' }
export interface TpSlInput { type: 'take-profit' | 'stop-loss'; side: 'BUY' | 'SELL'; quantity: Num; price: Num }

// ---------------------------------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------------------------------

export interface Res<T = any> { status: number; body: T }

export interface ErrorBody { error: { code: string; message: string } }

/** Asserts a 4xx failure with the `{ error: { code, message } }` body; returns the error. */
export function assertError(res: Res, status?: number | number[], code?: string): { code: string; message: string } {
  const what = `${JSON.stringify(res.body)}`;
  if (status !== undefined) {
    const ok = Array.isArray(status) ? status.includes(res.status) : res.status === status;
    assert.ok(ok, `expected status ${String(status)}, got ${res.status}: ${what}`);
  } else {
    assert.ok(res.status >= 400 && res.status < 500, `expected a 4xx, got ${res.status}: ${what}`);
  }
  assert.ok(res.status >= 400 && res.status < 500, `expected a 4xx, got ${res.status}: ${what}`);
  const e = (res.body as ErrorBody)?.error;
  assert.ok(e && typeof e === 'object', `error body missing: ${what}`);
  assert.equal(typeof e.code, 'string', `error.code: ${what}`);
  assert.ok(e.code.length > 0, `error.code empty: ${what}`);
  assert.equal(typeof e.message, 'string', `error.message: ${what}`);
  assert.ok(e.message.length > 0, `error.message empty: ${what}`);
  if (code !== undefined) assert.equal(e.code, code, `error code: ${what}`);
  return e;
}

/** Asserts a 200 and returns the body. */
export function ok<T = any>(res: Res<T>, what = ''): T {
  assert.equal(res.status, 200, `${what} → ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function http(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res> {
  const h: Record<string, string> = { accept: 'application/json', ...headers };
  if (body !== undefined) h['content-type'] = 'application/json';
  const res = await fetch(base + path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    /* keep the text */
  }
  return { status: res.status, body: parsed };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until `cond` holds (the read model is projected behind the engine). */
export async function eventually<T>(fn: () => Promise<T>, cond: (v: T) => boolean, what: string, timeoutMs = 3000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: T = await fn();
  while (!cond(last)) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
    await sleep(20);
    last = await fn();
  }
  return last;
}

// ---------------------------------------------------------------------------------------------------
// Bot
// ---------------------------------------------------------------------------------------------------

export class Bot {
  accessToken = '';
  refreshToken = '';
  exchangeId = -1;
  userId = '';

  constructor(readonly base: string, readonly wallet: Wallet = randomWallet(), readonly authBase = base) {}

  get address(): string {
    return this.wallet.address;
  }

  /** GET /auth/nonce → SIWE message (the public client's shape) → POST /auth/user/sign-up; then GET /api/user/me. */
  async signIn(): Promise<this> {
    const n = ok(await http(this.authBase, 'GET', '/auth/nonce'), 'nonce') as { nonce: string };
    assert.match(n.nonce, /^[A-Za-z0-9]{8,}$/);
    const body = await clientSignIn(this.wallet, n.nonce, { chainId: Number(CHAIN_ID) });
    const s = ok(await http(this.authBase, 'POST', '/auth/user/sign-up', body), 'sign-up') as {
      user: { id: string; wallet: string }; token: { accessToken: string; refreshToken: string };
    };
    assert.equal(s.user.wallet.toLowerCase(), this.address.toLowerCase());
    this.accessToken = s.token.accessToken;
    this.refreshToken = s.token.refreshToken;
    const me = ok(await this.get('/api/user/me'), 'me') as { id: string; exchangeId: number; wallet: string };
    assert.ok(Number.isSafeInteger(me.exchangeId) && me.exchangeId > 0, `exchangeId ${JSON.stringify(me.exchangeId)}`);
    assert.equal(me.wallet.toLowerCase(), this.address.toLowerCase());
    this.exchangeId = me.exchangeId;
    this.userId = me.id;
    return this;
  }

  async faucet(): Promise<void> {
    ok(await this.post('/api/user/faucet'), 'faucet');
  }

  req(method: string, path: string, body?: unknown, token = this.accessToken): Promise<Res> {
    return http(this.base, method, path, body, token ? { authorization: `Bearer ${token}` } : {});
  }
  get(path: string): Promise<Res> { return this.req('GET', path); }
  post(path: string, body?: unknown): Promise<Res> { return this.req('POST', path, body); }
  put(path: string, body?: unknown): Promise<Res> { return this.req('PUT', path, body); }
  del(path: string): Promise<Res> { return this.req('DELETE', path); }

  // ---- signed bodies ----

  async limitBody(o: LimitInput): Promise<Record<string, unknown>> {
    const id = o.id ?? newOrderId();
    const instrument = o.instrument ?? 'BTCUSDT';
    const leverage = o.leverage ?? 10;
    const chainId = o.chainId ?? CHAIN_ID;
    const signature = await sign(this.wallet, 'New limit order', {
      id, instrument, side: o.side, leverage, quantity: units(o.quantity), limitPrice: units(o.limitPrice), chainId: BigInt(chainId),
    }, chainId);
    const body: Record<string, unknown> = {
      id, instrument, side: o.side, timeInForce: o.timeInForce ?? 'GTC', leverage, quantity: o.quantity, limitPrice: o.limitPrice, chainId, signature,
    };
    if (o.postOnly) body.postOnly = o.postOnly;
    return body;
  }

  async stopLimitBody(o: StopLimitInput): Promise<Record<string, unknown>> {
    const id = o.id ?? newOrderId();
    const instrument = o.instrument ?? 'BTCUSDT';
    const leverage = o.leverage ?? 10;
    const signature = await sign(this.wallet, 'New stop-limit order', {
      id, instrument, side: o.side, leverage, quantity: units(o.quantity), limitPrice: units(o.limitPrice), stopPrice: units(o.stopPrice), chainId: BigInt(CHAIN_ID),
    });
    return { id, instrument, side: o.side, leverage, quantity: o.quantity, limitPrice: o.limitPrice, stopPrice: o.stopPrice, chainId: CHAIN_ID, signature };
  }

  async marketBody(o: MarketInput): Promise<Record<string, unknown>> {
    const id = o.id ?? newOrderId();
    const instrument = o.instrument ?? 'BTCUSDT';
    const leverage = o.leverage ?? 10;
    const timeInForce = o.timeInForce ?? 'IOC';
    const signature = await sign(this.wallet, 'New market order', {
      id, instrument, side: o.side, timeInForce, leverage, cashQuantity: units(o.cashQuantity), chainId: BigInt(CHAIN_ID),
    });
    return { id, instrument, side: o.side, timeInForce, leverage, cashQuantity: o.cashQuantity, chainId: CHAIN_ID, signature };
  }

  async closeBody(instrument: string, quantity: Num, leverage: number, id = newOrderId()): Promise<Record<string, unknown>> {
    const signature = await sign(this.wallet, 'Position close order', { id, instrument, leverage, quantity: units(quantity), chainId: BigInt(CHAIN_ID) });
    return { id, quantity, leverage, chainId: CHAIN_ID, signature };
  }

  async replaceBody(orderId: string, quantity: Num, limitPrice: Num): Promise<Record<string, unknown>> {
    const signature = await sign(this.wallet, 'Replace limit order', { orderId, quantity: units(quantity), limitPrice: units(limitPrice) });
    return { quantity, limitPrice, signature };
  }

  async replaceStopBody(orderId: string, quantity: Num, limitPrice: Num, stopPrice: Num): Promise<Record<string, unknown>> {
    const signature = await sign(this.wallet, 'Replace stop-limit order', { orderId, quantity: units(quantity), limitPrice: units(limitPrice), stopPrice: units(stopPrice) });
    return { quantity, limitPrice, stopPrice, signature };
  }

  async tpslBody(instrument: string, t: TpSlInput, order: string | null = null): Promise<Record<string, unknown>> {
    const signature = await sign(this.wallet, 'New take-profit/stop-loss', { instrument, type: t.type, side: t.side, quantity: units(t.quantity), price: units(t.price) });
    return { type: t.type, side: t.side, quantity: t.quantity, price: t.price, order, signature };
  }

  // ---- operations (return the raw response) ----

  async limit(o: LimitInput): Promise<Res> { return this.post('/api/v2/order/limit', await this.limitBody(o)); }
  async stopLimit(o: StopLimitInput): Promise<Res> { return this.post('/api/v2/order/stop-limit', await this.stopLimitBody(o)); }
  async market(o: MarketInput): Promise<Res> { return this.post('/api/v2/order/market', await this.marketBody(o)); }

  async balance(): Promise<{ funding: { balance: number }; availableBalance: number; position: unknown[]; openOrder: unknown[] }> {
    return ok(await this.get('/api/market/available-balance'), 'available-balance');
  }

  async positions(): Promise<Array<Record<string, any>>> {
    return (ok(await this.get('/api/position'), 'position') as { list: Array<Record<string, any>> }).list;
  }

  async openOrders(): Promise<Array<Record<string, any>>> {
    return ok(await this.get('/api/order/opened'), 'opened');
  }

  async order(id: string): Promise<Record<string, any>> {
    return ok(await this.get(`/api/order/${id}`), `order ${id}`);
  }
}

/** Fill window covering everything (required after/before). */
export const ALL_TIME = `after=0&before=${encodeURIComponent(new Date(Date.now() + 86_400_000).toISOString())}`;

/** Money comparisons: both sides as integers of 1e-8. */
export function assertMoney(actual: number, expected: string | number, what: string): void {
  assert.equal(units(actual), units(expected), `${what}: ${actual} ≠ ${expected}`);
}
