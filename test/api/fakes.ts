/** Small fakes of the engine, auth, verifier and read store, enough to drive the gateway with app.inject. */
import { AuthError, SCOPES, type ApiKeyRecord, type AuthContext, type AuthService, type UserRecord } from '../../src/auth/types.js';
import { DEMO_INSTRUMENTS, type InstrumentConfig } from '../../src/domain/instrument.js';
import { orderIdPrefix } from '../../src/domain/order-id.js';
import type { ExchangeEngine } from '../../src/engine/api.js';
import type {
  AvailableBalanceView, CommandResult, DepthView, FillView, InstrumentStateView, OrderView, PositionView, TpSlView, TradeView,
} from '../../src/engine/records.js';
import type { ApiDeps, HistoryReader } from '../../src/api/ports.js';
import type { CommandInput } from '../../src/engine/commands.js';
import type { RateLimits } from '../../src/api/rate-limits.js';
import type { SignatureVerifier, SignedType } from '../../src/signing/ports.js';
import { typedDataDigest } from '../../src/signing/eip712.js';

export const NOW = Date.UTC(2025, 9, 1, 12, 0, 0);
export const WALLET = '0x' + 'ab'.repeat(20);
export const GOOD_SIG = '0x' + '11'.repeat(65);
export const OTHER_SIG = '0x' + '22'.repeat(65);
export const ACCESS = 'good-access-token';
export const API_KEY = 'good-api-key';
export const REFRESH = 'good-refresh-token';
export const CHAIN = '16182';

export function newOrderId(n = 1, ts = NOW): string {
  return `${orderIdPrefix(ts)}:${n.toString(16).padStart(26, '0')}`;
}

export const USER: UserRecord = {
  id: '6f1c9a8e-1111-4222-8333-944444444444', authId: '6f1c9a8e-5555-4666-8777-988888888888', exchangeId: 7, wallet: '0x' + 'AB'.repeat(20),
  role: 'user', name: null, email: null, avatar: null, level: 1, locale: 'en', dateTimeFormat: 'YYYY-MM-DD', favoriteInstruments: ['BTCUSDT'],
  social: [], smartAccountAddress: '0x' + 'cd'.repeat(20), createdAt: NOW - 1000, updatedAt: NOW - 500,
};

export function orderView(over: Partial<OrderView> = {}): OrderView {
  return {
    id: newOrderId(1), userId: USER.exchangeId, instrument: 'BTCUSDT', type: 'LIMIT', side: 'BUY', status: 'NEW', rejectedReason: '',
    timeInForce: 'GTC', postOnly: false, leverage: 10, quantity: 10_000_000, limitPrice: 100_000 * 1e8, stopPrice: null, group: 'manually',
    unFilledQuantity: 10_000_000, cashQuantity: 0, filledQuantity: 0, filledValue: 0n, realizedPnL: 0n, fee: 0n, triggeredAt: null,
    createdAt: NOW - 100, updatedAt: NOW - 50, ...over,
  };
}

export function positionView(over: Partial<PositionView> = {}): PositionView {
  return {
    id: 'pos-1', userId: USER.exchangeId, instrument: 'BTCUSDT', side: 'BUY', quantity: 10_000_000, costBasis: 1_000_000_000_000n,
    avgPrice: 100_000 * 1e8, leverage: 10, maintenanceMargin: 40_000_000n, fundingPaid: -1_000_000n, fee: 500_000n, realizedPnL: 0n,
    unRealizedPnL: 123_450_000n, markPrice: 100_100 * 1e8, bankruptcyPrice: 90_000 * 1e8, adlLevel: 2, createdAt: NOW - 1000, updatedAt: NOW - 10, ...over,
  };
}

export function tpslView(over: Partial<TpSlView> = {}): TpSlView {
  return {
    id: 'tpsl-1', userId: USER.exchangeId, instrument: 'BTCUSDT', type: 'take-profit', side: 'SELL', quantity: 0, price: 110_000 * 1e8,
    status: 'active', orderId: newOrderId(1), triggerOrder: null, triggeredQuantity: 0, cancelledReason: '', createdAt: NOW - 10, updatedAt: NOW - 5, ...over,
  };
}

export function fillView(over: Partial<FillView> = {}): FillView {
  return {
    executionId: 'exec-1', userId: USER.exchangeId, orderId: newOrderId(1), instrument: 'BTCUSDT', side: 'BUY', role: 'TAKER',
    quantity: 5_000_000, price: 100_000 * 1e8, fee: 250_000n, realizedPnL: 0n, createdAt: NOW - 20, ...over,
  };
}

export function account(): AvailableBalanceView {
  return {
    userId: USER.exchangeId, balance: 1_000_000_000_000n, pendingWithdrawals: 0n,
    positions: [{ instrument: 'BTCUSDT', side: 'BUY', volume: 1_000_000_000_000n, initialMargin: 100_000_000_000n }],
    openOrders: [{ instrument: 'BTCUSDT', side: 'BUY', unFilledVolume: 1_000_000_000_000n, unFilledInitialMargin: 100_000_000_000n }],
    negativeUnrealizedPnL: 0n, totalLock: 200_000_000_000n, availableBalance: 800_000_000_000n, marginCall: false, updatedAt: NOW - 1,
  };
}

export class FakeEngine implements ExchangeEngine {
  seq: number = 0;
  configs: InstrumentConfig[] = DEMO_INSTRUMENTS;
  orders: OrderView[] = [orderView()];
  positionList: PositionView[] = [positionView()];
  tpslList: TpSlView[] = [tpslView()];
  apply(): CommandResult { throw new Error('not used by the gateway'); }
  snapshot() { return { version: 1 as const, seq: 0, state: {} }; }
  stateHash() { return 'fake'; }
  checkInvariants() {}
  instrumentConfigs() { return this.configs; }
  instrumentConfig(id: string) { return this.configs.find((c) => c.id === id); }
  instrumentState(id: string): InstrumentStateView | undefined {
    return this.instrumentConfig(id) && { id, lastPrice: 100_000 * 1e8, markPrice: 100_010 * 1e8, indexPrice: 100_005 * 1e8, openInterest: 3 * 1e8, trading: 'all', updatedAt: NOW - 3 };
  }
  matcher() { return { state: 'active', updatedAt: NOW - 7 }; }
  getOrder(userId: number, orderId: string) {
    return this.orders.find((o) => o.userId === userId && o.id.toLowerCase() === orderId.toLowerCase());
  }
  openOrders(userId: number) { return this.orders.filter((o) => o.userId === userId); }
  positions(userId: number) { return this.positionList.filter((p) => p.userId === userId); }
  tpsls(userId: number) { return this.tpslList.filter((t) => t.userId === userId); }
  account(): AvailableBalanceView { return account(); }
  hasTransfer(): boolean { return false; }
  hasOrderId(userId: number, orderId: string): boolean { return this.getOrder(userId, orderId) !== undefined; }
  transfer() { return undefined; }
  depth(instrument: string, maxLevel: number): DepthView | undefined {
    if (!this.instrumentConfig(instrument)) return undefined;
    const asks = [{ price: 100_001 * 1e8, quantity: 1e8 }, { price: 100_002 * 1e8, quantity: 2e8 }].slice(0, maxLevel);
    const bids = [{ price: 99_998 * 1e8, quantity: 2e8 }, { price: 99_999 * 1e8, quantity: 1e8 }].slice(-maxLevel);
    return { instrument, t: NOW - 2, asks, bids };
  }
  power(_u: number, instrument: string) { return this.instrumentConfig(instrument) ? { buy: 500_000_000_000n, sell: 400_000_000_000n } : undefined; }
}

export class FakeAuth implements AuthService {
  keys: ApiKeyRecord[] = [];
  async issueNonce() { return { nonce: 'abcdefgh12345678' }; }
  async signIn() { return { user: USER, token: { accessToken: ACCESS, refreshToken: REFRESH } }; }
  async refresh(token: string) {
    if (token !== REFRESH) throw new AuthError(401, 'UNAUTHORIZED', 'Refresh token is not active');
    return { user: USER, token: { accessToken: ACCESS, refreshToken: REFRESH } };
  }
  async authenticate(h: { authorization?: string; 'x-api-key'?: string | string[] }): Promise<AuthContext | null> {
    if (h.authorization === `Bearer ${ACCESS}`) return { user: USER, via: 'access-token', scopes: SCOPES, sessionId: 'session-1' };
    if (h['x-api-key'] === API_KEY) return { user: USER, via: 'api-key', scopes: ['read', 'trade'] };
    return null;
  }
  async logout(token: string) { if (token !== ACCESS && token !== REFRESH) throw new AuthError(401, 'invalid_token', 'Not a session token'); }
  async verifyAccessToken() { return null; }
  async getUserByExchangeId() { return USER; }
  async getUserById() { return USER; }
  async createApiKey(_u: string, body: { name?: string }) {
    const apiKey: ApiKeyRecord = { id: '00000000-0000-4000-8000-000000000001', name: body.name ?? '', prefix: 'k_abc', createdAt: NOW, updatedAt: NOW, expiresAt: null, deletedAt: null, scopes: ['read', 'trade'] };
    this.keys.push(apiKey);
    return { apiKey, key: 'k_abcdef' };
  }
  async listApiKeys() { return { list: this.keys, count: this.keys.length }; }
  async updateApiKey() {}
  async deleteApiKey(_u: string, id: string) { if (!this.keys.some((k) => k.id === id)) throw new AuthError(404, 'API_KEY_NOT_FOUND', 'API key not found'); }
  async regenerateApiKey(u: string) { return this.createApiKey(u, { name: 'regen' }); }
}

/** Recovers WALLET (lower-case) for GOOD_SIG, another address for any other well-formed signature. */
export class FakeVerifier implements SignatureVerifier {
  calls: Array<{ type: string; chainId: string; message: Record<string, string | bigint> }> = [];
  async recover(type: SignedType, chainId: string, message: Record<string, string | bigint>, signature: string) {
    this.calls.push({ type, chainId, message });
    return signature === GOOD_SIG ? WALLET : '0x' + '99'.repeat(20);
  }
  async recoverWithDigest(type: SignedType, chainId: string, message: Record<string, string | bigint>, signature: string) {
    return { signer: await this.recover(type, chainId, message, signature), digest: typedDataDigest(type, chainId, message) };
  }
  async close() {}
}

export class FakeStore implements HistoryReader {
  listOrders() { return { list: [orderView({ status: 'FILLED' })], count: 1, next: 'cursor-2' }; }
  getOrder() { return undefined; }
  listFills() { return { list: [fillView()], count: 1 }; }
  orderFills() { return [fillView()]; }
  recentTrades(instrument: string): TradeView[] {
    return [{ executionId: 'exec-1', instrument, side: 'BUY', quantity: 5_000_000, price: 100_000 * 1e8, createdAt: NOW - 20 }];
  }
  listTpsl() { return { list: [tpslView()], count: 1 }; }
}

/** submit recorder: answers like an engine that accepts everything. */
export function fakeSubmit(engine: FakeEngine) {
  const calls: CommandInput[] = [];
  const submit = async (cmd: CommandInput): Promise<CommandResult> => {
    calls.push(cmd);
    switch (cmd.kind) {
      case 'order.place':
        return { reply: { ok: true, order: orderView({ id: cmd.order.id, instrument: cmd.order.instrument, side: cmd.order.side, type: cmd.order.type }) }, events: [] };
      case 'position.close':
        return { reply: { ok: true, order: orderView({ id: cmd.id, type: 'MARKET', side: 'SELL' }) }, events: [] };
      case 'order.placeBatch':
        return { reply: { ok: true, batch: cmd.orders.map((o) => ({ orderId: o.id, success: true })) }, events: [] };
      case 'order.replaceBatch':
        return { reply: { ok: true, batch: cmd.items.map((o) => ({ orderId: o.orderId, success: true })) }, events: [] };
      case 'order.cancelMany':
        return { reply: { ok: true, batch: cmd.orderIds.map((id, i) => (i === 0 ? { orderId: id, success: true } : { orderId: id, success: false, failReason: 'Order not found' })) }, events: [] };
      case 'order.cancel':
        if (!engine.getOrder(cmd.userId, cmd.orderId)) return { reply: { ok: false, error: { status: 404, code: 'ORDER_NOT_FOUND', message: 'Order not found' } }, events: [] };
        return { reply: { ok: true }, events: [] };
      case 'position.leverage':
        return { reply: { ok: true, position: positionView({ leverage: cmd.leverage }) }, events: [] };
      case 'funds.withdraw':
        return { reply: { ok: true, transfer: { id: cmd.transferId, userId: cmd.userId, type: 'withdraw', coin: 'usdt', amount: BigInt(cmd.amount), fee: 0n, status: 'pending', createdAt: NOW, updatedAt: NOW } }, events: [] };
      default: {
        const kind = (cmd as { kind: string }).kind;
        if (kind.startsWith('tpsl.')) return { reply: { ok: true, tpsl: tpslView() } as never, events: [] };
        return { reply: { ok: true }, events: [] };
      }
    }
  };
  return { submit, calls };
}

/** Every injected request comes from one address and one user: budgets far above what a test (or the fuzz) sends. */
const RAISED_BUDGET = { max: 1_000_000, windowMs: 60_000 };
export const RAISED_RATE_LIMITS: RateLimits = { ip: RAISED_BUDGET, signIn: RAISED_BUDGET, orders: RAISED_BUDGET, faucet: RAISED_BUDGET, reads: RAISED_BUDGET };

export function makeDeps(over: Partial<ApiDeps> = {}) {
  const engine = new FakeEngine();
  const rec = fakeSubmit(engine);
  const verifier = new FakeVerifier();
  const auth = new FakeAuth();
  const deps: ApiDeps = {
    engine, submit: rec.submit, auth, verifier, chainId: CHAIN, readStore: new FakeStore(), clock: () => NOW, newId: () => 'transfer-1', ...over,
    config: { rateLimits: RAISED_RATE_LIMITS, ...over.config },
  };
  return { deps, engine, calls: rec.calls, verifier, auth };
}

export const AUTH = { authorization: `Bearer ${ACCESS}` };
