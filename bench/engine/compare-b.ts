/**
 * Paired comparison of run (b) between two source trees, in one process: passes alternate A, B, B, A, …
 * over the same stream, so both builds see the same machine at the same moment. On this shared 2-core VM a
 * single (b) figure moves by ±10% from run to run and a pair's ratio by up to ±20%; the median of 10 pairs
 * resolves about 5% (two copies of the same tree gave 1.02).
 *
 *   git worktree add /tmp/perpx-base <rev>
 *   node --max-semi-space-size=256 --no-allocation-site-pretenuring --expose-gc --import tsx \
 *     bench/engine/compare-b.ts /tmp/perpx-base . [pairs]
 *
 * Prints ops per main-thread CPU second of each pass and the median ratio B / A. The stream and the runner
 * come from this tree (bench/engine), only the engines differ. OPS (default 600,000) sets the stream length.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { EngineFactory } from './runs.js';
import { enginePass, engineCommands } from './runs.js';
import { median } from './stats.js';
import { BASE_TS, generateWorkload } from './workload.js';

const [dirA, dirB] = [process.argv[2], process.argv[3]];
if (!dirA || !dirB) {
  console.error('usage: compare-b.ts <tree A> <tree B> [pairs]');
  process.exit(2);
}
const pairs = Number(process.argv[4] ?? 8);
const OPS = Number(process.env.OPS ?? 600_000);
const USERS = 1000;

async function factory(dir: string): Promise<EngineFactory> {
  const mod = (await import(pathToFileURL(resolve(dir, 'src/engine/engine.ts')).href)) as { createEngine: EngineFactory };
  return mod.createEngine;
}

const engines = [await factory(dirA), await factory(dirB)];
const w = generateWorkload({ ops: OPS, seed: 20261122, users: USERS, tsStart: BASE_TS + 100_000, idBase: 0 });
const warm = generateWorkload({ ops: 150_000, seed: 99, users: USERS, tsStart: BASE_TS + 100_000, idBase: 0x4000_0000 });
const cmds = engineCommands(w);
const warmCmds = engineCommands(warm);
for (let i = 0; i < 2; i++) for (const create of engines) enginePass(create, USERS, warmCmds, false);

const perSecond = (create: EngineFactory): number => {
  const r = enginePass(create, USERS, cmds, false);
  return OPS / ((r.mainCpuNs ?? r.elapsedNs) / 1e9);
};
const a: number[] = [];
const b: number[] = [];
for (let i = 0; i < pairs; i++) {
  if (i % 2 === 0) {
    a.push(perSecond(engines[0]));
    b.push(perSecond(engines[1]));
  } else {
    b.push(perSecond(engines[1]));
    a.push(perSecond(engines[0]));
  }
}
const k = (x: number): string => `${(x / 1e3).toFixed(0)}k`;
const ratios = a.map((x, i) => b[i] / x);
console.log(`A ${dirA}: ${a.map(k).join(' ')} (median ${k(median(a))})`);
console.log(`B ${dirB}: ${b.map(k).join(' ')} (median ${k(median(b))})`);
console.log(`B / A per pair: ${ratios.map((r) => r.toFixed(3)).join(' ')}; median ${median(ratios).toFixed(3)}`);
