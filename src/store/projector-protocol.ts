/** Messages between ThreadedSqliteProjector and its worker thread. */
import type { ProjectResult } from './projector.js';

export interface ProjectorWorkerInit {
  /** SQLite read-model file (already migrated by the main thread). */
  file: string;
  /** Tests only: the shared buffer of a ProjectionFaults (projection-faults.ts). */
  faults?: SharedArrayBuffer;
}

/** `batches`: the event batches as projector-codec.ts writes them (the buffer is transferred). */
export type ProjectorRequest = { kind: 'project'; id: number; batches: Uint8Array } | { kind: 'close'; id: number };

export type ProjectorReply = { id: number; ok: true; result?: ProjectResult } | { id: number; ok: false; message: string };
