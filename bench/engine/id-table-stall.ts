// Dev aid: the longest single operation of the order-id table (src/engine/order-id-index.ts) while it grows to
// 2,000,000 ids, then prune() and the longest insert after it, for each source tree given (a worktree of an
// older commit against this one shows what a change did to the table's pauses):
//   node --import tsx bench/engine/id-table-stall.ts /tmp/perpx-base .
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { OrderIdIndex as Index } from '../../src/engine/order-id-index.js';

const IDS = 2_000_000;
const key = (i: number) => i.toString(16).padStart(26, '0');

for (const dir of process.argv.slice(2)) {
  const mod = (await import(pathToFileURL(resolve(dir, 'src/engine/order-id-index.ts')).href)) as { OrderIdIndex: typeof Index };
  const index = new mod.OrderIdIndex<number>();
  let worstGrowing = 0;
  for (let i = 0; i < IDS; i++) {
    const t0 = performance.now();
    index.retire(1 + (i % 1000), key(i), 100 + (i & 1));
    worstGrowing = Math.max(worstGrowing, performance.now() - t0);
  }
  const t0 = performance.now();
  index.prune(101); // drops the half dated day 100
  const pruneMs = performance.now() - t0;
  let worstAfter = 0;
  for (let i = IDS; i < IDS + 200_000; i++) {
    const t1 = performance.now();
    index.retire(1 + (i % 1000), key(i), 102);
    worstAfter = Math.max(worstAfter, performance.now() - t1);
  }
  console.log(
    `${dir}: longest insert while growing to ${IDS.toLocaleString('en-US')} ids ${worstGrowing.toFixed(1)} ms; `
      + `prune() ${pruneMs.toFixed(1)} ms; longest of the next 200,000 inserts ${worstAfter.toFixed(2)} ms`,
  );
}
