/**
 * SignatureVerifier: in-process (threads = 0) or a worker_threads pool.
 *
 * Requests that arrive in the same event-loop turn are collected and sent as batches (one
 * postMessage per worker instead of one per signature). By default the worker also computes the
 * EIP-712 digest, which costs about as much as the recovery itself: on the main thread it would keep
 * a large share of the work on the event loop (docs/performance.md, "Signature verification").
 * `digestOn: 'main'` (only 32-byte digests travel, in one transferred buffer) stays available for
 * machines where that balance differs.
 */
import type { Worker } from 'node:worker_threads';
import { typedDataDigest } from './eip712.js';
import { Eip712EncodingError } from './errors.js';
import { recoverSigner } from './recover.js';
import type { Recovered, SignatureVerifier, SignedMessage, SignedType } from './ports.js';
import type { WorkerRequest, WorkerResponse } from './worker-protocol.js';
import { startSiblingWorker } from '../workers/start-worker.js';

export interface SignatureVerifierOptions {
  /** 0 → recover on the calling thread; N → a pool of N worker threads. */
  threads: number;
  /** Where the EIP-712 digest is computed when a pool is used. Default 'worker' (faster, see above). */
  digestOn?: 'main' | 'worker';
}

export function createSignatureVerifier(opts: SignatureVerifierOptions): SignatureVerifier {
  const threads = Math.max(0, Math.floor(opts.threads));
  if (threads === 0) return new InProcessVerifier();
  return new WorkerPoolVerifier(threads, opts.digestOn ?? 'worker');
}

/** Recovers synchronously; the promise is only for the shared interface. */
class InProcessVerifier implements SignatureVerifier {
  private closed = false;

  async recover(type: SignedType, chainId: string, message: SignedMessage, signature: string): Promise<string | null> {
    if (this.closed) throw new Error('signature verifier is closed');
    return recoverSigner(typedDataDigest(type, chainId, message), signature);
  }

  async recoverWithDigest(type: SignedType, chainId: string, message: SignedMessage, signature: string): Promise<Recovered> {
    if (this.closed) throw new Error('signature verifier is closed');
    const digest = typedDataDigest(type, chainId, message);
    return { signer: recoverSigner(digest, signature), digest };
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

interface Job {
  type: SignedType;
  chainId: string;
  message: SignedMessage;
  signature: string;
  digest: Uint8Array | null;
  /** recoverWithDigest's job: resolves with a Recovered; recover's with the address alone (no extra promise per order). */
  withDigest: boolean;
  resolve: (result: string | null | Recovered) => void;
  reject: (err: Error) => void;
}

interface PoolWorker {
  worker: Worker;
  /** jobs sent and not yet answered (for load balancing and ref/unref) */
  inflight: number;
  batches: Map<number, Job[]>;
}

/** Below this many items a batch is not split across workers: a postMessage costs about one recovery. */
const MIN_CHUNK = 16;

class WorkerPoolVerifier implements SignatureVerifier {
  private readonly workers: PoolWorker[] = [];
  private queue: Job[] = [];
  private flushScheduled = false;
  private nextBatchId = 1;
  private closed = false;

  constructor(
    private readonly size: number,
    private readonly digestOn: 'main' | 'worker',
  ) {
    for (let i = 0; i < size; i++) this.workers.push(this.spawn());
  }

  recover(type: SignedType, chainId: string, message: SignedMessage, signature: string): Promise<string | null> {
    return this.enqueue(type, chainId, message, signature, false) as Promise<string | null>;
  }

  recoverWithDigest(type: SignedType, chainId: string, message: SignedMessage, signature: string): Promise<Recovered> {
    return this.enqueue(type, chainId, message, signature, true) as Promise<Recovered>;
  }

  private enqueue(type: SignedType, chainId: string, message: SignedMessage, signature: string, withDigest: boolean): Promise<string | null | Recovered> {
    if (this.closed) return Promise.reject(new Error('signature verifier is closed'));
    let digest: Uint8Array | null = null;
    if (this.digestOn === 'main') {
      try {
        digest = typedDataDigest(type, chainId, message);
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ type, chainId, message, signature, digest, withDigest, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        // setImmediate (not a microtask) so requests parsed in the same poll phase share a batch.
        setImmediate(() => this.flush());
      }
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const closing = new Error('signature verifier is closed');
    for (const job of this.queue) job.reject(closing);
    this.queue = [];
    await Promise.all(
      this.workers.map(async (pw) => {
        this.failBatches(pw, closing);
        await pw.worker.terminate();
      }),
    );
  }

  private spawn(): PoolWorker {
    const worker = startSiblingWorker(import.meta.url, 'recover-worker');
    const pw: PoolWorker = { worker, inflight: 0, batches: new Map() };
    worker.unref(); // an idle pool must not keep the process alive; ref'd while work is in flight
    worker.on('message', (res: WorkerResponse) => this.onResult(pw, res));
    worker.on('error', (err) => this.replace(pw, err));
    worker.on('exit', (code) => {
      if (!this.closed) this.replace(pw, new Error(`signature worker exited with code ${code}`));
    });
    return pw;
  }

  /** A crashed worker fails its in-flight jobs and is replaced, so one bad batch does not shrink the pool. */
  private replace(pw: PoolWorker, err: Error): void {
    const idx = this.workers.indexOf(pw);
    this.failBatches(pw, err);
    if (idx < 0 || this.closed) return;
    void pw.worker.terminate();
    this.workers[idx] = this.spawn();
  }

  private failBatches(pw: PoolWorker, err: Error): void {
    for (const jobs of pw.batches.values()) for (const job of jobs) job.reject(err);
    pw.batches.clear();
    pw.inflight = 0;
  }

  private flush(): void {
    this.flushScheduled = false;
    const jobs = this.queue;
    this.queue = [];
    if (jobs.length === 0 || this.closed) return;
    const chunks = Math.max(1, Math.min(this.size, Math.ceil(jobs.length / MIN_CHUNK)));
    const per = Math.ceil(jobs.length / chunks);
    // Least-loaded workers first.
    const order = [...this.workers].sort((a, b) => a.inflight - b.inflight);
    for (let c = 0; c < chunks; c++) {
      const part = jobs.slice(c * per, (c + 1) * per);
      if (part.length > 0) this.send(order[c], part);
    }
  }

  private send(pw: PoolWorker, jobs: Job[]): void {
    const id = this.nextBatchId++;
    let req: WorkerRequest;
    const transfer: ArrayBuffer[] = [];
    if (this.digestOn === 'main') {
      const digests = new Uint8Array(jobs.length * 32);
      jobs.forEach((j, i) => digests.set(j.digest as Uint8Array, i * 32));
      req = { id, kind: 'digests', digests, signatures: jobs.map((j) => j.signature) };
      transfer.push(digests.buffer);
    } else {
      req = {
        id,
        kind: 'typed',
        items: jobs.map((j) => ({ type: j.type, chainId: j.chainId, message: j.message, signature: j.signature })),
      };
    }
    try {
      pw.worker.postMessage(req, transfer);
    } catch (err) {
      // e.g. DataCloneError for a message value that is not plain data; this runs from
      // setImmediate, so an escaped throw would crash the process.
      for (const job of jobs) job.reject(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    pw.batches.set(id, jobs);
    if (pw.inflight === 0) pw.worker.ref();
    pw.inflight += jobs.length;
  }

  private onResult(pw: PoolWorker, res: WorkerResponse): void {
    const jobs = pw.batches.get(res.id);
    if (!jobs) return;
    pw.batches.delete(res.id);
    pw.inflight -= jobs.length;
    if (pw.inflight === 0) pw.worker.unref();
    jobs.forEach((job, i) => {
      const r = res.results[i];
      if (r !== null && typeof r === 'object') job.reject(new Eip712EncodingError(r.field, r.error));
      else if (!job.withDigest) job.resolve(r ?? null);
      else job.resolve({ signer: r ?? null, digest: job.digest ?? res.digests!.subarray(i * 32, i * 32 + 32) });
    });
  }
}
