/**
 * One group commit as one message payload (the JetStream journal's unit of append): many commands, each
 * with its seq implied (contiguous from `firstSeq`), its `ts` and its body as the SQLite journal stores it
 * (the binary format of command-codec.ts for hot kinds, JSON text for the rest).
 *
 * Payload (format 1): byte 1, uint firstSeq, uint count, then per command: f64 ts and a body —
 *   0, uint length, binary body bytes (format byte included) · 1 / 2: JSON text as ASCII / UTF-16 code units.
 * Format 2 (a group where some command carries a gateway request id, issue 30) appends: uint n, then n times
 * (uint index of the command in the group, ASCII string id). Format 1 is still written when none does.
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
const GROUP_FORMAT_WITH_REQUESTS = 2;
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
  let rows: Row[] = [];
  let size = 0;
  let firstSeq = batch.firstSeq;
  const cut = () => {
    if (rows.length > 0) groups.push(encodeGroup(firstSeq, rows));
    firstSeq += rows.length;
    rows = [];
    size = 16;
  };
  cut();
  const ids = batch.requestIds;
  forEachRow(batch, (seq, ts, body) => {
    const requestId = ids?.get(seq);
    // Upper bound of the row's encoded size: ts, tag, length, and UTF-16 for text (and its request id).
    const rowSize = 8 + 1 + 9 + (typeof body === 'string' ? 2 * body.length : body.length) + (requestId === undefined ? 0 : 18 + requestId.length);
    if (rows.length > 0 && size + rowSize > maxBytes) cut();
    rows.push({ ts, body, requestId });
    size += rowSize;
  });
  cut();
  return groups;
}

interface Row {
  ts: number;
  body: string | Buffer;
  requestId: string | undefined;
}

const REQUEST_ID_RE = /^[\x21-\x7e]{1,128}$/;

/** Whether a gateway request id can be journaled: 1 to 128 printable ASCII characters. */
export const isJournalableRequestId = (id: string): boolean => REQUEST_ID_RE.test(id);

function encodeGroup(firstSeq: number, rows: Row[]): EncodedGroup {
  const w = new GroupWriter(1024);
  const withIds = rows.filter((r) => r.requestId !== undefined).length;
  w.byte(withIds > 0 ? GROUP_FORMAT_WITH_REQUESTS : GROUP_FORMAT);
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
  if (withIds > 0) {
    w.uint(withIds);
    rows.forEach((r, i) => {
      if (r.requestId === undefined) return;
      if (!isJournalableRequestId(r.requestId)) throw new Error(`request id ${JSON.stringify(r.requestId)} is not 1 to 128 printable ASCII characters`);
      w.uint(i);
      w.string(r.requestId, B_ASCII, B_UTF16);
    });
  }
  return { firstSeq, lastSeq: firstSeq + rows.length - 1, lastTs: rows[rows.length - 1].ts, payload: w.take() };
}

/** A decoded group. Throws (an Error naming the fault) on a malformed payload. */
export function decodeGroup(payload: Uint8Array): { firstSeq: number; lastTs: number; entries: JournalEntry[] } {
  const r = new ByteReader(payload, 'journal group:');
  const format = r.byte();
  if (format !== GROUP_FORMAT && format !== GROUP_FORMAT_WITH_REQUESTS) r.fail(`unknown format ${payload[0]}`);
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
  if (format === GROUP_FORMAT_WITH_REQUESTS) {
    const n = r.uint();
    if (n === 0 || n > count) r.fail(`bad request id count ${n}`);
    let previous = -1;
    for (let k = 0; k < n; k++) {
      const i = r.uint();
      if (i <= previous || i >= count) r.fail(`request id index ${i} out of order or range`);
      previous = i;
      entries[i].requestId = r.string(B_ASCII, B_UTF16);
    }
  }
  if (r.pos !== r.length) r.fail(`${r.length - r.pos} trailing bytes`);
  return { firstSeq, lastTs, entries };
}
