/**
 * Projects event batches into the SQLite read model on a worker thread.
 *
 * The read model is written ~once per order (orders table with its indexes, plus fills, positions…), and
 * SQLite's own work was the largest single cost left on the event loop in the HTTP benchmark. Here the
 * event loop only encodes the batches (projector-codec.ts: a structured clone of them cost more than
 * applying their commands) and transfers the bytes; the worker decodes them and runs the same Projector
 * (its synchronous SQLite path) on its own connection. Readers on the main thread's connection see each
 * project() call's transaction all or nothing (WAL).
 *
 * A crashed worker fails the calls in flight and is replaced; as with the in-process projector, the feed
 * retries such failed calls (their batches stay queued; the projector skips what was already committed).
 */
import type { Worker } from 'node:worker_threads';
import { startSiblingWorker } from '../workers/start-worker.js';
import type { ProjectionBatch, ProjectResult } from './projector.js';
import { ProjectorEncoder } from './projector-codec.js';
import type { ProjectorReply, ProjectorRequest, ProjectorWorkerInit } from './projector-protocol.js';

interface Call {
  resolve: (r: ProjectResult) => void;
  reject: (err: Error) => void;
}

export class ThreadedSqliteProjector {
  private worker: Worker;
  private ready: Promise<void>;
  private readonly calls = new Map<number, Call>();
  private nextId = 1;
  private closed = false;
  private readonly encoder = new ProjectorEncoder();

  constructor(private readonly init: ProjectorWorkerInit) {
    ({ worker: this.worker, ready: this.ready } = this.spawn());
  }

  /** Resolves once the worker has opened the database. */
  whenReady(): Promise<void> {
    return this.ready;
  }

  project(batches: readonly ProjectionBatch[]): Promise<ProjectResult> {
    if (this.closed) return Promise.reject(new Error('projector is closed'));
    let bytes: Uint8Array;
    try {
      bytes = this.encoder.encode(batches);
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    return this.call({ kind: 'project', id: this.nextId++, batches: bytes }, [bytes.buffer as ArrayBuffer]) as Promise<ProjectResult>;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.call({ kind: 'close', id: this.nextId++ }).catch(() => undefined);
    await this.worker.terminate();
  }

  private call(req: ProjectorRequest, transfer: ArrayBuffer[] = []): Promise<ProjectResult | undefined> {
    return new Promise((resolve, reject) => {
      this.calls.set(req.id, { resolve: resolve as (r: ProjectResult) => void, reject });
      if (this.calls.size === 1) this.worker.ref();
      try {
        this.worker.postMessage(req, transfer);
      } catch (err) {
        this.calls.delete(req.id);
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  private spawn(): { worker: Worker; ready: Promise<void> } {
    const worker = startSiblingWorker(import.meta.url, 'projector-worker', this.init);
    let started: () => void = () => undefined;
    let failedToStart: (err: Error) => void = () => undefined;
    const ready = new Promise<void>((resolve, reject) => {
      started = resolve;
      failedToStart = reject;
    });
    ready.catch(() => undefined); // observed through whenReady() / the calls
    worker.unref(); // idle, it must not keep the process alive; ref'd while calls are in flight
    worker.on('message', (reply: ProjectorReply) => {
      if (reply.id === 0) return started();
      const call = this.calls.get(reply.id);
      if (!call) return;
      this.calls.delete(reply.id);
      if (this.calls.size === 0) worker.unref();
      if (reply.ok) call.resolve(reply.result as ProjectResult);
      else call.reject(new Error(reply.message));
    });
    const lost = (err: Error) => {
      failedToStart(err);
      for (const c of this.calls.values()) c.reject(err);
      this.calls.clear();
      if (this.closed || this.worker !== worker) return;
      ({ worker: this.worker, ready: this.ready } = this.spawn());
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`projector worker exited with code ${code}`)));
    return { worker, ready };
  }
}
