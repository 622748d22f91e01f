/**
 * Every row of the SQLite journal carries a CRC-32 of its seq, ts and body: a damaged row is refused on read
 * (and so by recovery), whichever writer stored it; journals written before the column existed still replay.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Command } from '../../src/engine/commands.js';
import { openSqliteJournal } from '../../src/journal/sqlite-journal.js';
import { openThreadedSqliteJournal } from '../../src/journal/threaded-sqlite-journal.js';
import { readJournalFile } from '../../src/journal/sqlite-journal-reader.js';
import { JournalIntegrityError, type CommandJournal } from '../../src/journal/ports.js';
import { tempDir } from './helpers.js';

const deposit = (i: number): Command => ({ kind: 'funds.deposit', ts: 1000 + i, userId: 1 + (i % 5), amount: String(100 + i), transferId: `t${i}` });
const tick = (i: number): Command => ({ kind: 'price.tick', ts: 1000 + i, instrument: 'BTCUSDT', indexPrice: 100_000_00000000 + i });
const commandAt = (i: number): Command => (i % 2 === 0 ? tick(i) : deposit(i));

async function writeJournal(file: string, open: (o: { file: string }) => Promise<CommandJournal>, count: number): Promise<void> {
  const j = await open({ file });
  for (let i = 1; i <= count; i++) j.append(i, commandAt(i));
  await j.close();
}

/** Flips one byte of the stored body of `seq` (a BLOB for price ticks, JSON text for deposits). */
function damage(file: string, seq: number): void {
  const db = new Database(file);
  const { body } = db.prepare('SELECT body FROM commands WHERE seq = ?').get(seq) as { body: string | Buffer };
  if (typeof body === 'string') {
    db.prepare('UPDATE commands SET body = ? WHERE seq = ?').run(body.replace(String(100 + seq), String(900 + seq)), seq);
  } else {
    const copy = Buffer.from(body);
    copy[copy.length - 1] ^= 0x01;
    db.prepare('UPDATE commands SET body = ? WHERE seq = ?').run(copy, seq);
  }
  db.close();
}

for (const [name, open] of [['inline', openSqliteJournal], ['threaded', openThreadedSqliteJournal]] as const) {
  test(`${name} writer: every row gets a checksum; a damaged binary or JSON row is refused on read`, async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'journal.db');
      await writeJournal(file, open, 20);
      const probe = new Database(file, { readonly: true });
      assert.equal((probe.prepare('SELECT count(*) n FROM commands WHERE crc IS NULL').get() as { n: number }).n, 0);
      probe.close();
      assert.deepEqual([...readJournalFile(file, 0)].map((e) => e.command), Array.from({ length: 20 }, (_, k) => commandAt(k + 1)));

      for (const seq of [7, 12]) {
        const copy = join(dir, `damaged-${seq}.db`);
        copyFileSync(file, copy);
        damage(copy, seq);
        assert.throws(() => [...readJournalFile(copy, 0)], (err: unknown) => err instanceof JournalIntegrityError && err.message.includes(`seq ${seq} `));
        // Reading from past the damage hands out the intact tail.
        assert.equal([...readJournalFile(copy, seq)].length, 20 - seq);
      }
      // The same bytes under another seq or ts do not pass either: the checksum covers them.
      const db = new Database(file);
      db.prepare('UPDATE commands SET ts = ts + 1 WHERE seq = 3').run();
      db.close();
      assert.throws(() => [...readJournalFile(file, 2)], /seq 3 fails its checksum/);
    } finally {
      cleanup();
    }
  });
}

test('a journal written before checksums replays, gains the column on open, and checksums new rows', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const file = join(dir, 'journal.db');
    const old = new Database(file);
    old.exec('CREATE TABLE commands (seq INTEGER PRIMARY KEY, ts INTEGER NOT NULL, body TEXT NOT NULL)');
    for (let i = 1; i <= 5; i++) old.prepare('INSERT INTO commands (seq, ts, body) VALUES (?, ?, ?)').run(i, 1000 + i, JSON.stringify(deposit(i)));
    old.close();
    // Read-only, before any writer migrated it.
    assert.equal([...readJournalFile(file, 0)].length, 5);

    const j = await openSqliteJournal({ file });
    assert.equal(j.lastSeq(), 5);
    j.append(6, deposit(6));
    await j.close();
    const db = new Database(file, { readonly: true });
    const rows = db.prepare('SELECT seq, crc FROM commands ORDER BY seq').all() as Array<{ seq: number; crc: number | null }>;
    db.close();
    assert.deepEqual(rows.map((r) => r.crc === null), [true, true, true, true, true, false]);
    assert.deepEqual([...readJournalFile(file, 0)].map((e) => e.command), Array.from({ length: 6 }, (_, k) => deposit(k + 1)));
  } finally {
    cleanup();
  }
});
