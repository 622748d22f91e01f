/** EIP-712 signer recovery, on SIGNATURE_THREADS worker threads (0: on the event loop). */
import { createSignatureVerifier } from '../../signing/index.js';
import type { SignatureVerifier } from '../../signing/ports.js';
import type { ExchangeConfig } from '../config.js';
import type { Built } from '../shutdown-registry.js';

export function buildSigning(config: Pick<ExchangeConfig, 'signatureThreads'>): Built<SignatureVerifier> {
  const verifier = createSignatureVerifier({ threads: config.signatureThreads });
  return { service: verifier, stop: () => verifier.close() };
}
