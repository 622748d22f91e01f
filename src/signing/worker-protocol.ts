/** Messages between the verifier pool (main thread) and recover-worker. */
import type { SignedMessage, SignedType } from './ports.js';

/** Digests computed on the main thread: `digests` holds n × 32 bytes, transferred (not copied). */
export interface DigestBatch {
  id: number;
  kind: 'digests';
  digests: Uint8Array;
  signatures: string[];
}

/** Typed-data items; the worker computes the digests itself (the default, see verifier.ts). */
export interface TypedBatch {
  id: number;
  kind: 'typed';
  items: Array<{ type: SignedType; chainId: string; message: SignedMessage; signature: string }>;
}

export type WorkerRequest = DigestBatch | TypedBatch;

/** One entry per item: the address, null (bad signature) or an error message (unencodable message). */
export interface WorkerResponse {
  id: number;
  results: Array<string | null | { error: string; field: string }>;
  /** Typed batches: the digest the worker computed for each item, n × 32 bytes (zeros for an unencodable one). */
  digests?: Uint8Array;
}
