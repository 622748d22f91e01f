/** Public surface of the signing module. */
export {
  typedDataDigest,
  normalizeAmount,
  eip712Domain,
  types,
  ethersTypes,
  domainSeparator,
  structHash,
  SIGNED_TYPES,
  EIP712_SALT,
  Eip712EncodingError,
} from './eip712.js';
export { recoverSigner, personalMessageDigest, parseSignature } from './recover.js';
export { createSignatureVerifier, type SignatureVerifierOptions } from './verifier.js';
export { secp256k1Backend } from './secp256k1-backend.js';
export { keccak256, keccakBackend } from './keccak.js';
export type { SignedType, SignedMessage, SignatureVerifier, Recovered } from './ports.js';
