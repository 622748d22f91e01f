/**
 * EIP-712 digests for the EVEDEX scheme, with the type hashes and domain separators precomputed.
 *
 * The ABI encoding is written by hand on purpose: every field here is a single 32-byte word
 * (string → keccak(utf8), address → left-padded, uintN → big-endian), so the struct is one
 * buffer and one keccak; a generic encoder (ethers' TypedDataEncoder) re-derives the type
 * graph on every call and is several times slower. Tests pin the output to ethers.
 */
import { keccak256 } from './keccak.js';
import { getAddress } from 'ethers';
import { parseMoney } from '../domain/fixed.js';
import { Eip712EncodingError } from './errors.js';
import {
  EIP712_DOMAIN_TYPE,
  EIP712_NAME,
  EIP712_SALT,
  EIP712_VERSION,
  SIGNED_TYPES,
  ALL_SIGNED_TYPES,
  encodeTypeString,
  type Field,
  type FieldType,
} from './eip712-schema.js';
import type { SignedMessage, SignedType } from './ports.js';

export { types, eip712Domain, ethersTypes, SIGNED_TYPES, EIP712_SALT } from './eip712-schema.js';
export { Eip712EncodingError } from './errors.js';

const utf8 = new TextEncoder();

function keccakUtf8(text: string): Uint8Array {
  return keccak256(utf8.encode(text));
}

const TYPE_HASHES: ReadonlyMap<SignedType, Uint8Array> = new Map(
  ALL_SIGNED_TYPES.map((t) => [t, keccakUtf8(encodeTypeString(t))]),
);

const UINT_BITS: Record<Exclude<FieldType, 'string' | 'address'>, bigint> = {
  uint8: 8n,
  uint80: 80n,
  uint96: 96n,
  uint256: 256n,
};

const DECIMAL_INT_RE = /^\d+$/;
const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
// In a `u` regex a surrogate class only matches *unpaired* surrogates, which UTF-8 cannot carry
// (ethers throws on them; TextEncoder would silently substitute U+FFFD and hash something else).
const LONE_SURROGATE_RE = /\p{Surrogate}/u;

/**
 * keccak of enum-like string fields (instrument, side, timeInForce, TpSl type) is memoized: they
 * repeat on almost every order and each keccak is a fixed share of the digest (a fifth with the JS one). Ids
 * are unique per message and are not cached. Bounded; cleared when full.
 */
const UNCACHED_STRING_FIELDS = new Set(['id', 'orderId', 'oauthRequestId']);
const STRING_HASH_CACHE_MAX = 4096;
const stringHashCache = new Map<string, Uint8Array>();

function hashStringField(field: string, value: string): Uint8Array {
  if (UNCACHED_STRING_FIELDS.has(field) || value.length > 64) return keccakUtf8(value);
  let h = stringHashCache.get(value);
  if (!h) {
    if (stringHashCache.size >= STRING_HASH_CACHE_MAX) stringHashCache.clear();
    h = keccakUtf8(value);
    stringHashCache.set(value, h);
  }
  return h;
}

function toUint(field: string, value: unknown): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === 'string' && DECIMAL_INT_RE.test(value)) return BigInt(value);
  throw new Eip712EncodingError(field, `${field}: expected a non-negative integer`);
}

function writeUint(out: Buffer, offset: number, field: string, type: keyof typeof UINT_BITS, raw: unknown): void {
  const v = toUint(field, raw);
  if (v < 0n || v >> UINT_BITS[type] !== 0n) {
    throw new Eip712EncodingError(field, `${field}: value ${v} is out of range for ${type}`);
  }
  const hex = v.toString(16);
  // The word is zero-filled already; write the value right-aligned (hex needs an even length).
  const even = hex.length & 1 ? '0' + hex : hex;
  out.write(even, offset + 32 - even.length / 2, 'hex');
}

function writeField(out: Buffer, offset: number, f: Field, raw: unknown): void {
  if (raw === undefined) throw new Eip712EncodingError(f.name, `${f.name}: missing`);
  switch (f.type) {
    case 'string': {
      if (typeof raw !== 'string') throw new Eip712EncodingError(f.name, `${f.name}: expected a string`);
      if (LONE_SURROGATE_RE.test(raw)) throw new Eip712EncodingError(f.name, `${f.name}: not valid Unicode`);
      out.set(hashStringField(f.name, raw), offset);
      return;
    }
    case 'address': {
      if (typeof raw !== 'string' || !ADDRESS_RE.test(raw)) {
        throw new Eip712EncodingError(f.name, `${f.name}: expected a 0x-prefixed 20-byte address`);
      }
      // Mixed case means an EIP-55 checksum: refuse a wrong one, as the signing client (ethers) does;
      // it catches a mistyped withdrawal recipient.
      if (raw !== raw.toLowerCase() && raw.slice(2) !== raw.slice(2).toUpperCase()) {
        try {
          getAddress(raw);
        } catch {
          throw new Eip712EncodingError(f.name, `${f.name}: bad address checksum`);
        }
      }
      out.write(raw.slice(2), offset + 12, 'hex');
      return;
    }
    default:
      writeUint(out, offset, f.name, f.type, raw);
  }
}

function parseChainId(chainId: string): bigint {
  if (!DECIMAL_INT_RE.test(chainId)) throw new Eip712EncodingError('chainId', 'chainId: expected a decimal integer');
  const v = BigInt(chainId);
  if (v >> 256n !== 0n) throw new Eip712EncodingError('chainId', 'chainId: out of range for uint256');
  return v;
}

const domainSeparators = new Map<string, Uint8Array>();

/** keccak(encodeData(EIP712Domain)) for this chain id; cached, there are only a handful of chains. */
export function domainSeparator(chainId: string): Uint8Array {
  let sep = domainSeparators.get(chainId);
  if (sep) return sep;
  const buf = Buffer.alloc(32 * 5);
  buf.set(keccakUtf8(EIP712_DOMAIN_TYPE), 0);
  buf.set(keccakUtf8(EIP712_NAME), 32);
  buf.set(keccakUtf8(EIP712_VERSION), 64);
  writeUint(buf, 96, 'chainId', 'uint256', parseChainId(chainId));
  buf.write(EIP712_SALT.slice(2), 128, 'hex');
  sep = keccak256(buf);
  if (domainSeparators.size < 64) domainSeparators.set(chainId, sep);
  return sep;
}

/** hashStruct(message) for the primary type. */
export function structHash(type: SignedType, message: SignedMessage): Uint8Array {
  const fields = SIGNED_TYPES[type];
  const typeHash = TYPE_HASHES.get(type);
  if (!fields || !typeHash) throw new Eip712EncodingError('type', `unknown signed type ${JSON.stringify(type)}`);
  const buf = Buffer.alloc(32 * (fields.length + 1));
  buf.set(typeHash, 0);
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    writeField(buf, 32 * (i + 1), f, message[f.name]);
  }
  return keccak256(buf);
}

/** The 32-byte digest a wallet signs: keccak(0x1901 ‖ domainSeparator ‖ hashStruct(message)). */
export function typedDataDigest(type: SignedType, chainId: string, message: SignedMessage): Uint8Array {
  const buf = new Uint8Array(66);
  buf[0] = 0x19;
  buf[1] = 0x01;
  buf.set(domainSeparator(chainId), 2);
  buf.set(structHash(type, message), 34);
  return keccak256(buf);
}

/** A decimal amount as it enters a signed struct: round(v, 8) × 10^8, half-up. */
export function normalizeAmount(v: string | number): bigint {
  return parseMoney(v, 'halfUp');
}
