/**
 * worker_threads entry of ThreadedSqliteJournal: owns the journal's write connection and commits the
 * batches it is sent (WAL, synchronous=FULL: a reply comes after the fsync). Batches that queued up while
 * the previous commit ran are committed together in one transaction (one fsync), then each is answered in
 * order: the main thread can post a batch per event-loop turn without waiting, and the groups grow only
 * while the disk is the bottleneck.
 */
import Database from 'better-sqlite3';
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import type { WriterInit, WriterReply, WriterRequest } from './journal-writer-protocol.js';
import { batchTransferList, forEachRow, type AppendBatch } from './append-buffer.js';
import { nameThread } from '../workers/thread-name.js';
import { INSERT_ROW, rowChecksum } from './sqlite-journal-table.js';

if (!parentPort) throw new Error('journal-writer-worker must run in a worker thread');
const port = parentPort;
const init = workerData as WriterInit;
nameThread('perpx-journal');

const db = new Database(init.file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma(`wal_autocheckpoint = ${init.walAutocheckpointPages}`);
const insert = db.prepare(INSERT_ROW);
const row = (seq: number, ts: number, body: string | Buffer): void => {
  insert.run(seq, ts, body, rowChecksum(seq, ts, body));
};
const writeBatches = db.transaction((batches: AppendBatch[]) => {
  for (const b of batches) forEachRow(b, row);
});

/** After a failed batch nothing more is written: a later batch would leave a gap in the sequence. */
let failure: string | undefined;
/** The failed write's storage error code (SQLITE_FULL, SQLITE_IOERR_…), for the operator and the API. */
let failureCode: string | undefined;

function write(reqs: Array<Extract<WriterRequest, { kind: 'write' }>>): void {
  if (reqs.length === 0) return;
  if (failure === undefined) {
    try {
      writeBatches(reqs.map((r) => r.batch));
    } catch (err) {
      failure = err instanceof Error ? err.message : String(err);
      const code = (err as { code?: unknown }).code;
      failureCode = typeof code === 'string' ? code : undefined;
      for (const r of reqs) port.postMessage({ id: r.id, ok: false, message: failure, code: failureCode } satisfies WriterReply);
      return;
    }
    for (const r of reqs) {
      const { tss, ends, bytes } = r.batch;
      const spare = { tss, ends, bytes };
      port.postMessage({ id: r.id, ok: true, spare } satisfies WriterReply, batchTransferList(r.batch));
    }
    return;
  }
  for (const r of reqs) {
    port.postMessage({ id: r.id, ok: false, message: `journal writer stopped after a failed write: ${failure}`, code: failureCode } satisfies WriterReply);
  }
}

port.on('message', (first: WriterRequest) => {
  const writes: Array<Extract<WriterRequest, { kind: 'write' }>> = [];
  let req: WriterRequest | undefined = first;
  while (req !== undefined) {
    if (req.kind === 'close') {
      write(writes.splice(0));
      db.close();
      port.postMessage({ id: req.id, ok: true } satisfies WriterReply);
      return;
    }
    writes.push(req);
    req = (receiveMessageOnPort(port) as { message: WriterRequest } | undefined)?.message;
  }
  write(writes);
});
