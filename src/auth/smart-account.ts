/**
 * The `smartAccountAddress` shown for a user. There is no account-abstraction factory behind
 * this self-hosted exchange, so the address is a stable, documented derivation of the wallet:
 * the last 20 bytes of keccak256("perpx.smart-account.v1" ‖ wallet as 20 bytes), EIP-55 cased.
 * It identifies the user's trading account; it is not a contract anyone can call.
 */
import { keccak_256 } from '@noble/hashes/sha3';
import { getAddress } from 'ethers';

const TAG = new TextEncoder().encode('perpx.smart-account.v1');

export function deriveSmartAccountAddress(wallet: string): string {
  const input = new Uint8Array(TAG.length + 20);
  input.set(TAG, 0);
  input.set(Buffer.from(wallet.slice(2), 'hex'), TAG.length);
  return getAddress('0x' + Buffer.from(keccak_256(input)).subarray(12).toString('hex'));
}
