/** The signature layer's port and its vocabulary (the signed types: docs/api.md, "Signing"). */

export type SignedType =
  | 'New limit order'
  | 'New market order'
  | 'New stop-limit order'
  | 'Position close order'
  | 'New take-profit/stop-loss'
  | 'Replace limit order'
  | 'Replace stop-limit order'
  | 'Withdraw'
  | 'Oauth consent';

/**
 * Message values: strings for `string`/`address` fields, bigint for uint fields (already
 * integer-normalized: round(v, 8) × 10^8 for decimal amounts; leverage as-is; chainId as-is).
 */
export type SignedMessage = Record<string, string | bigint>;

/** A recovery together with the EIP-712 digest it was checked against. */
export interface Recovered {
  /** Lower-case 0x address, or null when the signature is malformed/invalid. */
  signer: string | null;
  /** The 32-byte digest the wallet signed (what the engine spends a signed instruction under). */
  digest: Uint8Array;
}

export interface SignatureVerifier {
  /** Returns the lower-case 0x address that signed, or null when the signature is malformed/invalid. */
  recover(type: SignedType, chainId: string, message: SignedMessage, signature: string): Promise<string | null>;
  /** recover, also returning the digest it computed for the recovery (so nobody computes it a second time). */
  recoverWithDigest(type: SignedType, chainId: string, message: SignedMessage, signature: string): Promise<Recovered>;
  close(): Promise<void>;
}
