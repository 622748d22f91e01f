import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Command } from '../../src/engine/commands.js';
import { SqliteJournal, openSqliteJournal } from '../../src/journal/sqlite-journal.js';
import { JournalIntegrityError } from '../../src/journal/ports.js';
import { tempDir } from './helpers.js';

const cmd = (i: number): Command => ({ kind: 'funds.deposit', ts: 1000 + i, userId: i % 5, amount: String(i), transferId: `t${i}` });

test('appends are buffered until flush, then read back in order; lastSeq/lastTs survive reopen', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const file = join(dir, 'journal.db');
    const j = await openSqliteJournal({ file });
    assert.equal(j.lastSeq(), 0);
    for (let i = 1; i <= 100; i++) j.append(i, cmd(i));
    assert.equal(j.lastSeq(), 100);
    assert.equal(j.durableSeq(), 0);
    assert.equal([...j.read(0)].length, 0, 'nothing durable before flush');
    await j.flush();
    assert.equal(j.durableSeq(), 100);
    const all = [...j.read(0)];
    assert.deepEqual(all.map((e) => e.seq), Array.from({ length: 100 }, (_, k) => k + 1));
    assert.deepEqual(all[41].command, cmd(42));
    assert.deepEqual([...j.read(95)].map((e) => e.seq), [96, 97, 98, 99, 100]);
    j.append(101, cmd(101));
    await j.close(); // close flushes

    const again = await openSqliteJournal({ file });
    assert.equal(again.lastSeq(), 101);
    assert.equal(again.lastTs(), 1101);
    assert.throws(() => again.append(103, cmd(103)), JournalIntegrityError);
    await again.close();
  } finally {
    cleanup();
  }
});

test('uses WAL with synchronous=FULL and one transaction per flush', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const file = join(dir, 'journal.db');
    const j = new SqliteJournal(file);
    const probe = new Database(file, { readonly: true });
    assert.equal(probe.pragma('journal_mode', { simple: true }), 'wal');
    probe.close();
    // synchronous is per connection, so ask the journal's own connection.
    const internals = j as unknown as { db: Database.Database; writeBatch: (...a: unknown[]) => void };
    assert.equal(internals.db.pragma('synchronous', { simple: true }), 2 /* FULL */);
    // writeBatch is a better-sqlite3 transaction function: one call = one BEGIN…COMMIT = one fsync.
    let transactions = 0;
    const real = internals.writeBatch;
    internals.writeBatch = (...a: unknown[]) => {
      transactions++;
      real(...a);
    };
    for (let i = 1; i <= 1000; i++) j.append(i, cmd(i));
    await j.flush();
    await j.flush(); // nothing buffered: no transaction
    assert.equal(transactions, 1);
    assert.equal([...j.read(0)].length, 1000);
    await j.close();
  } finally {
    cleanup();
  }
});

test('a reader sees all or nothing of a flush; a failed flush makes the journal fail-stop', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const file = join(dir, 'journal.db');
    const j = await openSqliteJournal({ file });
    for (let i = 1; i <= 10; i++) j.append(i, cmd(i));
    await j.flush();
    // Sabotage: a row with the next seq appears behind the journal's back → the batch INSERT fails.
    const other = new Database(file);
    other.prepare('INSERT INTO commands (seq, ts, body) VALUES (12, 0, ?)').run('{}');
    other.close();
    j.append(11, cmd(11));
    j.append(12, cmd(12));
    await assert.rejects(j.flush(), /UNIQUE|constraint/i);
    assert.deepEqual([...j.read(10)].map((e) => e.seq), [12], 'seq 11 of the failed batch was rolled back');
    assert.throws(() => j.append(13, cmd(13)));
    await assert.rejects(j.flush());
    await j.close();
  } finally {
    cleanup();
  }
});
