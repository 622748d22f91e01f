/**
 * Starts a worker thread on a .ts entry under tsx (same bootstrap as src/signing/verifier.ts: on Node 20
 * `execArgv: ['--import', 'tsx']` does not work for a .ts worker entry, so tsx is registered first).
 */
import { Worker } from 'node:worker_threads';

export function startTsWorker(entry: URL, workerData: unknown): Worker {
  if (!entry.href.endsWith('.ts')) return new Worker(entry, { workerData });
  const boot = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(boot, { eval: true, workerData });
}

/** Resolves with the worker's first message; rejects if it errors or exits before that. */
export function firstMessage<T>(w: Worker): Promise<T> {
  return new Promise((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
    w.once('exit', (code) => reject(new Error(`worker exited with code ${code} before answering`)));
  });
}
