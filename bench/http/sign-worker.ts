/**
 * Pre-signing worker (load-generator process): signs a slice of the order pool and returns the request
 * bodies. Orders are spread round-robin over the wallets (order i belongs to wallet i % wallets).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { orderBody, orderSpec, signOrder } from './orders.js';
import { mulberry32 } from '../../src/simulation/seeded-random.js';

export interface SignWorkerData {
  chainId: string;
  privateKeys: string[];
  from: number;
  to: number;
  levels: number;
  seed: number;
}

const d = workerData as SignWorkerData;
const keys = d.privateKeys.map((k) => Buffer.from(k.replace(/^0x/, ''), 'hex'));
const rnd = mulberry32(d.seed);
const bodies: string[] = new Array(d.to - d.from);
const now = Date.now();
for (let i = d.from; i < d.to; i++) {
  const spec = orderSpec(i, d.levels, rnd, now);
  bodies[i - d.from] = orderBody(spec, d.chainId, signOrder(spec, d.chainId, keys[i % keys.length]));
}
parentPort!.postMessage(bodies);
