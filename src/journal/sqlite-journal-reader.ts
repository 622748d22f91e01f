/** Reading a SQLite journal file, shared by the inline and the worker-thread journal writers. */
import Database from 'better-sqlite3';
import type { Command } from '../engine/commands.js';
import type { JournalEntry } from './ports.js';
import { decodeCommand } from './command-codec.js';
import { verifyRow } from './sqlite-journal-table.js';

/**
 * A stored body as a command: TEXT is JSON (every journal before the binary format, and the rare kinds
 * since), a BLOB is the binary format of command-codec.ts.
 */
export function decodeBody(body: string | Buffer): Command {
  return (typeof body === 'string' ? JSON.parse(body) : decodeCommand(body)) as Command;
}

/** A journal last opened for writing before checksums existed has no `crc` column (read-only: not migrated). */
function hasChecksums(db: Database.Database): boolean {
  return (db.prepare('PRAGMA table_info(commands)').all() as Array<{ name: string }>).some((c) => c.name === 'crc');
}

/**
 * Streams committed rows through a private read-only connection, so a long replay (e.g. verifying the
 * journal of a live exchange) neither blocks nor is blocked by the writer: WAL readers see a stable view.
 * Each row's checksum is verified before it is decoded (JournalIntegrityError when it does not match).
 */
export function* readJournalFile(file: string, fromSeqExclusive: number): Generator<JournalEntry> {
  const reader = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const rows = reader
      .prepare(`SELECT seq, ts, body, ${hasChecksums(reader) ? 'crc' : 'NULL AS crc'} FROM commands WHERE seq > ? ORDER BY seq`)
      .iterate(fromSeqExclusive) as IterableIterator<{ seq: number; ts: number; body: string | Buffer; crc: number | null }>;
    for (const row of rows) {
      verifyRow(row.seq, row.ts, row.body, row.crc);
      yield { seq: row.seq, command: decodeBody(row.body) };
    }
  } finally {
    reader.close();
  }
}
