/** The journal and snapshot contract (journal-contract.ts) on the embedded adapters: SQLite and files. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { FileSnapshotStore, snapshotFileName } from '../../src/journal/file-snapshots.js';
import { openSqliteJournal } from '../../src/journal/sqlite-journal.js';
import { openThreadedSqliteJournal } from '../../src/journal/threaded-sqlite-journal.js';
import { tempDir } from './helpers.js';
import { journalContract, snapshotContract } from './journal-contract.js';

for (const [adapter, open] of [['SQLite', openSqliteJournal], ['SQLite (writer thread)', openThreadedSqliteJournal]] as const) {
  journalContract(adapter, async () => {
    const { dir, cleanup } = tempDir();
    const file = join(dir, 'journal.db');
    return {
      open: () => open({ file }),
      damage: async () => {
        // One character of a stored body changed, its checksum left as it was (bit rot).
        const db = new Database(file);
        db.prepare("UPDATE commands SET body = replace(body, 't5', 't6') WHERE seq = 5").run();
        db.close();
        return { where: /seq 5\b/ };
      },
      dispose: async () => cleanup(),
    };
  });
}

snapshotContract('file', async () => {
  const { dir, cleanup } = tempDir('perpx-snapshots-');
  return {
    open: async (keep) => new FileSnapshotStore({ dir, keep }),
    damage: async (seq) => {
      const file = join(dir, snapshotFileName(seq));
      const bytes = readFileSync(file);
      bytes[bytes.length - 2] ^= 1;
      writeFileSync(file, bytes);
    },
    dispose: async () => cleanup(),
  };
});
