/**
 * The EVEDEX EIP-712 schema, as public clients sign it (docs/api.md, "Signing").
 * Field order matters: it is part of the type hash, so it must stay exactly as the public clients have it.
 */
import type { SignedType } from './ports.js';

export type FieldType = 'string' | 'address' | 'uint8' | 'uint80' | 'uint96' | 'uint256';

export interface Field {
  name: string;
  type: FieldType;
}

export const EIP712_NAME = 'EVEDEX';
export const EIP712_VERSION = '2';
export const EIP712_SALT = '0x5792f7333c35db190e30acc144f049fd15b24f552c0010b8b3e06f9105c37c5a';

export const EIP712_DOMAIN_TYPE = 'EIP712Domain(string name,string version,uint256 chainId,bytes32 salt)';

export const SIGNED_TYPES: Readonly<Record<SignedType, readonly Field[]>> = {
  'New limit order': [
    { name: 'id', type: 'string' },
    { name: 'instrument', type: 'string' },
    { name: 'side', type: 'string' },
    { name: 'leverage', type: 'uint8' },
    { name: 'quantity', type: 'uint96' },
    { name: 'limitPrice', type: 'uint80' },
    { name: 'chainId', type: 'uint256' },
  ],
  'New market order': [
    { name: 'id', type: 'string' },
    { name: 'instrument', type: 'string' },
    { name: 'side', type: 'string' },
    { name: 'timeInForce', type: 'string' },
    { name: 'leverage', type: 'uint8' },
    { name: 'cashQuantity', type: 'uint96' },
    { name: 'chainId', type: 'uint256' },
  ],
  'New stop-limit order': [
    { name: 'id', type: 'string' },
    { name: 'instrument', type: 'string' },
    { name: 'side', type: 'string' },
    { name: 'leverage', type: 'uint8' },
    { name: 'quantity', type: 'uint96' },
    { name: 'limitPrice', type: 'uint80' },
    { name: 'stopPrice', type: 'uint80' },
    { name: 'chainId', type: 'uint256' },
  ],
  'Position close order': [
    { name: 'id', type: 'string' },
    { name: 'instrument', type: 'string' },
    { name: 'leverage', type: 'uint8' },
    { name: 'quantity', type: 'uint96' },
    { name: 'chainId', type: 'uint256' },
  ],
  'New take-profit/stop-loss': [
    { name: 'instrument', type: 'string' },
    { name: 'type', type: 'string' },
    { name: 'side', type: 'string' },
    { name: 'quantity', type: 'uint96' },
    { name: 'price', type: 'uint80' },
  ],
  'Replace limit order': [
    { name: 'orderId', type: 'string' },
    { name: 'quantity', type: 'uint96' },
    { name: 'limitPrice', type: 'uint80' },
  ],
  'Replace stop-limit order': [
    { name: 'orderId', type: 'string' },
    { name: 'quantity', type: 'uint96' },
    { name: 'limitPrice', type: 'uint80' },
    { name: 'stopPrice', type: 'uint80' },
  ],
  Withdraw: [
    { name: 'recipient', type: 'address' },
    { name: 'amount', type: 'uint256' },
  ],
  'Oauth consent': [{ name: 'oauthRequestId', type: 'string' }],
};

export const ALL_SIGNED_TYPES = Object.keys(SIGNED_TYPES) as SignedType[];

/** `Name(type1 name1,type2 name2,...)` — the string whose keccak is the type hash. */
export function encodeTypeString(type: SignedType): string {
  return `${type}(${SIGNED_TYPES[type].map((f) => `${f.type} ${f.name}`).join(',')})`;
}

/** ethers v6 `types` argument (`wallet.signTypedData(domain, types, value)`), one per primary type. */
export function ethersTypes(type: SignedType): Record<string, Array<{ name: string; type: string }>> {
  return { [type]: SIGNED_TYPES[type].map((f) => ({ name: f.name, type: f.type })) };
}

/** Same as `ethersTypes`, precomputed for every primary type. */
export const types: Readonly<Record<SignedType, Record<string, Array<{ name: string; type: string }>>>> =
  Object.fromEntries(ALL_SIGNED_TYPES.map((t) => [t, ethersTypes(t)])) as Record<
    SignedType,
    Record<string, Array<{ name: string; type: string }>>
  >;

/** ethers-compatible domain object (`TypedDataDomain`). */
export function eip712Domain(chainId: string): { name: string; version: string; chainId: string; salt: string } {
  return { name: EIP712_NAME, version: EIP712_VERSION, chainId, salt: EIP712_SALT };
}
