/**
 * The load-generator process of the HTTP bench (forked by bench/http.bench.ts, which runs the servers).
 * It pre-signs the order pool (on worker threads, before any measurement) and runs the load stages it is
 * told to over IPC.
 */
import { availableParallelism } from 'node:os';
import { Wallet } from 'ethers';
import { runLoad, getRequest, postJsonRequest, type LoadResult } from './load.js';
import { checkWithEthers, orderSpec, signOrder } from './orders.js';
import { mulberry32 } from '../../src/simulation/seeded-random.js';
import { firstMessage, startTsWorker } from './worker-boot.js';
import type { SignWorkerData } from './sign-worker.js';

export interface Target {
  host: string;
  port: number;
}

export type ToClient =
  | {
      /** Signs `count` more orders and appends them to the pool (wallets: on the first call). */
      type: 'prepare';
      target: Target;
      chainId: string;
      /** `header` = the credential header each request of that wallet carries (Authorization or x-api-key). */
      wallets?: Array<{ privateKey: string; header: [string, string] }>;
      count: number;
      levels: number;
      seed: number;
    }
  | { type: 'probe' }
  | {
      type: 'load';
      id: number;
      target: Target;
      request: { kind: 'get'; path: string } | { kind: 'orders' };
      mode: 'closed' | 'open';
      connections: number;
      rate?: number;
      warmupMs: number;
      durationMs: number;
    }
  | { type: 'exit' };

export type FromClient =
  | { type: 'hello' }
  | { type: 'prepared'; count: number; ms: number; threads: number; poolLeft: number }
  | { type: 'probe'; status: number; body: string }
  | { type: 'window'; id: number; phase: 'start' | 'end' }
  | { type: 'result'; id: number; result: LoadResult; poolLeft: number }
  | { type: 'error'; message: string };

const send = (m: FromClient) => process.send!(m);

/** Pre-built POST /api/v2/order/limit requests, used in order across stages. */
let pool: Buffer[] = [];
let poolNext = 0;

let wallets: Array<{ privateKey: string; header: [string, string] }> = [];

async function prepare(m: Extract<ToClient, { type: 'prepare' }>): Promise<void> {
  const t0 = performance.now();
  if (m.wallets) {
    wallets = m.wallets;
    // Check the signing scheme once against ethers before signing hundreds of thousands of orders.
    const spec = orderSpec(0, m.levels, mulberry32(1));
    const key = wallets[0].privateKey;
    checkWithEthers(spec, m.chainId, signOrder(spec, m.chainId, Buffer.from(key.slice(2), 'hex')), new Wallet(key).address);
  }
  const keys = wallets.map((w) => w.privateKey);
  const base = pool.length; // order i is signed by wallet i % wallets and sent with that wallet's token
  const threads = Math.max(1, availableParallelism());
  const per = Math.ceil(m.count / threads);
  const parts = await Promise.all(
    Array.from({ length: threads }, (_, t) => {
      const data: SignWorkerData = {
        chainId: m.chainId,
        privateKeys: keys,
        from: base + t * per,
        to: base + Math.min(m.count, (t + 1) * per),
        levels: m.levels,
        seed: m.seed * 1000 + t,
      };
      const w = startTsWorker(new URL('./sign-worker.ts', import.meta.url), data);
      return firstMessage<string[]>(w).finally(() => void w.terminate());
    }),
  );
  const headers = wallets.map((w) => ({ [w.header[0]]: w.header[1] }));
  for (const part of parts) {
    for (const body of part) {
      pool.push(postJsonRequest(m.target.host, m.target.port, '/api/v2/order/limit', body, headers[pool.length % headers.length]));
    }
  }
  send({ type: 'prepared', count: m.count, ms: performance.now() - t0, threads, poolLeft: pool.length - poolNext });
}

/** Sends the next pooled order alone (raw socket, same bytes as under load) and returns the answer. */
async function probe(target: Target): Promise<void> {
  const req = pool[poolNext++];
  const net = await import('node:net');
  const answer = await new Promise<string>((resolve, reject) => {
    const s = net.connect(target.port, target.host, () => s.write(req));
    let data = '';
    s.on('data', (d) => {
      data += d.toString('utf8');
      const he = data.indexOf('\r\n\r\n');
      const m = /\r\ncontent-length:\s*(\d+)/i.exec(data.slice(0, he));
      if (he >= 0 && m && Buffer.byteLength(data.slice(he + 4)) >= Number(m[1])) {
        s.destroy();
        resolve(data);
      }
    });
    s.on('error', reject);
    setTimeout(() => reject(new Error('probe timed out')), 10_000).unref();
  });
  const status = Number(answer.slice(9, 12));
  send({ type: 'probe', status, body: answer.slice(answer.indexOf('\r\n\r\n') + 4) });
}

async function load(m: Extract<ToClient, { type: 'load' }>): Promise<void> {
  let next: () => Buffer | null;
  if (m.request.kind === 'get') {
    const req = getRequest(m.target.host, m.target.port, m.request.path);
    next = () => req;
  } else {
    next = () => (poolNext < pool.length ? pool[poolNext++] : null);
  }
  const result = await runLoad({
    host: m.target.host,
    port: m.target.port,
    connections: m.connections,
    mode: m.mode,
    rate: m.rate,
    warmupMs: m.warmupMs,
    durationMs: m.durationMs,
    next,
    onWindow: (phase) => send({ type: 'window', id: m.id, phase }),
  });
  send({ type: 'result', id: m.id, result, poolLeft: pool.length - poolNext });
}

export function runClientProcess(): void {
  process.on('message', (m: ToClient) => {
    const run = async () => {
      if (m.type === 'prepare') await prepare(m);
      else if (m.type === 'probe') await probe(lastTarget!);
      else if (m.type === 'load') await load(m);
      else if (m.type === 'exit') process.exit(0);
    };
    if (m.type === 'prepare') lastTarget = m.target;
    run().catch((err: unknown) => send({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) }));
  });
  process.on('disconnect', () => process.exit(0));
  send({ type: 'hello' });
}

let lastTarget: Target | undefined;
