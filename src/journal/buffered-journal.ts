/**
 * What every group-commit journal shares: appends buffered (and serialized) in an AppendBuffer, the
 * durable seq advanced as writes complete, and fail-stop after the first failed write. Each adapter adds
 * only how a batch is written (`flush`), read back and released.
 */
import type { Command } from '../engine/commands.js';
import { AppendBuffer } from './append-buffer.js';
import type { CommandJournal, JournalReader } from './ports.js';

export abstract class BufferedJournal implements CommandJournal {
  protected readonly pending: AppendBuffer;
  protected committedSeq: number;
  /** Set by the first failed write; every later call rethrows it. */
  protected failure: Error | undefined;
  protected closed = false;

  /** `tail`: the last stored command's seq and ts (zeros for an empty journal). */
  constructor(tail: { seq: number; ts: number }) {
    this.committedSeq = tail.seq;
    this.pending = new AppendBuffer(tail.seq, tail.ts);
  }

  append(seq: number, command: Command, requestId?: string): void {
    if (this.closed) throw new Error('journal is closed');
    if (this.failure) throw this.failure;
    this.pending.append(seq, command, requestId);
  }

  lastSeq(): number {
    return this.pending.lastSeq;
  }

  durableSeq(): number {
    return this.committedSeq;
  }

  lastTs(): number {
    return this.pending.lastTs;
  }

  /** Flushes what is buffered (unless failed), then releases the storage. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      if (!this.failure) await this.flush();
    } finally {
      this.closed = true;
      await this.release();
    }
  }

  /** Frees the storage after the last flush (a database handle); nothing by default. */
  protected release(): void | Promise<void> {}

  abstract flush(): Promise<void>;
  abstract read(fromSeqExclusive: number): JournalReader;
}
