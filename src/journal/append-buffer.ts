/** Commands appended since the last flush, in seq order: the part both SQLite journal writers share. */
import type { Command } from '../engine/commands.js';
import { CommandEncoder, isBinaryKind } from './command-codec.js';
import { JournalIntegrityError } from './ports.js';

/**
 * A group of rows, seqs `firstSeq .. firstSeq + count - 1`, in typed arrays and one byte buffer so it can
 * be handed to the writer thread without copying (the buffers are transferred). Row i's body is
 * `bytes[ends[i-1] .. ends[i])` (binary format, see command-codec.ts) or, when that range is empty, the
 * next string of `texts` (JSON).
 */
export interface AppendBatch {
  firstSeq: number;
  count: number;
  /** `ts` of each row (length ≥ count). */
  tss: Float64Array;
  /** End offset in `bytes` of each row's binary body (length ≥ count). */
  ends: Uint32Array;
  bytes: Uint8Array;
  texts: string[];
  /** Gateway request ids of the rows that carry one (cluster journal), by seq; absent when none do. */
  requestIds?: Map<number, string>;
}

/** The buffers to list as transferred when posting the batch to another thread. */
export function batchTransferList(b: AppendBatch): ArrayBuffer[] {
  return [b.tss.buffer as ArrayBuffer, b.ends.buffer as ArrayBuffer, b.bytes.buffer as ArrayBuffer];
}

/** Calls `row` for each row in seq order with the body SQLite stores: a JSON string or a binary Buffer. */
export function forEachRow(b: AppendBatch, row: (seq: number, ts: number, body: string | Buffer) => void): void {
  const { tss, ends, texts } = b;
  const bytes = Buffer.from(b.bytes.buffer, b.bytes.byteOffset, b.bytes.length);
  let start = 0;
  let t = 0;
  for (let i = 0; i < b.count; i++) {
    const end = ends[i];
    row(b.firstSeq + i, tss[i], end === start ? texts[t++] : bytes.subarray(start, end));
    start = end;
  }
}

/** Spare buffers handed back by the writer; fresh ones would cost page faults on every group. */
const MAX_SPARES = 16;

export class AppendBuffer {
  private readonly encoder = new CommandEncoder();
  private spareBytes: Uint8Array[] = [];
  private spareRows: Array<{ tss: Float64Array; ends: Uint32Array }> = [];
  private firstSeq: number;
  private count = 0;
  private tss: Float64Array;
  private ends: Uint32Array;
  private texts: string[] = [];
  private requestIds: Map<number, string> | undefined;

  /** `lastSeq`/`lastTs`: the journal's tail when opened. */
  constructor(private appendedSeq: number, private appendedTs: number, capacity = 1024) {
    this.firstSeq = appendedSeq + 1;
    this.tss = new Float64Array(capacity);
    this.ends = new Uint32Array(capacity);
  }

  /**
   * Buffers the command, serialized now (later mutation by the caller cannot change what gets written);
   * seqs must follow each other with no gap. Throws if the command cannot be serialized (as JSON.stringify).
   */
  append(seq: number, command: Command, requestId?: string): void {
    if (seq !== this.appendedSeq + 1) {
      throw new JournalIntegrityError(`append seq ${seq} does not follow ${this.appendedSeq}`);
    }
    const enc = this.encoder;
    if (!isBinaryKind(command.kind) || !enc.encode(command)) this.texts.push(JSON.stringify(command));
    const i = this.count;
    if (i === this.tss.length) this.grow();
    this.tss[i] = command.ts;
    this.ends[i] = enc.pos;
    this.count = i + 1;
    this.appendedSeq = seq;
    this.appendedTs = command.ts;
    if (requestId !== undefined) (this.requestIds ??= new Map()).set(seq, requestId);
  }

  get empty(): boolean {
    return this.count === 0;
  }

  /** Everything buffered so far; the buffer starts empty again (with fresh arrays: these may be transferred). */
  take(): AppendBatch {
    const bytes = this.encoder.take(this.spareBytes.pop());
    const b: AppendBatch = { firstSeq: this.firstSeq, count: this.count, tss: this.tss, ends: this.ends, bytes, texts: this.texts };
    if (this.requestIds !== undefined) {
      b.requestIds = this.requestIds;
      this.requestIds = undefined;
    }
    const rows = this.spareRows.pop();
    if (rows) {
      this.tss = rows.tss;
      this.ends = rows.ends;
    } else {
      const capacity = Math.max(1024, this.count);
      this.tss = new Float64Array(capacity);
      this.ends = new Uint32Array(capacity);
    }
    this.texts = [];
    this.firstSeq = this.appendedSeq + 1;
    this.count = 0;
    return b;
  }

  /** Takes back the buffers of a written batch (e.g. returned by the writer thread) for later groups. */
  recycle(b: Pick<AppendBatch, 'tss' | 'ends' | 'bytes'>): void {
    if (this.spareBytes.length < MAX_SPARES && b.bytes.buffer.byteLength > 0) {
      this.spareBytes.push(new Uint8Array(b.bytes.buffer));
    }
    if (this.spareRows.length < MAX_SPARES && b.tss.length > 0 && b.tss.length === b.ends.length) {
      this.spareRows.push({ tss: b.tss, ends: b.ends });
    }
  }

  get lastSeq(): number {
    return this.appendedSeq;
  }

  get lastTs(): number {
    return this.appendedTs;
  }

  private grow(): void {
    const tss = new Float64Array(this.tss.length * 2);
    tss.set(this.tss);
    this.tss = tss;
    const ends = new Uint32Array(this.ends.length * 2);
    ends.set(this.ends);
    this.ends = ends;
  }
}
