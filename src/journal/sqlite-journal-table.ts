/**
 * The SQLite journal's table, shared by the inline writer, the writer thread and the readers:
 * `commands(seq, ts, body, crc)`. `crc` is a CRC-32 of the row's seq, ts and body bytes, so a damaged
 * row is refused on read instead of replayed; rows written before the column existed hold NULL.
 */
import type Database from 'better-sqlite3';
import { crc32 } from 'node:zlib';
import { JournalIntegrityError } from './ports.js';

const CREATE = `CREATE TABLE IF NOT EXISTS commands (
  seq  INTEGER PRIMARY KEY,
  ts   INTEGER NOT NULL,
  body TEXT    NOT NULL,
  crc  INTEGER
)`;

export const INSERT_ROW = 'INSERT INTO commands (seq, ts, body, crc) VALUES (?, ?, ?, ?)';

/** Creates the table, or adds the checksum column to a journal written before it existed. */
export function prepareJournalTable(db: Database.Database): void {
  db.exec(CREATE);
  const columns = db.prepare('PRAGMA table_info(commands)').all() as Array<{ name: string }>;
  if (!columns.some((c) => c.name === 'crc')) db.exec('ALTER TABLE commands ADD COLUMN crc INTEGER');
}

/** The last row's seq and ts (zeros for an empty journal). */
export function journalTail(db: Database.Database): { seq: number; ts: number } {
  const last = db.prepare('SELECT seq, ts FROM commands ORDER BY seq DESC LIMIT 1').get() as { seq: number; ts: number } | undefined;
  return last ?? { seq: 0, ts: 0 };
}

const header = Buffer.alloc(16);

/** CRC-32 of seq and ts (two little-endian float64) followed by the body as stored (UTF-8 for JSON text). */
export function rowChecksum(seq: number, ts: number, body: string | Buffer): number {
  header.writeDoubleLE(seq, 0);
  header.writeDoubleLE(ts, 8);
  return crc32(body, crc32(header));
}

/** Throws unless the stored checksum matches (NULL: a row from before checksums, nothing to check). */
export function verifyRow(seq: number, ts: number, body: string | Buffer, crc: number | null): void {
  if (crc === null) return;
  if (rowChecksum(seq, ts, body) !== crc) {
    throw new JournalIntegrityError(`journal row seq ${seq} fails its checksum: the stored command is damaged`);
  }
}
