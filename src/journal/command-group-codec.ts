/**
 * One group commit as one message payload (the JetStream journal's unit of append): many commands, each
 * with its seq implied (contiguous from `firstSeq`), its `ts` and its body as the SQLite journal stores it
 * (the binary format of command-codec.ts for hot kinds, JSON text for the rest).
 *
 * Payload (format 1): byte 1, uint firstSeq, uint count, then per command: f64 ts and a body —
 *   0, uint length, binary body bytes (format byte included) · 1 / 2: JSON text as ASCII / UTF-16 code units.
 * A batch larger than the message size limit is cut into several groups; the CRC-32 of each payload travels
 * in a header so a damaged message is refused before it is decoded.
 */
import { crc32 } from 'node:zlib';
import { ByteReader } from '../codec/byte-reader.js';
import { ByteWriter } from '../codec/byte-writer.js';
import type { Command } from '../engine/commands.js';
import { decodeBody } from './sqlite-journal-reader.js';
import { forEachRow, type AppendBatch } from './append-buffer.js';
import type { JournalEntry } from './ports.js';

const GROUP_FORMAT = 1;
const B_BINARY = 0;
const B_ASCII = 1;
const B_UTF16 = 2;

/** One encoded group: its payload and the command seqs it holds. */
export interface EncodedGroup {
  firstSeq: number;
  lastSeq: number;
  lastTs: number;
  payload: Uint8Array;
}

export const payloadChecksum = (payload: Uint8Array): number => crc32(payload);

class GroupWriter extends ByteWriter {
  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }
}

/**
 * The batch as groups of at most `maxBytes` each (a single command larger than that still gets its own
 * group: the server then refuses it, and the journal fails stop rather than dropping it).
 */
export function encodeGroups(batch: AppendBatch, maxBytes: number): EncodedGroup[] {
  const groups: EncodedGroup[] = [];
  let rows: Array<{ ts: number; body: string | Buffer }> = [];
  let size = 0;
  let firstSeq = batch.firstSeq;
  const cut = () => {
    if (rows.length > 0) groups.push(encodeGroup(firstSeq, rows));
    firstSeq += rows.length;
    rows = [];
    size = 16;
  };
  cut();
  forEachRow(batch, (_seq, ts, body) => {
    // Upper bound of the row's encoded size: ts, tag, length, and UTF-16 for text.
    const rowSize = 8 + 1 + 9 + (typeof body === 'string' ? 2 * body.length : body.length);
    if (rows.length > 0 && size + rowSize > maxBytes) cut();
    rows.push({ ts, body });
    size += rowSize;
  });
  cut();
  return groups;
}

function encodeGroup(firstSeq: number, rows: Array<{ ts: number; body: string | Buffer }>): EncodedGroup {
  const w = new GroupWriter(1024);
  w.byte(GROUP_FORMAT);
  w.uint(firstSeq);
  w.uint(rows.length);
  for (const { ts, body } of rows) {
    w.f64(ts);
    if (typeof body === 'string') {
      w.string(body, B_ASCII, B_UTF16);
    } else {
      w.byte(B_BINARY);
      w.uint(body.length);
      w.bytes(body);
    }
  }
  return { firstSeq, lastSeq: firstSeq + rows.length - 1, lastTs: rows[rows.length - 1].ts, payload: w.take() };
}

/** A decoded group. Throws (an Error naming the fault) on a malformed payload. */
export function decodeGroup(payload: Uint8Array): { firstSeq: number; lastTs: number; entries: JournalEntry[] } {
  const r = new ByteReader(payload, 'journal group:');
  if (r.byte() !== GROUP_FORMAT) r.fail(`unknown format ${payload[0]}`);
  const firstSeq = r.uint();
  const count = r.uint();
  if (count === 0 || count > payload.length) r.fail(`bad command count ${count}`);
  const entries: JournalEntry[] = [];
  let lastTs = 0;
  for (let i = 0; i < count; i++) {
    const ts = r.f64();
    let command: Command;
    if (payload[r.pos] === B_BINARY) {
      r.pos++;
      const n = r.uint();
      if (r.pos + n > r.length) r.fail('truncated');
      command = decodeBody(Buffer.from(payload.buffer, payload.byteOffset + r.pos, n));
      r.pos += n;
    } else {
      command = JSON.parse(r.string(B_ASCII, B_UTF16)) as Command;
    }
    if (command.ts !== ts) r.fail(`command ${firstSeq + i} has ts ${command.ts}, its row ${ts}`);
    lastTs = ts;
    entries.push({ seq: firstSeq + i, command });
  }
  if (r.pos !== r.length) r.fail(`${r.length - r.pos} trailing bytes`);
  return { firstSeq, lastTs, entries };
}
