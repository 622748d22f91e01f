/**
 * Command journal on SQLite (better-sqlite3): one table `commands(seq, ts, body, crc)` (sqlite-journal-table.ts).
 *
 * WAL + synchronous=FULL: a COMMIT returns only after the WAL is fsynced, so a resolved `flush()` survives
 * a power cut, not just a process crash. Appends only buffer (the command is serialized at append time so
 * later mutation by the caller cannot change what gets written: hot kinds in the binary format of
 * command-codec.ts, the rest as JSON text); `flush()` writes the whole buffer in one transaction — one fsync
 * for however many commands arrived since the last flush (group commit).
 *
 * The write runs on the calling thread, serial with the engine; threaded-sqlite-journal.ts moves it to a
 * writer thread (the default). Throughput: docs/performance.md, "Journal".
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { JournalWriteError, type JournalEntry } from './ports.js';
import { readJournalFile } from './sqlite-journal-reader.js';
import { forEachRow, type AppendBatch } from './append-buffer.js';
import { BufferedJournal } from './buffered-journal.js';
import { INSERT_ROW, journalTail, prepareJournalTable, rowChecksum } from './sqlite-journal-table.js';

export interface SqliteJournalOptions {
  /** Database file, e.g. `data/journal.db`; parent directories are created. */
  file: string;
  /**
   * WAL pages (4 KiB) before SQLite copies them into the main file. Checkpoints run inside a commit on
   * this thread and fsync the main file, so fewer, larger ones keep flush latency flatter. Default 10,000
   * (~40 MB of WAL).
   */
  walAutocheckpointPages?: number;
}

export class SqliteJournal extends BufferedJournal {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement<[number, number, string | Buffer, number]>;
  private readonly writeBatch: (batch: AppendBatch) => void;

  constructor(private readonly file: string, walAutocheckpointPages = 10_000) {
    mkdirSync(dirname(file), { recursive: true });
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma(`wal_autocheckpoint = ${Math.max(1, Math.floor(walAutocheckpointPages))}`);
    prepareJournalTable(db);
    super(journalTail(db));
    this.db = db;
    this.insert = this.db.prepare(INSERT_ROW);
    const row = (seq: number, ts: number, body: string | Buffer): void => {
      this.insert.run(seq, ts, body, rowChecksum(seq, ts, body));
    };
    this.writeBatch = this.db.transaction((batch: AppendBatch) => forEachRow(batch, row));
  }

  flush(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.pending.empty) return Promise.resolve();
    const batch = this.pending.take();
    try {
      this.writeBatch(batch);
    } catch (err) {
      // Whatever was buffered is lost and the on-disk tail no longer matches appendedSeq: refuse all
      // further use rather than risk a gap (fail-stop).
      this.failure = JournalWriteError.from(err);
      return Promise.reject(this.failure);
    }
    this.committedSeq = batch.firstSeq + batch.count - 1;
    this.pending.recycle(batch);
    return Promise.resolve();
  }

  read(fromSeqExclusive: number): Generator<JournalEntry> {
    return readJournalFile(this.file, fromSeqExclusive);
  }

  protected override release(): void {
    this.db.close();
  }
}

export async function openSqliteJournal(options: SqliteJournalOptions): Promise<SqliteJournal> {
  return new SqliteJournal(options.file, options.walAutocheckpointPages);
}
