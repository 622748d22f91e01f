/** Reading a SQLite journal file, shared by the inline and the worker-thread journal writers. */
import Database from 'better-sqlite3';
import type { Command } from '../engine/commands.js';
import type { JournalEntry } from './ports.js';
import { decodeCommand } from './command-codec.js';

/**
 * A stored body as a command: TEXT is JSON (every journal before the binary format, and the rare kinds
 * since), a BLOB is the binary format of command-codec.ts.
 */
export function decodeBody(body: string | Buffer): Command {
  return (typeof body === 'string' ? JSON.parse(body) : decodeCommand(body)) as Command;
}

/**
 * Streams committed rows through a private read-only connection, so a long replay (e.g. verifying the
 * journal of a live exchange) neither blocks nor is blocked by the writer: WAL readers see a stable view.
 */
export function* readJournalFile(file: string, fromSeqExclusive: number): Generator<JournalEntry> {
  const reader = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const rows = reader
      .prepare('SELECT seq, body FROM commands WHERE seq > ? ORDER BY seq')
      .iterate(fromSeqExclusive) as IterableIterator<{ seq: number; body: string | Buffer }>;
    for (const row of rows) yield { seq: row.seq, command: decodeBody(row.body) };
  } finally {
    reader.close();
  }
}
