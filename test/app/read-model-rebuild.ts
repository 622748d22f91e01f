/**
 * A clean rebuild of the read model from a data directory's journal (what a start with no read.db does:
 * replay every command through a fresh engine and project its events), and a table-by-table comparison of
 * two SQLite read models.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pino from 'pino';
import { ProjectorFeed } from '../../src/app/projector-feed.js';
import { createEngine, restoreEngine } from '../../src/engine/engine.js';
import { openSqliteJournal } from '../../src/journal/sqlite-journal.js';
import { recover } from '../../src/sequencer/recovery.js';
import { openReadStore } from '../../src/store/index.js';

/** Replays `dataDir`'s journal from zero into a fresh read model at `file`. Returns the journal's last seq. */
export async function rebuildReadModel(dataDir: string, file: string): Promise<number> {
  const journal = await openSqliteJournal({ file: join(dataDir, 'journal.db') });
  const store = await openReadStore({ kind: 'sqlite', file });
  try {
    const feed = new ProjectorFeed(store.projector, pino({ level: 'silent' }), 0);
    const engine = await recover({
      journal, createEngine, restoreEngine,
      onApplied: (entry, result) => feed.push({ seq: entry.seq, ts: entry.command.ts, kind: entry.command.kind, events: result.events }),
    });
    await feed.drain();
    assert.deepEqual(feed.status(), { projectedSeq: engine.seq, state: 'current' }, 'rebuild projected everything');
    return engine.seq;
  } finally {
    await store.close();
    await journal.close();
  }
}

/**
 * The rows of every table, in a canonical order. `order_counts` is compared by its counts only: its
 * `version` and [min, max] bounds depend on how commands were grouped into projector transactions (they
 * only ever grow, as cache keys and conservative bounds), and a combination that emptied may linger at n = 0.
 */
function tableRows(file: string): Map<string, unknown[]> {
  const db = new Database(file, { readonly: true });
  db.defaultSafeIntegers(true);
  try {
    const tables = (db.prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like 'kysely_%' order by name").all() as Array<{ name: string }>)
      .map((t) => t.name);
    const out = new Map<string, unknown[]>();
    for (const t of tables) {
      if (t === 'order_counts') {
        out.set(t, db.prepare('select user_id, instrument, status, side, type, order_group, triggered, n from order_counts where n <> 0 order by 1, 2, 3, 4, 5, 6, 7').all());
        continue;
      }
      const columns = (db.prepare(`pragma table_info("${t}")`).all() as Array<{ name: string }>).map((c) => `"${c.name}"`);
      out.set(t, db.prepare(`select * from "${t}" order by ${columns.join(', ')}`).all());
    }
    return out;
  } finally {
    db.close();
  }
}

/** Asserts the two read models hold the same rows in every table. Returns the row count compared. */
export function assertSameReadModel(actualFile: string, rebuiltFile: string): number {
  const actual = tableRows(actualFile);
  const rebuilt = tableRows(rebuiltFile);
  assert.deepEqual([...actual.keys()], [...rebuilt.keys()], 'same tables');
  let rows = 0;
  for (const [table, want] of rebuilt) {
    assert.deepEqual(actual.get(table), want, `table ${table} equals a clean rebuild row for row`);
    rows += want.length;
  }
  return rows;
}
