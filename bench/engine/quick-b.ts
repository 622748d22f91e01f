// (b)-only quick harness: node --max-semi-space-size=64 --expose-gc --import tsx bench/engine/quick-b.ts
import { createEngine } from '../../src/engine/engine.js';
import { enginePass, engineCommands } from './runs.js';
import { BASE_TS, generateWorkload } from './workload.js';
const OPS = Number(process.env.QB_OPS ?? 300_000);
const w = generateWorkload({ ops: OPS, seed: 20261122, users: 1000, tsStart: BASE_TS + 100_000, idBase: 0 });
const warm = generateWorkload({ ops: 100_000, seed: 20261122 ^ 0x5eed, users: 1000, tsStart: BASE_TS + 100_000, idBase: 0x4000_0000 });
const cmds = engineCommands(w);
enginePass(createEngine, 1000, engineCommands(warm), false);
const cpu: number[] = [];
for (let r = 0; r < Number(process.argv[2] ?? 3); r++) { const p = enginePass(createEngine, 1000, cmds, false); cpu.push(w.n / (p.mainCpuNs! / 1e9)); }
console.log('b cpu', cpu.map((x) => (x / 1e3).toFixed(0) + 'k').join(' '));
