/**
 * Signed request bodies, built with the server's own EIP-712 schema module (src/signing/eip712-schema.ts):
 * the same domain, primary types and field order; amounts integer-normalized as round(v, 8) × 10^8.
 */
import { eip712Domain, types } from '../../../src/signing/eip712-schema.js';
import type { SignedType } from '../../../src/signing/ports.js';
import { parseMoney } from '../../../src/domain/fixed.js';

export interface TypedDataSigner {
  address: string;
  signTypedData(domain: Record<string, unknown>, types: Record<string, Array<{ name: string; type: string }>>, value: Record<string, unknown>): Promise<string>;
  signMessage(message: string): Promise<string>;
}

export type Side = 'BUY' | 'SELL';

/** round(v, 8) × 10^8 as a decimal integer string. */
export const int8 = (v: string): string => parseMoney(v).toString();

/** Version 2 order id: whole UTC days since 2025-07-24, 5 digits, ':' + 26 hex of a random UUID. */
export function newOrderId(now = Date.now()): string {
  const day = Math.floor((now - Date.UTC(2025, 6, 24)) / 86_400_000);
  return `${String(day).padStart(5, '0')}:${crypto.randomUUID().replace(/-/g, '').slice(0, 26)}`;
}

export function sign(signer: TypedDataSigner, chainId: string, type: SignedType, value: Record<string, unknown>): Promise<string> {
  return signer.signTypedData(eip712Domain(chainId), types[type], value);
}

export interface TpSlInput { type: 'take-profit' | 'stop-loss'; side: Side; quantity: string; price: string }

export async function limitBody(s: TypedDataSigner, chainId: string, o: {
  instrument: string; side: Side; leverage: number; quantity: string; limitPrice: string; timeInForce: string; postOnly: boolean; tpsl?: TpSlInput[];
}) {
  const id = newOrderId();
  const signature = await sign(s, chainId, 'New limit order', {
    id, instrument: o.instrument, side: o.side, leverage: o.leverage, quantity: int8(o.quantity), limitPrice: int8(o.limitPrice), chainId,
  });
  return {
    id, instrument: o.instrument, side: o.side, leverage: o.leverage, quantity: o.quantity, limitPrice: o.limitPrice,
    timeInForce: o.timeInForce, ...(o.postOnly ? { postOnly: 'yes' } : {}), ...(o.tpsl?.length ? { tpsl: o.tpsl } : {}), signature, chainId,
  };
}

export async function marketBody(s: TypedDataSigner, chainId: string, o: {
  instrument: string; side: Side; leverage: number; cashQuantity: string; timeInForce: 'IOC' | 'FOK'; tpsl?: TpSlInput[];
}) {
  const id = newOrderId();
  const signature = await sign(s, chainId, 'New market order', {
    id, instrument: o.instrument, side: o.side, timeInForce: o.timeInForce, leverage: o.leverage, cashQuantity: int8(o.cashQuantity), chainId,
  });
  return {
    id, instrument: o.instrument, side: o.side, leverage: o.leverage, cashQuantity: o.cashQuantity, timeInForce: o.timeInForce,
    ...(o.tpsl?.length ? { tpsl: o.tpsl } : {}), signature, chainId,
  };
}

export async function stopLimitBody(s: TypedDataSigner, chainId: string, o: {
  instrument: string; side: Side; leverage: number; quantity: string; limitPrice: string; stopPrice: string; tpsl?: TpSlInput[];
}) {
  const id = newOrderId();
  const signature = await sign(s, chainId, 'New stop-limit order', {
    id, instrument: o.instrument, side: o.side, leverage: o.leverage, quantity: int8(o.quantity), limitPrice: int8(o.limitPrice),
    stopPrice: int8(o.stopPrice), chainId,
  });
  return {
    id, instrument: o.instrument, side: o.side, leverage: o.leverage, quantity: o.quantity, limitPrice: o.limitPrice, stopPrice: o.stopPrice,
    ...(o.tpsl?.length ? { tpsl: o.tpsl } : {}), signature, chainId,
  };
}

export async function closeBody(s: TypedDataSigner, chainId: string, o: { instrument: string; leverage: number; quantity: string }) {
  const id = newOrderId();
  const signature = await sign(s, chainId, 'Position close order', { id, instrument: o.instrument, leverage: o.leverage, quantity: int8(o.quantity), chainId });
  return { id, quantity: o.quantity, leverage: o.leverage, signature, chainId };
}

export async function replaceBody(s: TypedDataSigner, chainId: string, o: { orderId: string; quantity: string; limitPrice: string }) {
  const signature = await sign(s, chainId, 'Replace limit order', { orderId: o.orderId, quantity: int8(o.quantity), limitPrice: int8(o.limitPrice) });
  return { quantity: o.quantity, limitPrice: o.limitPrice, signature };
}

export async function tpslBody(s: TypedDataSigner, chainId: string, instrument: string, t: TpSlInput) {
  const signature = await sign(s, chainId, 'New take-profit/stop-loss', {
    instrument, type: t.type, side: t.side, quantity: int8(t.quantity), price: int8(t.price),
  });
  return { ...t, order: null, signature };
}

export async function withdrawBody(s: TypedDataSigner, chainId: string, recipient: string, amount: string) {
  const units = parseMoney(amount, 'down');
  const signature = await sign(s, chainId, 'Withdraw', { recipient, amount: units.toString() });
  return { recipient, amount, currency: 'usdt', signature };
}
