/**
 * Stage 1 worker: EIP-712 digest + native secp256k1 recovery in a tight loop, the same two calls the
 * server's recover-worker makes per order (typedDataDigest + recoverSigner). Per-op times are recorded.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { typedDataDigest } from '../../src/signing/eip712.js';
import { recoverSigner } from '../../src/signing/recover.js';
import type { SignedMessage } from '../../src/signing/ports.js';

export interface CeilingWorkerData {
  chainId: string;
  samples: Array<{ message: SignedMessage; signature: string }>;
  address: string;
  warmupMs: number;
  durationMs: number;
}
export interface CeilingWorkerResult {
  ops: number;
  elapsedMs: number;
  latencies: Float64Array;
  cpuMs: number;
}

const port = parentPort!;
const d = workerData as CeilingWorkerData;

function verifyOne(i: number): string | null {
  const s = d.samples[i % d.samples.length];
  return recoverSigner(typedDataDigest('New limit order', d.chainId, s.message), s.signature);
}

for (let i = 0; i < d.samples.length; i++) {
  if (verifyOne(i) !== d.address) throw new Error(`sample ${i} does not recover to ${d.address}`);
}
port.postMessage({ type: 'ready' });

port.once('message', () => {
  let i = 0;
  const warmEnd = performance.now() + d.warmupMs;
  while (performance.now() < warmEnd) verifyOne(i++);
  let lat = new Float64Array(1 << 16);
  let n = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + d.durationMs;
  let now = t0;
  while (now < end) {
    const s = now;
    verifyOne(i++);
    now = performance.now();
    if (n === lat.length) {
      const next = new Float64Array(lat.length * 2);
      next.set(lat);
      lat = next;
    }
    lat[n++] = now - s;
  }
  const cpu = process.cpuUsage(cpu0); // process-wide; only indicative inside a worker
  const latencies = lat.slice(0, n);
  const res: CeilingWorkerResult = { ops: n, elapsedMs: now - t0, latencies, cpuMs: (cpu.user + cpu.system) / 1000 };
  port.postMessage(res, [latencies.buffer]);
});
