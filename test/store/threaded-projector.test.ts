// The read model projected on a worker thread is the same, table by table, as projected in-process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openReadStore, type ReadStore } from '../../src/store/index.js';
import { ThreadedSqliteProjector } from '../../src/store/threaded-projector.js';
import { generateHistory } from './history-fixture.js';

const TABLES = ['orders', 'fills', 'trades', 'funding_changes', 'order_fees', 'transfers', 'tpsl', 'position_last', 'position_history', 'projector_meta'];

async function dump(store: ReadStore): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const t of TABLES) out[t] = (await sql<Record<string, unknown>>`select * from ${sql.table(t)} order by 1, 2`.execute(store.db)).rows;
  return out;
}

test('threaded projector: same rows as in-process, idempotent, survives a worker crash', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'perpx-threaded-projector-'));
  const history = generateHistory({ seed: 7, orders: 1500 });
  const chunks = [];
  for (let i = 0; i < history.batches.length; i += 300) chunks.push(history.batches.slice(i, i + 300));
  const inline = await openReadStore({ kind: 'sqlite', file: join(dir, 'inline.db') });
  const file = join(dir, 'threaded.db');
  const threaded = await openReadStore({ kind: 'sqlite', file });
  const projector = new ThreadedSqliteProjector({ file });
  try {
    await projector.whenReady();
    const half = Math.floor(chunks.length / 2);
    for (const [i, c] of chunks.entries()) {
      await inline.projector.project(c);
      if (i === half) {
        // A dead worker fails what was in flight; the next call goes to a fresh one.
        await (projector as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
      }
      const r = await projector.project(c);
      assert.equal(r.applied, c.length);
    }
    const again = await projector.project(chunks[0]!);
    assert.deepEqual([again.applied, again.skipped], [0, chunks[0]!.length]);
    assert.equal(await threaded.projector.lastSeq(), history.batches.at(-1)!.seq);
    assert.deepEqual(await dump(threaded), await dump(inline));
  } finally {
    await projector.close();
    await inline.close();
    await threaded.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
