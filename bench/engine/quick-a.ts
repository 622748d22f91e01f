// Quick (a)-only harness (dev aid): node --max-semi-space-size=64 --expose-gc --import tsx bench/engine/quick-a.ts [passes]
import { barePass, bookAlonePass } from './runs.js';
import { BASE_TS, generateWorkload } from './workload.js';

const OPS = Number(process.env.QA_OPS ?? 1_000_000);
const w = generateWorkload({ ops: OPS, seed: 20261122, users: 1000, tsStart: BASE_TS + 100_000, idBase: 0 });
const warm = generateWorkload({ ops: Math.min(200_000, OPS), seed: 20261122 ^ 0x5eed, users: 1000, tsStart: BASE_TS + 100_000, idBase: 0x4000_0000 });
barePass(warm, false);
barePass(warm, true);
const passes = Number(process.argv[2] ?? 7);
const cpu: number[] = [];
const wall: number[] = [];
for (let r = 0; r < passes; r++) {
  const p = barePass(w, false);
  cpu.push(w.n / (p.mainCpuNs! / 1e9));
  wall.push(w.n / (p.elapsedNs / 1e9));
}
bookAlonePass(warm);
const h: number[] = [];
for (let r = 0; r < (process.env.QA_NO_BOOK_ALONE ? 0 : 3); r++) { const p = bookAlonePass(w); h.push(w.n / (p.elapsedNs / 1e9)); }
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const f = (x: number) => (x / 1e6).toFixed(2) + 'M';
console.log(`a wall med ${f(med(wall))} max ${f(Math.max(...wall))} | cpu med ${f(med(cpu))} | book alone wall med ${f(med(h))} max ${f(Math.max(...h))}`);
