/**
 * Pre-signed limit orders for the HTTP bench: EIP-712 digest from src/signing (the same encoder the
 * server checks against) and a native secp256k1 signature (ethers' signTypedData would take minutes for
 * a few hundred thousand orders). `checkWithEthers` proves the signatures are what a wallet would make.
 */
import { randomBytes } from 'node:crypto';
import { verifyTypedData } from 'ethers';
import { orderIdPrefix } from '../../src/domain/order-id.js';
import { eip712Domain, typedDataDigest, types } from '../../src/signing/eip712.js';
import { secp256k1 } from '../../src/signing/secp256k1-backend.js';
import type { SignedMessage } from '../../src/signing/ports.js';
import { mulberry32 } from '../../src/simulation/seeded-random.js';

export const INSTRUMENT = 'BTCUSDT';
/** Demo start price of BTCUSDT in tenths (price increment 0.1): 100000.0 */
export const MID_TENTHS = 1_000_000;
export const QUANTITY = '0.0001'; // minimum quantity; notional ≈ 10 USDT ≥ minVolume 1
export const QUANTITY_UNITS = 10_000n; // 0.0001 × 1e8
export const LEVERAGE = 10;

export interface OrderSpec {
  id: string;
  side: 'BUY' | 'SELL';
  /** price in tenths of USDT */
  tenths: number;
}

/** `levels` price levels on each side next to the mid; buys below, sells above, so nothing crosses. */
export function orderSpec(i: number, levels: number, rnd: () => number, now = Date.now()): OrderSpec {
  const side = i % 2 === 0 ? 'BUY' : 'SELL';
  const off = 1 + Math.floor(rnd() * levels);
  return {
    id: `${orderIdPrefix(now)}:${randomBytes(13).toString('hex')}`,
    side,
    tenths: side === 'BUY' ? MID_TENTHS - off : MID_TENTHS + off,
  };
}

export function priceString(tenths: number): string {
  return `${Math.floor(tenths / 10)}.${tenths % 10}`;
}

export function orderMessage(o: OrderSpec, chainId: string): SignedMessage {
  return {
    id: o.id,
    instrument: INSTRUMENT,
    side: o.side,
    leverage: BigInt(LEVERAGE),
    quantity: QUANTITY_UNITS,
    limitPrice: BigInt(o.tenths) * 10_000_000n,
    chainId: BigInt(chainId),
  };
}

/** 65-byte r‖s‖v hex signature (v = 27/28) over the EIP-712 digest. */
export function signDigest(digest: Uint8Array, privateKey: Uint8Array): string {
  const { signature, recid } = secp256k1.ecdsaSign(digest, privateKey);
  return '0x' + Buffer.from(signature).toString('hex') + (27 + recid).toString(16);
}

export function signOrder(o: OrderSpec, chainId: string, privateKey: Uint8Array): string {
  return signDigest(typedDataDigest('New limit order', chainId, orderMessage(o, chainId)), privateKey);
}

/** The JSON body of POST /api/v2/order/limit (docs/api.md, "Signing"). */
export function orderBody(o: OrderSpec, chainId: string, signature: string): string {
  return JSON.stringify({
    id: o.id,
    instrument: INSTRUMENT,
    side: o.side,
    timeInForce: 'GTC',
    leverage: LEVERAGE,
    quantity: QUANTITY,
    limitPrice: priceString(o.tenths),
    chainId,
    signature,
  });
}

/** ethers' own verifier must recover the same address (guards the hand-made signing above). */
export function checkWithEthers(o: OrderSpec, chainId: string, signature: string, address: string): void {
  const recovered = verifyTypedData(eip712Domain(chainId), types['New limit order'], orderMessage(o, chainId), signature);
  if (recovered.toLowerCase() !== address.toLowerCase()) {
    throw new Error(`pre-signed order does not verify with ethers: ${recovered} != ${address}`);
  }
}

