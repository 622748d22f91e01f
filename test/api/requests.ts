/** One valid request per route (used by the shape tests and as seeds/targets for the fuzz test). */
import { CHAIN, GOOD_SIG, newOrderId } from './fakes.js';

export interface Req {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  /** OpenAPI path template of the route. */
  route: string;
  body?: unknown;
  auth: boolean;
}

const oid = newOrderId(1);
const limitBody = (n: number) => ({
  instrument: 'BTCUSDT', side: 'BUY', leverage: 10, quantity: '0.1', limitPrice: 100000, signature: GOOD_SIG, chainId: CHAIN, id: newOrderId(n),
});

export const VALID: Req[] = [
  { method: 'GET', url: '/api/ping', route: '/api/ping', auth: false },
  { method: 'GET', url: '/api/market', route: '/api/market', auth: false },
  { method: 'GET', url: '/api/coin', route: '/api/coin', auth: false },
  { method: 'GET', url: '/api/market/instrument', route: '/api/market/instrument', auth: false },
  { method: 'GET', url: '/api/market/instrument?fields=metrics', route: '/api/market/instrument', auth: false },
  { method: 'GET', url: '/api/market/BTCUSDT/deep?maxLevel=10&roundPrice=0.1', route: '/api/market/{instrument}/deep', auth: false },
  { method: 'GET', url: '/api/market/BTCUSDT/recent-trades?limit=10', route: '/api/market/{instrument}/recent-trades', auth: false },
  { method: 'GET', url: '/api/market/available-balance', route: '/api/market/available-balance', auth: true },
  { method: 'GET', url: '/api/market/power?instrument=BTCUSDT', route: '/api/market/power', auth: true },
  { method: 'POST', url: '/api/v2/order/limit', route: '/api/v2/order/limit', auth: true, body: { ...limitBody(2), timeInForce: 'GTC', postOnly: 'yes', smp: { smp: true, smpId: 'a' }, tpsl: [{ type: 'take-profit', side: 'SELL', quantity: 0, price: '110000' }] } },
  { method: 'POST', url: '/api/v2/order/stop-limit', route: '/api/v2/order/stop-limit', auth: true, body: { instrument: 'BTCUSDT', side: 'SELL', quantity: 0.1, limitPrice: '99000', stopPrice: '99500.5', signature: GOOD_SIG, chainId: CHAIN, id: newOrderId(3) } },
  { method: 'POST', url: '/api/v2/order/market', route: '/api/v2/order/market', auth: true, body: { instrument: 'BTCUSDT', side: 'BUY', leverage: 5, cashQuantity: '100.5', timeInForce: 'IOC', signature: GOOD_SIG, chainId: CHAIN, id: newOrderId(4) } },
  { method: 'POST', url: '/api/v2/order/mass-limit/BTCUSDT', route: '/api/v2/order/mass-limit/{instrument}', auth: true, body: [limitBody(5), limitBody(6)] },
  { method: 'PUT', url: `/api/order/${oid}/limit`, route: '/api/order/{orderId}/limit', auth: true, body: { quantity: '0.2', limitPrice: '100000.1', signature: GOOD_SIG } },
  { method: 'PUT', url: `/api/order/${oid}/stop-limit`, route: '/api/order/{orderId}/stop-limit', auth: true, body: { quantity: '0.2', limitPrice: '100000.1', stopPrice: 100001, signature: GOOD_SIG } },
  { method: 'PUT', url: '/api/order/limit/BTCUSDT', route: '/api/order/limit/{instrument}', auth: true, body: [{ orderId: oid, quantity: '0.2', limitPrice: '100000', signature: GOOD_SIG }] },
  { method: 'DELETE', url: `/api/order/${oid}`, route: '/api/order/{orderId}', auth: true },
  { method: 'POST', url: '/api/order/mass-cancel', route: '/api/order/mass-cancel', auth: true, body: { instrument: 'BTCUSDT' } },
  { method: 'POST', url: '/api/order/mass-cancel-by-id', route: '/api/order/mass-cancel-by-id', auth: true, body: { orderIds: [oid, '123e4567-e89b-42d3-a456-426614174000'] } },
  { method: 'GET', url: `/api/order/${oid}`, route: '/api/order/{orderId}', auth: true },
  { method: 'GET', url: `/api/order/${oid}/fill?version=2`, route: '/api/order/{orderId}/fill', auth: true },
  { method: 'GET', url: '/api/order/opened', route: '/api/order/opened', auth: true },
  { method: 'GET', url: '/api/order?status=NEW&status=FILLED&instrument=BTCUSDT&limit=10&sort=created-at-asc&withTpSL=yes&after=2025-01-01T00:00:00Z', route: '/api/order', auth: true },
  { method: 'GET', url: '/api/fill?after=0&before=2025-12-01T00:00:00Z&instrument=BTCUSDT&limit=5', route: '/api/fill', auth: true },
  { method: 'GET', url: '/api/position?withTpSL=yes', route: '/api/position', auth: true },
  { method: 'PUT', url: '/api/position/BTCUSDT', route: '/api/position/{instrument}', auth: true, body: { leverage: 20 } },
  { method: 'POST', url: '/api/v2/position/BTCUSDT/close', route: '/api/v2/position/{instrument}/close', auth: true, body: { quantity: 0, leverage: 10, signature: GOOD_SIG, chainId: CHAIN, id: newOrderId(7) } },
  { method: 'GET', url: '/api/tpsl?status=active', route: '/api/tpsl', auth: true },
  { method: 'POST', url: '/api/tpsl/BTCUSDT', route: '/api/tpsl/{instrument}', auth: true, body: { type: 'stop-loss', side: 'SELL', quantity: '0', price: 90000, order: null, signature: GOOD_SIG } },
  { method: 'PUT', url: '/api/tpsl/BTCUSDT/tpsl-1', route: '/api/tpsl/{instrument}/{id}', auth: true, body: { type: 'take-profit', side: 'SELL', quantity: '0.1', price: 120000, signature: GOOD_SIG } },
  { method: 'DELETE', url: '/api/tpsl/BTCUSDT/tpsl-1', route: '/api/tpsl/{instrument}/{id}', auth: true },
  { method: 'GET', url: '/api/user/me', route: '/api/user/me', auth: true },
  { method: 'GET', url: '/api/user/funding', route: '/api/user/funding', auth: true },
  { method: 'GET', url: '/api/user/balance', route: '/api/user/balance', auth: true },
  { method: 'GET', url: '/api/user/faucet/check', route: '/api/user/faucet/check', auth: true },
  { method: 'POST', url: '/api/user/faucet', route: '/api/user/faucet', auth: true },
  { method: 'POST', url: '/api/transfer/pf/withdraw', route: '/api/transfer/pf/withdraw', auth: true, body: { recipient: '0x' + '12'.repeat(20), amount: '10.123456789', signature: GOOD_SIG } },
  { method: 'POST', url: '/api/user/api-key', route: '/api/user/api-key', auth: true, body: { name: 'bot' } },
  { method: 'GET', url: '/api/user/api-key?limit=10', route: '/api/user/api-key', auth: true },
  { method: 'PUT', url: '/api/user/api-key/00000000-0000-4000-8000-000000000001', route: '/api/user/api-key/{apiKeyId}', auth: true, body: { name: 'renamed' } },
  { method: 'PUT', url: '/api/user/api-key/00000000-0000-4000-8000-000000000001/regenerate', route: '/api/user/api-key/{apiKeyId}/regenerate', auth: true },
  { method: 'DELETE', url: '/api/user/api-key/00000000-0000-4000-8000-000000000001', route: '/api/user/api-key/{apiKeyId}', auth: true },
  { method: 'GET', url: '/auth/nonce', route: '/auth/nonce', auth: false },
  { method: 'POST', url: '/auth/user/sign-up', route: '/auth/user/sign-up', auth: false, body: { wallet: '0x' + 'ab'.repeat(20), message: 'evedex.com wants you to sign in', nonce: 'abcdefgh12345678', signature: GOOD_SIG } },
  { method: 'GET', url: '/auth/user/balance', route: '/auth/user/balance', auth: true },
];
