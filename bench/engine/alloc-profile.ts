/**
 * Dev aid: heap bytes ALLOCATED per command by run (b)'s engine, and which functions allocate them. Unlike
 * time, allocation does not depend on the machine's minute, so a change that trims garbage shows up exactly
 * here even when compare-b cannot resolve its few percent (on this VM it resolves ~5%).
 *
 *   node --max-semi-space-size=256 --min-semi-space-size=256 --expose-gc --import tsx \
 *     bench/engine/alloc-profile.ts [tree …]
 *
 * For each source tree given (default: this one; a `git worktree` of another commit compares them):
 *   - exact bytes per command: heapUsed after minus before blocks of commands, with a gc() before each block
 *     and a young generation large enough (--min-semi-space-size) that no collection runs inside a block (it
 *     warns if one did: the figure is then low);
 *   - by function: V8's sampling heap profiler, collected objects included (an estimate, sampled every 128
 *     bytes), as self bytes per command of each allocating function.
 */
import type { HeapProfiler } from 'node:inspector';
import { Session } from 'node:inspector/promises';
import { constants, performance, PerformanceObserver } from 'node:perf_hooks';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Command } from '../../src/engine/commands.js';
import { applySetup, engineCommands, type EngineFactory } from './runs.js';
import { gcNow } from './stats.js';
import { BASE_TS, generateWorkload } from './workload.js';

const USERS = 1000;
const WARM = 200_000;
const MEASURED = 200_000;
const BLOCK = 2_000;
const TOP = Number(process.env.TOP ?? 25);

const session = new Session();
session.connect();
/** Collected objects count too (garbage is what we are after); these two flags are newer than @types/node's. */
const sampling = { samplingInterval: 128, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true };

const w = generateWorkload({ ops: WARM + MEASURED, seed: 20261122, users: USERS, tsStart: BASE_TS + 100_000, idBase: 0 });
const cmds = engineCommands(w);

/** A fresh engine that has applied the first WARM commands (its book and id table at their working size). */
function warmEngine(create: EngineFactory) {
  const engine = create();
  applySetup(engine, USERS);
  for (let i = 0; i < WARM; i++) engine.apply(cmds[i]);
  return engine;
}

/** Start times (performance.now()) of the collections V8 ran on its own, not for our gc() calls. */
const unforcedGcs: number[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const flags = (e as { detail?: { flags?: number } }).detail?.flags ?? 0;
    if ((flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) === 0) unforcedGcs.push(e.startTime);
  }
}).observe({ entryTypes: ['gc'] });

async function exactBytesPerCommand(create: EngineFactory, measured: Command[]): Promise<number> {
  const engine = warmEngine(create);
  const t0 = performance.now();
  let bytes = 0;
  for (let start = 0; start < measured.length; start += BLOCK) {
    gcNow();
    const before = process.memoryUsage().heapUsed;
    for (let i = start; i < start + BLOCK; i++) engine.apply(measured[i]);
    bytes += process.memoryUsage().heapUsed - before;
  }
  const t1 = performance.now();
  await new Promise((r) => setTimeout(r, 100)); // gc entries are delivered asynchronously
  // A collection inside a block frees some of what the block allocated, so the figure would be low.
  const inside = unforcedGcs.filter((t) => t >= t0 && t <= t1).length;
  if (inside > 0) console.warn(`warning: ${inside} collections ran inside the blocks, so the exact figure is low; give --min-semi-space-size=256`);
  return bytes / measured.length;
}

async function sampledByFunction(create: EngineFactory, measured: Command[]): Promise<Map<string, number>> {
  const engine = warmEngine(create);
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', sampling);
  for (const cmd of measured) engine.apply(cmd);
  const { profile } = await session.post('HeapProfiler.stopSampling');
  const bytes = new Map<string, number>();
  const walk = (n: HeapProfiler.SamplingHeapProfileNode): void => {
    if (n.selfSize > 0) {
      const f = n.callFrame;
      const key = `${f.functionName || '(anonymous)'} (${f.url.split('/').pop()})`;
      bytes.set(key, (bytes.get(key) ?? 0) + n.selfSize / measured.length);
    }
    for (const c of n.children) walk(c);
  };
  walk(profile.head);
  return bytes;
}

const measured = cmds.slice(WARM);
for (const dir of process.argv.length > 2 ? process.argv.slice(2) : ['.']) {
  const mod = (await import(pathToFileURL(resolve(dir, 'src/engine/engine.ts')).href)) as { createEngine: EngineFactory };
  const exact = await exactBytesPerCommand(mod.createEngine, measured);
  const byFunction = await sampledByFunction(mod.createEngine, measured);
  const sampled = [...byFunction.values()].reduce((a, b) => a + b, 0);
  console.log(`\n${dir}: ${exact.toFixed(0)} bytes allocated per command (exact); sampled ${sampled.toFixed(0)}, by function:`);
  for (const [key, b] of [...byFunction].sort((x, y) => y[1] - x[1]).slice(0, TOP)) {
    console.log(`${b.toFixed(1).padStart(9)}  ${key}`);
  }
}
session.disconnect();
