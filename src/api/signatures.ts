/**
 * EIP-712 messages exactly as public clients sign them (docs/api.md, "Signing"; field order matters for the type
 * hash, which the signing module derives from the key order). Decimal amounts enter as round(v, 8) × 1e8
 * (parseMoney half-up is that function; withdrawals round down), computed from the raw client value so
 * the server signs over what the client signed.
 */
import { parseMoney } from '../domain/fixed.js';
import type { UserRecord } from '../auth/types.js';
import { Eip712EncodingError } from '../signing/errors.js';
import type { SignatureVerifier, SignedMessage, SignedType } from '../signing/ports.js';
import { badRequest } from './errors.js';

const SIG_RE = /^(0x)?[0-9a-fA-F]{130}$/;

export const norm = (v: string | number): bigint => parseMoney(v, 'halfUp');

export interface SignedPayload {
  type: SignedType;
  chainId: string;
  message: SignedMessage;
  signature: string;
}

export function limitOrderMessage(b: { id: string; instrument: string; side: string; leverage: number; quantity: string | number; limitPrice: string | number }, chainId: string): SignedMessage {
  return { id: b.id, instrument: b.instrument, side: b.side, leverage: BigInt(b.leverage), quantity: norm(b.quantity), limitPrice: norm(b.limitPrice), chainId: BigInt(chainId) };
}

/**
 * limitOrderMessage for amounts already parsed by the gateway: `parseUnits(v)` is `Number(norm(v))` within
 * safe integers, so BigInt of the parsed units is the signed value exactly, and the hot order path does not
 * parse the two decimals a second time.
 */
export function limitOrderMessageOfUnits(
  b: { id: string; instrument: string; side: string },
  leverage: number, quantityUnits: number, limitPriceUnits: number, chainId: string,
): SignedMessage {
  return { id: b.id, instrument: b.instrument, side: b.side, leverage: BigInt(leverage), quantity: BigInt(quantityUnits), limitPrice: BigInt(limitPriceUnits), chainId: BigInt(chainId) };
}

export function marketOrderMessage(b: { id: string; instrument: string; side: string; timeInForce: string; leverage: number; cashQuantity: string | number }, chainId: string): SignedMessage {
  return { id: b.id, instrument: b.instrument, side: b.side, timeInForce: b.timeInForce, leverage: BigInt(b.leverage), cashQuantity: norm(b.cashQuantity), chainId: BigInt(chainId) };
}

export function stopLimitOrderMessage(
  b: { id: string; instrument: string; side: string; leverage: number; quantity: string | number; limitPrice: string | number; stopPrice: string | number },
  chainId: string,
): SignedMessage {
  return {
    id: b.id, instrument: b.instrument, side: b.side, leverage: BigInt(b.leverage), quantity: norm(b.quantity),
    limitPrice: norm(b.limitPrice), stopPrice: norm(b.stopPrice), chainId: BigInt(chainId),
  };
}

export function positionCloseMessage(b: { id: string; instrument: string; leverage: number; quantity: string | number }, chainId: string): SignedMessage {
  return { id: b.id, instrument: b.instrument, leverage: BigInt(b.leverage), quantity: norm(b.quantity), chainId: BigInt(chainId) };
}

export function tpslMessage(b: { instrument: string; type: string; side: string; quantity: string | number; price: string | number }): SignedMessage {
  return { instrument: b.instrument, type: b.type, side: b.side, quantity: norm(b.quantity), price: norm(b.price) };
}

export function replaceLimitMessage(orderId: string, b: { quantity: string | number; limitPrice: string | number }): SignedMessage {
  return { orderId, quantity: norm(b.quantity), limitPrice: norm(b.limitPrice) };
}

export function replaceStopLimitMessage(orderId: string, b: { quantity: string | number; limitPrice: string | number; stopPrice: string | number }): SignedMessage {
  return { orderId, quantity: norm(b.quantity), limitPrice: norm(b.limitPrice), stopPrice: norm(b.stopPrice) };
}

export function withdrawMessage(recipient: string, amount: string | number): SignedMessage {
  return { recipient, amount: parseMoney(amount, 'down') };
}

// signedBy/requireSignature chain the verifier's promise instead of being async functions: they run once per
// signed request, and each async layer adds a promise and a microtask hop on the event loop.

const prefixed = (signature: string) => (signature.startsWith('0x') ? signature : `0x${signature}`);
const isUser = (user: UserRecord, signer: string | null) => signer !== null && signer.toLowerCase() === user.wallet.toLowerCase();
const BAD_SIGNATURE = 'Invalid signature: it does not recover to your wallet for this request';

/** A value the typed data cannot hold (e.g. leverage 256..300 in the uint8 field) can have no valid signature: a 400 naming the field, not a 500. */
function encodingError(err: unknown): never {
  if (err instanceof Eip712EncodingError) throw badRequest('INVALID_SIGNATURE', `Invalid signature: ${err.message}, so it cannot be signed`);
  throw err;
}

/** True when `signature` recovers to the user's wallet (case-insensitive). */
export function signedBy(verifier: SignatureVerifier, user: UserRecord, p: SignedPayload): Promise<boolean> {
  if (!SIG_RE.test(p.signature)) return Promise.resolve(false);
  return verifier.recover(p.type, p.chainId, p.message, prefixed(p.signature)).then((signer) => isUser(user, signer), encodingError);
}

export function requireSignature(verifier: SignatureVerifier, user: UserRecord, p: SignedPayload): Promise<void> {
  return signedBy(verifier, user, p).then((ok) => {
    if (!ok) throw badRequest('INVALID_SIGNATURE', BAD_SIGNATURE);
  });
}

/**
 * For instructions the engine must apply at most once (withdraw, replace, TpSl): the EIP-712 digest (0x + 64
 * lower-case hex, the verifier's own, not computed again) when the user signed it, else null. The command
 * carries it and the engine refuses a digest it has already spent (engine/spent-signatures.ts).
 */
export function signedDigest(verifier: SignatureVerifier, user: UserRecord, p: SignedPayload): Promise<string | null> {
  if (!SIG_RE.test(p.signature)) return Promise.resolve(null);
  return verifier.recoverWithDigest(p.type, p.chainId, p.message, prefixed(p.signature)).then(
    (r) => (isUser(user, r.signer) ? `0x${Buffer.from(r.digest.buffer, r.digest.byteOffset, 32).toString('hex')}` : null),
    encodingError,
  );
}

export function requireSignedDigest(verifier: SignatureVerifier, user: UserRecord, p: SignedPayload): Promise<string> {
  return signedDigest(verifier, user, p).then((digest) => {
    if (digest === null) throw badRequest('INVALID_SIGNATURE', BAD_SIGNATURE);
    return digest;
  });
}

/** Order and close bodies carry chainId; it must be the server's. */
export function requireChainId(bodyChainId: string | number, serverChainId: string): void {
  if (String(bodyChainId) !== serverChainId) throw badRequest('INVALID_CHAIN_ID', `Invalid chainId: expected ${serverChainId}`);
}
