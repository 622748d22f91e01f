// Profiles run (b) alone: `node --import tsx --cpu-prof --cpu-prof-dir=DIR bench/engine/profile-engine.ts`.
// Prints ops per main-thread CPU second so changes can be compared on a shared machine.
import { createEngine } from '../../src/engine/engine.js';
import { enginePass, engineCommands } from './runs.js';
import { BASE_TS, generateWorkload } from './workload.js';

const OPS = Number(process.env.BENCH_OPS ?? 300_000);
const USERS = 1000;
const warm = generateWorkload({ ops: 100_000, seed: 7, users: USERS, tsStart: BASE_TS + 10_000, idBase: 50_000_000 });
enginePass(createEngine, USERS, engineCommands(warm), false);
const w = generateWorkload({ ops: OPS, seed: 20261122, users: USERS, tsStart: BASE_TS + 10_000, idBase: 0 });
const cmds = engineCommands(w);
for (let rep = 0; rep < Number(process.env.REPS ?? 3); rep++) {
  const r = enginePass(createEngine, USERS, cmds, false);
  const wall = Math.round(OPS / (r.elapsedNs / 1e9));
  const cpu = r.mainCpuNs ? Math.round(OPS / (r.mainCpuNs / 1e9)) : undefined;
  console.log(`ops/s wall ${wall}  ops per main-thread CPU second ${cpu}`);
}
