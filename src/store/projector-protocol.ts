/** Messages between ThreadedSqliteProjector and its worker thread. */
import type { EventBatch, ProjectResult } from './projector.js';

export interface ProjectorWorkerInit {
  /** SQLite read-model file (already migrated by the main thread). */
  file: string;
}

export type ProjectorRequest = { kind: 'project'; id: number; batches: EventBatch[] } | { kind: 'close'; id: number };

export type ProjectorReply = { id: number; ok: true; result?: ProjectResult } | { id: number; ok: false; message: string };
