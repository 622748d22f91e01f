/** worker_threads entry: recovers signers for batches sent by the verifier pool (verifier.ts). */
import { parentPort } from 'node:worker_threads';
import { recoverSigner } from './recover.js';
import { typedDataDigest } from './eip712.js';
import { Eip712EncodingError } from './errors.js';
import type { WorkerRequest, WorkerResponse } from './worker-protocol.js';
import { lowerThreadPriority } from '../workers/thread-priority.js';
import { nameThread } from '../workers/thread-name.js';

if (!parentPort) throw new Error('recover-worker must run in a worker thread');
const port = parentPort;
nameThread('perpx-signature');
lowerThreadPriority(); // parallel capacity: must not preempt the event loop (see thread-priority.ts)

port.on('message', (req: WorkerRequest) => {
  const results: WorkerResponse['results'] = [];
  if (req.kind === 'digests') {
    for (let i = 0; i < req.signatures.length; i++) {
      results.push(recoverSigner(req.digests.subarray(i * 32, i * 32 + 32), req.signatures[i]));
    }
    port.postMessage({ id: req.id, results } satisfies WorkerResponse);
    return;
  }
  // The digests go back too (one transferred buffer): replay protection keys on them, and the main thread
  // would otherwise compute each one again.
  const digests = new Uint8Array(req.items.length * 32);
  req.items.forEach((it, i) => {
    try {
      const digest = typedDataDigest(it.type, it.chainId, it.message);
      digests.set(digest, i * 32);
      results.push(recoverSigner(digest, it.signature));
    } catch (err) {
      if (!(err instanceof Eip712EncodingError)) throw err;
      results.push({ error: err.message, field: err.field });
    }
  });
  port.postMessage({ id: req.id, results, digests } satisfies WorkerResponse, [digests.buffer]);
});
