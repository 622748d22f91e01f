/**
 * Request builders for the routes whose body is signed (EIP-712, SIWE, OAuth consent): the signature is
 * valid over whatever the body says, and the signed fields are often hostile (zero, past the lot or tick,
 * huge, unknown instrument, leverage 0 or 255, another chain, a used id, a bad recipient, an amount past the
 * balance), so the request passes the signature check and the engine has to refuse it. Now and then the body
 * differs from what was signed, or another wallet signed it.
 */
import { randomUUID } from 'node:crypto';
import { Wallet } from 'ethers';
import { CHAIN_ID, DOMAIN, newOrderId, sign, units, type Bot } from '../client.js';
import { clientSignIn } from '../../auth/helpers.js';
import { hostile, orderIdToday, type Rng } from './values.js';

export interface Built {
  method: string;
  path: string;
  body?: unknown;
}

/** What the builders need from the fuzzed exchange: ids that exist, and who signs. */
export interface SignedWorld {
  url: string;
  /** The signer; the request is sent with some (maybe another) user's credentials. */
  bot: Bot;
  orderIds(r: Rng): string;
  stopOrderIds(r: Rng): string;
  tpslIds(r: Rng): string;
  usedOrderId(r: Rng): string;
  nonce(): Promise<string>;
  consentRequestId(): Promise<string>;
}

const QTY = ['0.01', '0.001', '0.1', '1', '0', '0.00000001', '0.0001', '0.123456789', '1000000', '792281625142.64337593'];
const PRICE = ['90000', '100000', '110000', '100000.5', '100000.123', '0.00000001', '1', '99999999999', '3500'];
const CASH = ['100', '10', '0', '0.00000001', '1000000000', '5'];
const INSTR = ['BTCUSDT', 'BTCUSDT', 'BTCUSDT', 'ETHUSDT', 'NOPEUSDT', 'btcusdt'];
const LEV = [1, 5, 10, 10, 0, 255, 100, 250];
const SIDE = ['BUY', 'SELL'] as const;
const RECIPIENTS = ['0x' + '5a'.repeat(20), '0x' + '00'.repeat(20), '0x' + 'ff'.repeat(20)];
const AMOUNTS = ['1', '0.5', '0', '0.00000001', '1000000000000', '99999999999.99999999', '10.123456789'];

const HOSTILE_P = 0.5;
/** The value signed: usually from the list; with HOSTILE_P the hostile end of it. */
const pick = <T>(r: Rng, xs: readonly T[], safe = 3): T => (r.chance(HOSTILE_P) ? r.pick(xs) : xs[r.int(Math.min(safe, xs.length))]!);

/** Sometimes the sent body is not what was signed (a field changed afterwards), or a stranger signed. */
function tamper(body: Record<string, unknown>, r: Rng): Record<string, unknown> {
  const roll = r.next();
  if (roll < 0.05) {
    const keys = Object.keys(body).filter((k) => k !== 'signature');
    return { ...body, [r.pick(keys)]: hostile(r) };
  }
  if (roll < 0.08) return { ...body, signature: `0x${r.hex(65)}` };
  return body;
}

/** `v1`: for the version-1 routes, which also take a UUID as a new order's id. */
function orderId(w: SignedWorld, r: Rng, v1 = false): string {
  const roll = r.next();
  if (roll < 0.08) return w.usedOrderId(r);
  if (roll < 0.12) return orderIdToday(r, Date.now() - 5 * 86_400_000);
  if (v1 && roll < 0.6) return randomUUID();
  return newOrderId();
}

/** Create and close paths: version 2, or version 1 (`/api/order/…`, `/api/position/…`). */
const prefix = (v1: boolean) => (v1 ? '/api' : '/api/v2');

export async function limitOrder(w: SignedWorld, r: Rng, tampered = true, v1 = false): Promise<Record<string, unknown>> {
  const id = orderId(w, r, v1);
  const instrument = pick(r, INSTR);
  const side = r.pick(SIDE);
  const leverage = pick(r, LEV, 4);
  const quantity = pick(r, QTY, 3);
  const limitPrice = side === 'BUY' && !r.chance(HOSTILE_P) ? '90000' : pick(r, PRICE);
  const chainId = r.chance(0.05) ? '1' : CHAIN_ID;
  const signature = await sign(w.bot.wallet, 'New limit order', {
    id, instrument, side, leverage, quantity: units(quantity), limitPrice: units(limitPrice), chainId: BigInt(chainId),
  }, chainId);
  const body: Record<string, unknown> = { id, instrument, side, leverage, quantity, limitPrice, chainId, signature, timeInForce: r.pick(['GTC', 'GTC', 'DAY', 'IOC', 'FOK']) };
  if (r.chance(0.2)) body.postOnly = 'yes';
  return tampered ? tamper(body, r) : body;
}

export async function builtLimit(w: SignedWorld, r: Rng, v1 = false): Promise<Built> {
  return { method: 'POST', path: `${prefix(v1)}/order/limit`, body: await limitOrder(w, r, true, v1) };
}

export async function builtStopLimit(w: SignedWorld, r: Rng, v1 = false): Promise<Built> {
  const id = orderId(w, r, v1);
  const instrument = pick(r, INSTR);
  const side = r.pick(SIDE);
  const leverage = pick(r, LEV, 4);
  const quantity = pick(r, QTY);
  const limitPrice = pick(r, PRICE, 2);
  const stopPrice = pick(r, PRICE, 2);
  const signature = await sign(w.bot.wallet, 'New stop-limit order', {
    id, instrument, side, leverage, quantity: units(quantity), limitPrice: units(limitPrice), stopPrice: units(stopPrice), chainId: BigInt(CHAIN_ID),
  });
  return { method: 'POST', path: `${prefix(v1)}/order/stop-limit`, body: tamper({ id, instrument, side, leverage, quantity, limitPrice, stopPrice, chainId: CHAIN_ID, signature }, r) };
}

export async function builtMarket(w: SignedWorld, r: Rng, v1 = false): Promise<Built> {
  const id = orderId(w, r, v1);
  const instrument = pick(r, INSTR);
  const side = r.pick(SIDE);
  const timeInForce = r.pick(['IOC', 'FOK'] as const);
  const leverage = pick(r, LEV, 4);
  const cashQuantity = pick(r, CASH, 2);
  const signature = await sign(w.bot.wallet, 'New market order', {
    id, instrument, side, timeInForce, leverage, cashQuantity: units(cashQuantity), chainId: BigInt(CHAIN_ID),
  });
  return { method: 'POST', path: `${prefix(v1)}/order/market`, body: tamper({ id, instrument, side, timeInForce, leverage, cashQuantity, chainId: CHAIN_ID, signature }, r) };
}

export async function builtMassLimit(w: SignedWorld, r: Rng, v1 = false): Promise<Built> {
  const n = 1 + r.int(r.chance(0.1) ? 25 : 3);
  const items = [];
  // One item at most is tampered with: the schema refuses the whole batch for any bad item.
  for (let i = 0; i < n; i++) items.push(await limitOrder(w, r, i === 0, v1));
  return { method: 'POST', path: `${prefix(v1)}/order/mass-limit/${pick(r, INSTR)}`, body: items };
}

async function replaceItem(w: SignedWorld, r: Rng, orderId: string): Promise<Record<string, unknown>> {
  const quantity = pick(r, QTY);
  const limitPrice = pick(r, ['90000', '89000', ...PRICE], 2);
  const signature = await sign(w.bot.wallet, 'Replace limit order', { orderId, quantity: units(quantity), limitPrice: units(limitPrice) });
  return tamper({ quantity, limitPrice, signature }, r);
}

export async function builtReplace(w: SignedWorld, r: Rng): Promise<Built> {
  const id = w.orderIds(r);
  return { method: 'PUT', path: `/api/order/${id}/limit`, body: await replaceItem(w, r, id) };
}

export async function builtReplaceStop(w: SignedWorld, r: Rng): Promise<Built> {
  const orderId = w.stopOrderIds(r);
  const quantity = pick(r, QTY);
  const limitPrice = pick(r, PRICE, 2);
  const stopPrice = pick(r, PRICE, 2);
  const signature = await sign(w.bot.wallet, 'Replace stop-limit order', { orderId, quantity: units(quantity), limitPrice: units(limitPrice), stopPrice: units(stopPrice) });
  return { method: 'PUT', path: `/api/order/${orderId}/stop-limit`, body: tamper({ quantity, limitPrice, stopPrice, signature }, r) };
}

/** `anyInstrument`: the deprecated PUT /api/order/limit, whose items may be on any instrument. */
export async function builtReplaceBatch(w: SignedWorld, r: Rng, anyInstrument = false): Promise<Built> {
  const n = 1 + r.int(3);
  const items = [];
  for (let i = 0; i < n; i++) {
    const orderId = w.orderIds(r);
    items.push({ orderId, ...(await replaceItem(w, r, orderId)) });
  }
  return { method: 'PUT', path: anyInstrument ? '/api/order/limit' : `/api/order/limit/${pick(r, INSTR)}`, body: items };
}

export async function builtClose(w: SignedWorld, r: Rng, v1 = false): Promise<Built> {
  const id = orderId(w, r, v1);
  const instrument = pick(r, INSTR);
  const leverage = pick(r, LEV, 4);
  const quantity = pick(r, ['0.001', '0', ...QTY], 2);
  const signature = await sign(w.bot.wallet, 'Position close order', { id, instrument, leverage, quantity: units(quantity), chainId: BigInt(CHAIN_ID) });
  return { method: 'POST', path: `${prefix(v1)}/position/${instrument}/close`, body: tamper({ id, quantity, leverage, chainId: CHAIN_ID, signature }, r) };
}

async function tpslBody(w: SignedWorld, r: Rng, instrument: string): Promise<Record<string, unknown>> {
  const type = r.pick(['take-profit', 'stop-loss'] as const);
  const side = r.pick(SIDE);
  const quantity = pick(r, ['0', '0.001', ...QTY], 2);
  const price = pick(r, ['120000', '80000', ...PRICE], 2);
  const signature = await sign(w.bot.wallet, 'New take-profit/stop-loss', { instrument, type, side, quantity: units(quantity), price: units(price) });
  return tamper({ type, side, quantity, price, signature }, r);
}

export async function builtTpslCreate(w: SignedWorld, r: Rng): Promise<Built> {
  const instrument = pick(r, INSTR);
  const order = r.chance(0.3) ? w.orderIds(r) : null;
  return { method: 'POST', path: `/api/tpsl/${instrument}`, body: { ...(await tpslBody(w, r, instrument)), order } };
}

export async function builtTpslModify(w: SignedWorld, r: Rng): Promise<Built> {
  const instrument = pick(r, INSTR);
  return { method: 'PUT', path: `/api/tpsl/${instrument}/${w.tpslIds(r)}`, body: await tpslBody(w, r, instrument) };
}

export async function builtWithdraw(w: SignedWorld, r: Rng): Promise<Built> {
  const recipient = pick(r, RECIPIENTS, 1);
  const amount = pick(r, AMOUNTS, 2);
  const signature = await w.bot.wallet.signTypedData(
    DOMAIN(), { Withdraw: [{ name: 'recipient', type: 'address' }, { name: 'amount', type: 'uint256' }] }, { recipient, amount: units(amount) },
  );
  const body = tamper({ recipient, amount, signature }, r);
  // A recipient that is no address at all cannot be signed: send it with the signature of a real one.
  if (r.chance(0.05)) body.recipient = r.pick(['0x1234', 'not-an-address', '0x' + 'g'.repeat(40), '']);
  return { method: 'POST', path: '/api/transfer/pf/withdraw', body };
}

export async function builtSignUp(w: SignedWorld, r: Rng): Promise<Built> {
  const nonce = r.chance(0.8) ? await w.nonce() : 'abcdefgh12345678';
  const wallet = r.chance(0.7) ? Wallet.createRandom() : w.bot.wallet;
  const fields = r.chance(HOSTILE_P)
    ? r.pick([{ chainId: 1 }, { domain: 'evil.example.com' }, { uri: 'https://evil.example.com' }, { expirationTime: new Date(Date.now() - 1000).toISOString() }, {}])
    : { chainId: Number(CHAIN_ID) };
  const body = (await clientSignIn(wallet as Wallet, nonce, fields)) as unknown as Record<string, unknown>;
  // A nonce the SIWE library would not even write into a message: sent beside a valid one.
  if (r.chance(0.05)) body.nonce = r.pick(['x', '', 'a'.repeat(200)]);
  return { method: 'POST', path: '/auth/user/sign-up', body: tamper(body, r) };
}

export async function builtOauthApprove(w: SignedWorld, r: Rng): Promise<Built> {
  const requestId = await w.consentRequestId();
  const signature = await w.bot.wallet.signTypedData(DOMAIN(), { 'Oauth consent': [{ name: 'oauthRequestId', type: 'string' }] }, { oauthRequestId: requestId });
  return { method: 'POST', path: '/api/oauth/approve', body: tamper({ requestId, signature }, r) };
}

/** Operation (OpenAPI method and path) → builder of a signed request. */
export const SIGNED: Record<string, (w: SignedWorld, r: Rng) => Promise<Built>> = {
  'post /api/v2/order/limit': (w, r) => builtLimit(w, r),
  'post /api/v2/order/stop-limit': (w, r) => builtStopLimit(w, r),
  'post /api/v2/order/market': (w, r) => builtMarket(w, r),
  'post /api/v2/order/mass-limit/{instrument}': (w, r) => builtMassLimit(w, r),
  'post /api/order/limit': (w, r) => builtLimit(w, r, true),
  'post /api/order/stop-limit': (w, r) => builtStopLimit(w, r, true),
  'post /api/order/market': (w, r) => builtMarket(w, r, true),
  'post /api/order/mass-limit/{instrument}': (w, r) => builtMassLimit(w, r, true),
  'post /api/position/{instrument}/close': (w, r) => builtClose(w, r, true),
  'put /api/order/limit': (w, r) => builtReplaceBatch(w, r, true),
  'put /api/order/{orderId}/limit': builtReplace,
  'put /api/order/{orderId}/stop-limit': builtReplaceStop,
  'put /api/order/limit/{instrument}': (w, r) => builtReplaceBatch(w, r),
  'post /api/v2/position/{instrument}/close': (w, r) => builtClose(w, r),
  'post /api/tpsl/{instrument}': builtTpslCreate,
  'put /api/tpsl/{instrument}/{id}': builtTpslModify,
  'post /api/transfer/pf/withdraw': builtWithdraw,
  'post /auth/user/sign-up': builtSignUp,
  'post /api/oauth/approve': builtOauthApprove,
};
