// Cost of handing event batches to the projector worker (not a test):
//   npm run bench:codec
// The engine benchmark's seeded stream (bench/engine/workload.ts: 55% limit, 35% cancel, 10% taker; 1,000
// users) is applied once; its event batches are then written and read in groups of CODEC_GROUP commands by
//   ours  ProjectorEncoder / decodeEventBatches (src/store/projector-codec.ts), what the app sends,
//   v8    v8.serialize / v8.deserialize, the ValueSerializer postMessage's structured clone runs,
// alternating within each round so both see the same machine. Prints µs per command (median of the rounds)
// and the ratio v8 / ours: write = the event loop's cost per command, read = the projector worker's.
// Env: CODEC_OPS (100000 commands), CODEC_GROUP (256), CODEC_ROUNDS (5).
import { deepStrictEqual } from 'node:assert';
import v8 from 'node:v8';
import { performance } from 'node:perf_hooks';
import { createEngine } from '../src/engine/engine.js';
import type { ProjectionBatch } from '../src/store/projector.js';
import { decodeEventBatches, ProjectorEncoder } from '../src/store/projector-codec.js';
import { applySetup, engineCommands } from './engine/runs.js';
import { median } from './engine/stats.js';
import { BASE_TS, generateWorkload } from './engine/workload.js';

const OPS = Number(process.env.CODEC_OPS ?? 100_000);
const GROUP = Number(process.env.CODEC_GROUP ?? 256);
const ROUNDS = Number(process.env.CODEC_ROUNDS ?? 5);

const engine = createEngine();
applySetup(engine, 1000);
const w = generateWorkload({ ops: OPS, seed: 20261122, users: 1000, tsStart: BASE_TS + 100_000, idBase: 0 });
const groups: ProjectionBatch[][] = [];
let events = 0;
for (const [i, cmd] of engineCommands(w).entries()) {
  if (i % GROUP === 0) groups.push([]);
  const r = engine.apply(cmd);
  events += r.events.length;
  groups[groups.length - 1].push({ seq: engine.seq, ts: cmd.ts, events: r.events });
}

const encoder = new ProjectorEncoder();
const ours = groups.map((g) => encoder.encode(g));
const theirs = groups.map((g) => v8.serialize(g));
for (const [i, g] of groups.entries()) deepStrictEqual(decodeEventBatches(ours[i]), g); // same batches back

const perCommand = (run: () => void): number => {
  const t0 = performance.now();
  run();
  return ((performance.now() - t0) * 1000) / OPS;
};
const rows = { 'write ours': [] as number[], 'write v8': [] as number[], 'read ours': [] as number[], 'read v8': [] as number[] };
const runs: Array<[keyof typeof rows, () => void]> = [
  ['write ours', () => { for (const g of groups) encoder.encode(g); }],
  ['write v8', () => { for (const g of groups) v8.serialize(g); }],
  ['read ours', () => { for (const b of ours) decodeEventBatches(b); }],
  ['read v8', () => { for (const b of theirs) v8.deserialize(b); }],
];
for (const [, run] of runs) run(); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 === 0 ? runs : [...runs].reverse();
  for (const [name, run] of order) rows[name].push(perCommand(run));
}

const bytes = (xs: Uint8Array[]) => xs.reduce((s, b) => s + b.length, 0) / OPS;
const m = Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, median(v)])) as Record<keyof typeof rows, number>;
console.log(`${OPS.toLocaleString('en-US')} commands (${(events / OPS).toFixed(2)} events each) in groups of ${GROUP}, ${ROUNDS} rounds; µs per command, median\n`);
console.log('| codec | write µs | read µs | bytes / command |\n|---|---:|---:|---:|');
console.log(`| ours (projector-codec.ts) | ${m['write ours'].toFixed(2)} | ${m['read ours'].toFixed(2)} | ${bytes(ours).toFixed(0)} |`);
console.log(`| v8 ValueSerializer (structured clone) | ${m['write v8'].toFixed(2)} | ${m['read v8'].toFixed(2)} | ${bytes(theirs).toFixed(0)} |`);
console.log(`\nv8 / ours: write ${(m['write v8'] / m['write ours']).toFixed(1)}x, read ${(m['read v8'] / m['read ours']).toFixed(1)}x`);
for (const [k, v] of Object.entries(rows)) console.log(`${k}: ${v.map((x) => x.toFixed(2)).join(' ')}`);
