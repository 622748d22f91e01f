/**
 * Signer recovery for 65-byte (r ‖ s ‖ v) secp256k1 signatures, on the native libsecp256k1.
 *
 * Acceptance matches `ethers.verifyTypedData` / `ethers.verifyMessage` for 65-byte signatures:
 * - hex with a `0x` prefix (digits in either case), exactly 65 bytes;
 * - v ∈ {27, 28} or {0, 1};
 * - s below 2^255 (ethers' "non-canonical s" guard); r and s non-zero and below the curve order.
 * Deliberately narrower than ethers: 64-byte EIP-2098 compact signatures and EIP-155-style
 * v ≥ 35 (a transaction encoding) are refused; public clients send 65 bytes with v = 27/28 (docs/api.md).
 */
import { keccak256 } from './keccak.js';
import { secp256k1 } from './secp256k1-backend.js';

const SIGNATURE_RE = /^0x[0-9a-f]{130}$/i;
const utf8 = new TextEncoder();

/** Splits and checks a signature; null when ethers would refuse it (or it is not 65 bytes). */
export function parseSignature(signatureHex: string): { rs: Uint8Array; recid: number } | null {
  if (typeof signatureHex !== 'string' || !SIGNATURE_RE.test(signatureHex)) return null;
  const bytes = Buffer.from(signatureHex.slice(2), 'hex');
  const v = bytes[64];
  let recid: number;
  if (v === 27 || v === 28) recid = v - 27;
  else if (v === 0 || v === 1) recid = v;
  else return null;
  if (bytes[32] >= 0x80) return null;
  return { rs: bytes.subarray(0, 64), recid };
}

/** Lower-case 0x address of the key that produced `signatureHex` over `digest`, or null. */
export function recoverSigner(digest: Uint8Array, signatureHex: string): string | null {
  if (!(digest instanceof Uint8Array) || digest.length !== 32) return null;
  const sig = parseSignature(signatureHex);
  if (!sig) return null;
  let pub: Uint8Array;
  try {
    pub = secp256k1.ecdsaRecover(sig.rs, sig.recid, digest, false);
  } catch {
    // r or s zero / above the curve order, or no point for this r: not a signature.
    return null;
  }
  return '0x' + Buffer.from(keccak256(pub.subarray(1))).subarray(12).toString('hex');
}

/** EIP-191 personal_sign digest: keccak("\x19Ethereum Signed Message:\n" + byteLength + message). */
export function personalMessageDigest(message: string): Uint8Array {
  const body = utf8.encode(message);
  const prefix = utf8.encode(`\x19Ethereum Signed Message:\n${body.length}`);
  const buf = new Uint8Array(prefix.length + body.length);
  buf.set(prefix, 0);
  buf.set(body, prefix.length);
  return keccak256(buf);
}
