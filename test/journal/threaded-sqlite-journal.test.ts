import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Command } from '../../src/engine/commands.js';
import { JournalIntegrityError } from '../../src/journal/ports.js';
import { openSqliteJournal } from '../../src/journal/sqlite-journal.js';
import { openThreadedSqliteJournal } from '../../src/journal/threaded-sqlite-journal.js';
import { tempDir } from './helpers.js';

const cmd = (i: number): Command => ({ kind: 'funds.deposit', ts: 1000 + i, userId: i % 5, amount: String(i), transferId: `t${i}` });

test('threaded journal: buffered until flush, durable after, same file format as the inline journal', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const file = join(dir, 'journal.db');
    const j = await openThreadedSqliteJournal({ file });
    assert.equal(j.lastSeq(), 0);
    for (let i = 1; i <= 100; i++) j.append(i, cmd(i));
    assert.equal(j.durableSeq(), 0);
    assert.equal([...j.read(0)].length, 0, 'nothing durable before flush');
    const first = j.flush();
    // The event loop is free while the writer commits: later appends go into the next group.
    for (let i = 101; i <= 150; i++) j.append(i, cmd(i));
    const second = j.flush();
    await first;
    assert.ok(j.durableSeq() >= 100);
    await second;
    assert.equal(j.durableSeq(), 150);
    await j.flush(); // nothing new: resolves once what was sent is committed
    const all = [...j.read(0)];
    assert.deepEqual(all.map((e) => e.seq), Array.from({ length: 150 }, (_, k) => k + 1));
    assert.deepEqual(all[41].command, cmd(42));
    j.append(151, cmd(151));
    await j.close(); // close flushes
    await j.close(); // idempotent

    // The inline journal reads what the threaded one wrote, and vice versa.
    const inline = await openSqliteJournal({ file });
    assert.equal(inline.lastSeq(), 151);
    assert.equal(inline.lastTs(), 1151);
    inline.append(152, cmd(152));
    await inline.close();
    const again = await openThreadedSqliteJournal({ file });
    assert.equal(again.lastSeq(), 152);
    assert.equal(again.durableSeq(), 152);
    assert.throws(() => again.append(154, cmd(154)), JournalIntegrityError);
    await again.close();
  } finally {
    cleanup();
  }
});

test('threaded journal: a failed write rejects, rolls back its batch and makes the journal fail-stop', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const file = join(dir, 'journal.db');
    const j = await openThreadedSqliteJournal({ file });
    for (let i = 1; i <= 10; i++) j.append(i, cmd(i));
    await j.flush();
    // Sabotage: a row with a later seq appears behind the journal's back → that batch's INSERT fails.
    const other = new Database(file);
    other.prepare('INSERT INTO commands (seq, ts, body) VALUES (12, 0, ?)').run('{}');
    other.close();
    j.append(11, cmd(11));
    j.append(12, cmd(12));
    const failed = j.flush();
    j.append(13, cmd(13)); // appended while the failing write is in flight
    const after = j.flush(); // must not be written: it would leave seq 11 missing
    await assert.rejects(failed, /UNIQUE|constraint/i);
    await assert.rejects(after);
    assert.deepEqual([...j.read(10)].map((e) => e.seq), [12], 'seq 11 rolled back, seq 13 never written');
    assert.equal(j.durableSeq(), 10);
    assert.throws(() => j.append(14, cmd(14)));
    await assert.rejects(j.flush());
    await j.close();
  } finally {
    cleanup();
  }
});
