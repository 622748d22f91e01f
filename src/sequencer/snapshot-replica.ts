/**
 * Snapshots off the event loop. Capturing a snapshot on the sequencer thread stops matching while the
 * whole state is serialized (every order book and account walked, then JSON.stringify; docs/performance.md),
 * which every request in flight pays as latency. A replica engine on a worker thread
 * instead follows the durable journal up to the snapshot's seq and serializes its own identical state; the
 * sequencer only sends the seq (the way exchange-core takes snapshots from a replica, not the matcher).
 *
 * The cost moves to another core: the replica re-applies each command once (journal read + JSON.parse +
 * apply), in bursts when a snapshot is due, and holds a second copy of the engine state.
 */
import type { Worker } from 'node:worker_threads';
import { startSiblingWorker } from '../workers/start-worker.js';
import type { SnapshotReplica } from './ports.js';
import type { ReplicaInit, ReplicaReply, ReplicaRequest, ReplicaSnapshotResult } from './snapshot-replica-protocol.js';

export type { ReplicaSnapshotResult } from './snapshot-replica-protocol.js';

interface InFlight {
  resolve: (r: ReplicaSnapshotResult) => void;
  reject: (err: Error) => void;
}

/** The replica on a worker thread, reading the journal through its own connection (SQLite file or JetStream). */
export class ThreadedSnapshotReplica implements SnapshotReplica {
  /** Started with the first snapshot: loading the engine on another thread would compete with start-up. */
  private worker: Worker | undefined;
  private readonly inFlight = new Map<number, InFlight>();
  private nextId = 1;
  private failure: Error | undefined;
  private closing: Promise<void> | undefined;

  constructor(private readonly init: ReplicaInit) {}

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = startSiblingWorker(import.meta.url, 'snapshot-replica-worker', this.init);
    worker.unref(); // idle, it must not keep the process alive; ref'd while a snapshot is in flight
    worker.on('message', (reply: ReplicaReply) => this.onReply(reply));
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => this.fail(new Error(`snapshot replica thread exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }

  snapshotAt(seq: number, ts: number): Promise<ReplicaSnapshotResult> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closing) return Promise.reject(new Error('snapshot replica is closed'));
    return this.send({ kind: 'snapshot', id: this.nextId++, seq, ts });
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      if (!this.worker) return;
      if (!this.failure) await this.send({ kind: 'close', id: this.nextId++ }).catch(() => undefined);
      this.failure ??= new Error('snapshot replica is closed');
      await this.worker.terminate();
    })();
    return this.closing;
  }

  private send(req: ReplicaRequest): Promise<ReplicaSnapshotResult> {
    const worker = this.started();
    return new Promise((resolve, reject) => {
      this.inFlight.set(req.id, { resolve, reject });
      if (this.inFlight.size === 1) worker.ref();
      worker.postMessage(req);
    });
  }

  private onReply(reply: ReplicaReply): void {
    const f = this.inFlight.get(reply.id);
    if (!f) return;
    this.inFlight.delete(reply.id);
    if (this.inFlight.size === 0) this.worker?.unref();
    if (reply.ok) f.resolve({ seq: reply.seq ?? 0, bytes: reply.bytes ?? 0, replayed: reply.replayed ?? 0, ms: reply.ms ?? 0 });
    else f.reject(new Error(reply.message));
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const f of this.inFlight.values()) f.reject(this.failure);
    this.inFlight.clear();
  }
}
