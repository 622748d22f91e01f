/**
 * In-memory journal: for tests and tools that want the journal contract without a disk. It is also the
 * smallest reference for what an adapter must do (gap check, buffered vs durable seq, fail-stop).
 */
import type { Command } from '../engine/commands.js';
import { JournalIntegrityError, type CommandJournal, type JournalEntry } from './ports.js';

export class MemoryJournal implements CommandJournal {
  /** Durable entries; a copy of each command (JSON round-trip) as a real store would hold. */
  readonly entries: JournalEntry[] = [];
  private buffer: JournalEntry[] = [];
  private appendedSeq = 0;
  private appendedTs = 0;
  private failure: Error | undefined;
  /** Number of flushes that wrote something: one per group commit. */
  commits = 0;

  append(seq: number, command: Command, requestId?: string): void {
    if (this.failure) throw this.failure;
    if (seq !== this.appendedSeq + 1) {
      throw new JournalIntegrityError(`append seq ${seq} does not follow ${this.appendedSeq}`);
    }
    const entry: JournalEntry = { seq, command: JSON.parse(JSON.stringify(command)) as Command };
    if (requestId !== undefined) entry.requestId = requestId;
    this.buffer.push(entry);
    this.appendedSeq = seq;
    this.appendedTs = command.ts;
  }

  async flush(): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
    this.entries.push(...batch);
    this.commits++;
  }

  /** Makes every later append/flush fail, as a broken disk would. */
  fail(err: Error): void {
    this.failure = err;
  }

  *read(fromSeqExclusive: number): Generator<JournalEntry> {
    for (const e of this.entries) if (e.seq > fromSeqExclusive) yield e;
  }

  lastSeq(): number {
    return this.appendedSeq;
  }

  durableSeq(): number {
    return this.entries.length ? this.entries[this.entries.length - 1].seq : 0;
  }

  lastTs(): number {
    return this.appendedTs;
  }

  async close(): Promise<void> {
    if (!this.failure) await this.flush();
  }
}
