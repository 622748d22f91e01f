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
  } else {
    for (const it of req.items) {
      try {
        results.push(recoverSigner(typedDataDigest(it.type, it.chainId, it.message), it.signature));
      } catch (err) {
        if (!(err instanceof Eip712EncodingError)) throw err;
        results.push({ error: err.message, field: err.field });
      }
    }
  }
  const res: WorkerResponse = { id: req.id, results };
  port.postMessage(res);
});
