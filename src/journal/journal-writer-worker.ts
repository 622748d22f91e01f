/**
 * worker_threads entry of ThreadedSqliteJournal: owns the journal's write connection and commits each
 * batch it is sent in one transaction (WAL, synchronous=FULL: the reply comes after the fsync).
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import type { WriterInit, WriterReply, WriterRequest } from './journal-writer-protocol.js';
import { nameThread } from '../workers/thread-name.js';

if (!parentPort) throw new Error('journal-writer-worker must run in a worker thread');
const port = parentPort;
const init = workerData as WriterInit;
nameThread('perpx-journal');

const db = new Database(init.file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.pragma(`wal_autocheckpoint = ${init.walAutocheckpointPages}`);
const insert = db.prepare('INSERT INTO commands (seq, ts, body) VALUES (?, ?, ?)');
const writeBatch = db.transaction((seqs: number[], tss: number[], bodies: string[]) => {
  for (let i = 0; i < seqs.length; i++) insert.run(seqs[i], tss[i], bodies[i]);
});

/** After a failed batch nothing more is written: a later batch would leave a gap in the sequence. */
let failure: string | undefined;

port.on('message', (req: WriterRequest) => {
  if (req.kind === 'close') {
    db.close();
    port.postMessage({ id: req.id, ok: true } satisfies WriterReply);
    return;
  }
  let reply: WriterReply;
  if (failure !== undefined) {
    reply = { id: req.id, ok: false, message: `journal writer stopped after a failed write: ${failure}` };
  } else {
    try {
      writeBatch(req.seqs, req.tss, req.bodies);
      reply = { id: req.id, ok: true };
    } catch (err) {
      failure = err instanceof Error ? err.message : String(err);
      reply = { id: req.id, ok: false, message: failure };
    }
  }
  port.postMessage(reply);
});
