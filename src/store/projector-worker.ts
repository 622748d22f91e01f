/**
 * worker_threads entry of ThreadedSqliteProjector: owns a write connection to the SQLite read model and
 * projects the event batches it is sent, one project() call (one transaction) per message, in order.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openReadStore } from './open.js';
import { ProjectionFaults } from './projection-faults.js';
import { decodeEventBatches } from './projector-codec.js';
import type { ProjectorReply, ProjectorRequest, ProjectorWorkerInit } from './projector-protocol.js';
import { lowerThreadPriority } from '../workers/thread-priority.js';
import { nameThread } from '../workers/thread-name.js';

if (!parentPort) throw new Error('projector-worker must run in a worker thread');
const port = parentPort;
const init = workerData as ProjectorWorkerInit;
nameThread('perpx-projector');
lowerThreadPriority(); // the read model may lag a little; the event loop must not (see thread-priority.ts)
const store = await openReadStore({ kind: 'sqlite', file: init.file }, init.faults && new ProjectionFaults(init.faults));

// Messages are handled one at a time (project() on SQLite is synchronous), so batches apply in seq order.
port.on('message', (req: ProjectorRequest) => {
  void (async () => {
    let reply: ProjectorReply;
    try {
      if (req.kind === 'close') {
        await store.close();
        reply = { id: req.id, ok: true };
      } else {
        reply = { id: req.id, ok: true, result: await store.projector.project(decodeEventBatches(req.batches)) };
      }
    } catch (err) {
      reply = { id: req.id, ok: false, message: err instanceof Error ? err.message : String(err) };
    }
    port.postMessage(reply);
  })();
});
port.postMessage({ id: 0, ok: true } satisfies ProjectorReply); // ready
