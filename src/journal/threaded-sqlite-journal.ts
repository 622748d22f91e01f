/**
 * The SQLite command journal with its writes on a worker thread.
 *
 * Same file, table and guarantees as SqliteJournal (a resolved flush() is committed with synchronous=FULL,
 * i.e. fsynced), but the INSERTs, COMMIT and fsync run on a writer thread: the event loop only serializes
 * commands (at append time, as before) and posts each batch, its typed arrays and byte buffer transferred
 * rather than copied (the writer sends them back with its reply, for reuse). An inline flush blocks the
 * event loop for the whole commit, stalling request handling; here the next group gathers while the
 * previous one is being made durable. Flushes may overlap
 * (the sequencer pipelines them); the writer answers them in order.
 *
 * Fail-stop as SqliteJournal: a failed write (or a dead writer thread) rejects that flush and every later
 * call, since the on-disk tail no longer matches what was appended.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Worker } from 'node:worker_threads';
import type { WriterInit, WriterReply, WriterRequest } from './journal-writer-protocol.js';
import { JournalWriteError, type JournalEntry } from './ports.js';
import type { SqliteJournalOptions } from './sqlite-journal.js';
import { startSiblingWorker } from '../workers/start-worker.js';
import { readJournalFile } from './sqlite-journal-reader.js';
import { batchTransferList } from './append-buffer.js';
import { BufferedJournal } from './buffered-journal.js';
import { journalTail, prepareJournalTable } from './sqlite-journal-table.js';


interface InFlight {
  lastSeq: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class ThreadedSqliteJournal extends BufferedJournal {
  private readonly writer: Worker;
  private readonly inFlight = new Map<number, InFlight>();
  private nextId = 1;
  private closing: Promise<void> | undefined;
  /** The newest write; the writer answers in order, so its commit covers every earlier one. */
  private newest: Promise<void> = Promise.resolve();

  constructor(private readonly file: string, walAutocheckpointPages = 10_000) {
    // Schema and tail on this thread, so the journal is usable (lastSeq etc.) as soon as it is constructed.
    super(preparedTail(file));
    const init: WriterInit = { file, walAutocheckpointPages: Math.max(1, Math.floor(walAutocheckpointPages)) };
    this.writer = startSiblingWorker(import.meta.url, 'journal-writer-worker', init);
    this.writer.unref(); // idle, it must not keep the process alive; ref'd while a write is in flight
    this.writer.on('message', (reply: WriterReply) => this.onReply(reply));
    this.writer.on('error', (err) => this.fail(err));
    this.writer.on('exit', (code) => {
      if (!this.closed) this.fail(new Error(`journal writer thread exited with code ${code}`));
    });
  }

  flush(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.pending.empty) return this.newest;
    const lastSeq = this.pending.lastSeq;
    const batch = this.pending.take();
    this.newest = this.send({ kind: 'write', id: this.nextId++, batch }, lastSeq, batchTransferList(batch));
    return this.newest;
  }

  read(fromSeqExclusive: number): Generator<JournalEntry> {
    return readJournalFile(this.file, fromSeqExclusive);
  }

  override close(): Promise<void> {
    this.closing ??= (async () => {
      try {
        if (!this.failure) await this.flush();
      } finally {
        this.closed = true;
        if (!this.failure) await this.send({ kind: 'close', id: this.nextId++ }, this.committedSeq).catch(() => undefined);
        await this.writer.terminate();
      }
    })();
    return this.closing;
  }

  private send(req: WriterRequest, lastSeq: number, transfer?: ArrayBuffer[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.inFlight.set(req.id, { lastSeq, resolve, reject });
      if (this.inFlight.size === 1) this.writer.ref();
      this.writer.postMessage(req, transfer);
    });
  }

  private onReply(reply: WriterReply): void {
    const f = this.inFlight.get(reply.id);
    if (!f) return;
    this.inFlight.delete(reply.id);
    if (this.inFlight.size === 0) this.writer.unref();
    if (reply.ok) {
      if (reply.spare) this.pending.recycle(reply.spare);
      if (f.lastSeq > this.committedSeq) this.committedSeq = f.lastSeq;
      f.resolve();
      return;
    }
    const err = new JournalWriteError(`journal write failed: ${reply.message}`, reply.code);
    f.reject(err);
    this.fail(err);
  }

  /** Fail-stop: everything not yet committed is lost, so nothing may be appended or acknowledged any more. */
  private fail(err: Error): void {
    this.failure ??= JournalWriteError.from(err);
    for (const f of this.inFlight.values()) f.reject(this.failure);
    this.inFlight.clear();
  }
}

/** Creates the table if needed and reads the tail, on a connection closed again at once. */
function preparedTail(file: string): { seq: number; ts: number } {
  mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    prepareJournalTable(db);
    return journalTail(db);
  } finally {
    db.close();
  }
}

export async function openThreadedSqliteJournal(options: SqliteJournalOptions): Promise<ThreadedSqliteJournal> {
  return new ThreadedSqliteJournal(options.file, options.walAutocheckpointPages);
}
