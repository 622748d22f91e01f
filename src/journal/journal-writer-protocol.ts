/** Messages between ThreadedSqliteJournal and its writer thread. */
import type { AppendBatch } from './append-buffer.js';

export interface WriterInit {
  file: string;
  walAutocheckpointPages: number;
}

/** A write's buffers are transferred, not copied (see batchTransferList). */
export type WriterRequest =
  | { kind: 'write'; id: number; batch: AppendBatch }
  | { kind: 'close'; id: number };

/** A written batch's buffers come back (transferred) in `spare`, for the journal to reuse. */
export type WriterReply =
  | { id: number; ok: true; spare?: Pick<AppendBatch, 'tss' | 'ends' | 'bytes'> }
  | { id: number; ok: false; message: string; code?: string };
