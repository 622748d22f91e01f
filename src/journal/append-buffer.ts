/** Commands appended since the last flush, in seq order: the part both SQLite journal writers share. */
import type { Command } from '../engine/commands.js';
import { JournalIntegrityError } from './ports.js';

export interface AppendBatch {
  seqs: number[];
  tss: number[];
  bodies: string[];
}

export class AppendBuffer {
  private batch: AppendBatch = { seqs: [], tss: [], bodies: [] };

  /** `lastSeq`/`lastTs`: the journal's tail when opened. */
  constructor(private appendedSeq: number, private appendedTs: number) {}

  /** Buffers the command; seqs must follow each other with no gap. */
  append(seq: number, command: Command): void {
    if (seq !== this.appendedSeq + 1) {
      throw new JournalIntegrityError(`append seq ${seq} does not follow ${this.appendedSeq}`);
    }
    this.batch.seqs.push(seq);
    this.batch.tss.push(command.ts);
    this.batch.bodies.push(JSON.stringify(command));
    this.appendedSeq = seq;
    this.appendedTs = command.ts;
  }

  get empty(): boolean {
    return this.batch.seqs.length === 0;
  }

  /** Everything buffered so far; the buffer starts empty again. */
  take(): AppendBatch {
    const b = this.batch;
    this.batch = { seqs: [], tss: [], bodies: [] };
    return b;
  }

  get lastSeq(): number {
    return this.appendedSeq;
  }

  get lastTs(): number {
    return this.appendedTs;
  }
}
