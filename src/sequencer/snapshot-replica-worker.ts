/**
 * worker_threads entry of ThreadedSnapshotReplica: keeps a replica engine, and on each request brings it
 * to the requested seq with the journal's committed commands (the engine is deterministic, so the replica's
 * state at a seq is the live engine's state at that seq), then serializes and stores its snapshot. All of
 * it happens on this thread, so the sequencer never stops matching to take a snapshot.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createEngine, restoreEngine, type Engine } from '../engine/engine.js';
import { openDurableReader } from '../journal/durable-location.js';
import { serializeSnapshot } from '../journal/ports.js';
import { nameThread } from '../workers/thread-name.js';
import { replayJournal, restoreNewestVerified } from './recovery.js';
import type { ReplicaInit, ReplicaReply, ReplicaRequest, ReplicaSnapshotResult } from './snapshot-replica-protocol.js';

if (!parentPort) throw new Error('snapshot-replica-worker must run in a worker thread');
const port = parentPort;
const init = workerData as ReplicaInit;
nameThread('perpx-snapshot');

// Opened with the first request (the JetStream one connects): a failure then answers that request.
let opening: ReturnType<typeof openDurableReader> | undefined;
async function storage() {
  opening ??= openDurableReader(init.location, init.keep, 'perpx snapshot replica');
  try {
    return await opening;
  } catch (err) {
    opening = undefined; // tried again with the next request
    throw err;
  }
}
let replica: Engine | undefined;

async function snapshotAt(seq: number, ts: number): Promise<ReplicaSnapshotResult> {
  const t0 = performance.now();
  const { read, snapshots: store } = await storage();
  if (!replica || replica.seq > seq) {
    // First request: start from the newest verified snapshot the request is not behind, as recovery does.
    replica = (await restoreNewestVerified(store, restoreEngine, { atOrBefore: seq })).engine ?? createEngine();
  }
  const replayed = await replayJournal(replica, read(replica.seq), seq);
  if (replica.seq !== seq) {
    const at = replica.seq;
    replica = undefined; // start over next time
    throw new Error(`snapshot replica reached seq ${at}, not ${seq}: the journal is not durable that far`);
  }
  const snapshot = serializeSnapshot(replica, ts);
  await store.save(snapshot);
  return { seq, bytes: snapshot.json.length, replayed, ms: Math.round(performance.now() - t0) };
}

// Requests are handled one at a time, in order.
let queue: Promise<void> = Promise.resolve();
port.on('message', (req: ReplicaRequest) => {
  queue = queue.then(async () => {
    let reply: ReplicaReply;
    if (req.kind === 'close') {
      await (await opening?.catch(() => undefined))?.close();
      reply = { id: req.id, ok: true };
    } else {
      try {
        reply = { id: req.id, ok: true, ...(await snapshotAt(req.seq, req.ts)) };
      } catch (err) {
        replica = undefined;
        reply = { id: req.id, ok: false, message: err instanceof Error ? err.message : String(err) };
      }
    }
    port.postMessage(reply);
  });
});
