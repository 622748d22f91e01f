/** Durability: the command journal (inline or on its writer thread) and the snapshot files. */
import { join } from 'node:path';
import { FileSnapshotStore } from '../../journal/file-snapshots.js';
import type { CommandJournal, SnapshotStore } from '../../journal/ports.js';
import { openSqliteJournal } from '../../journal/sqlite-journal.js';
import { openThreadedSqliteJournal } from '../../journal/threaded-sqlite-journal.js';
import type { ExchangeConfig } from '../config.js';
import { closingOnFailure, type Built } from '../shutdown-registry.js';

export interface Durable {
  journal: CommandJournal;
  snapshots: SnapshotStore;
  /** journal.db, for messages and for the snapshot replica's own read-only connection. */
  journalFile: string;
  snapshotDir: string;
}

export async function buildJournal(config: Pick<ExchangeConfig, 'journalWriter'>, dataDir: string): Promise<Built<Durable>> {
  const journalFile = join(dataDir, 'journal.db');
  const snapshotDir = join(dataDir, 'snapshots');
  const open = config.journalWriter === 'thread' ? openThreadedSqliteJournal : openSqliteJournal;
  const journal = await open({ file: journalFile });
  const snapshots = await closingOnFailure(journal, () => new FileSnapshotStore({ dir: snapshotDir }));
  return {
    service: { journal, snapshots, journalFile, snapshotDir },
    stop: async () => {
      await snapshots.close();
      await journal.close();
    },
  };
}
