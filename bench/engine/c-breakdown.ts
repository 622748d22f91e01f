/**
 * Where run (c) spends its main thread beyond the engine: the same stream through
 *   apply      engine.apply alone (run (b)'s loop),
 *   sequencer  + Sequencer.submit with a journal that keeps nothing (stamping, promises, acknowledgements, and
 *              the gateway-like submission loop of run (c)),
 *   encode     + the journal's serialization of each command (AppendBuffer, as both SQLite journals do it),
 *   journal    + the threaded SQLite journal itself (run (c) as bench:engine runs it: hand-off to the writer
 *              thread, commits, fsync).
 * Each line is main-thread CPU µs per command (median over rounds; the variants alternate within a round), so
 * the step from one line to the next is what that layer costs the thread (c) is bound by. A step includes the
 * layer's indirect costs (more garbage-collection work, cache pressure on the engine): measured 2026-11-23,
 * encoding stepped +1.7 µs while a CPU profile of the same layer gave the encoder itself ~0.85 µs. Steps move
 * by ±0.5 µs between runs on this VM; use 5+ rounds.
 *
 * LAYERS=a,b picks layers (the step column then compares the picked ones).
 *
 *   node --max-semi-space-size=256 --no-allocation-site-pretenuring --expose-gc --import tsx bench/engine/c-breakdown.ts [rounds]
 */
import type { Command } from '../../src/engine/commands.js';
import { createEngine } from '../../src/engine/engine.js';
import { AppendBuffer } from '../../src/journal/append-buffer.js';
import type { CommandJournal, JournalReader } from '../../src/journal/ports.js';
import { enginePass, engineCommands, journalPass, openBenchJournal, type JournalOpener } from './runs.js';
import { median } from './stats.js';
import { BASE_TS, generateWorkload } from './workload.js';

const OPS = Number(process.env.OPS ?? 300_000);
const USERS = 1000;
const INFLIGHT = 4096;
const rounds = Number(process.argv[2] ?? 3);

/**
 * A journal that is durable at once; with `encode` it serializes each command as the SQLite journals do.
 * (MemoryJournal would add a JSON round trip per command, a cost no real journal has.)
 */
class InstantJournal implements CommandJournal {
  private seq = 0;
  private ts = 0;
  private readonly buffer: AppendBuffer | null;

  constructor(encode: boolean) {
    this.buffer = encode ? new AppendBuffer(0, 0) : null;
  }

  append(seq: number, command: Command): void {
    this.buffer?.append(seq, command);
    this.seq = seq;
    this.ts = command.ts;
  }

  flush(): Promise<void> {
    const b = this.buffer;
    if (b !== null && !b.empty) b.recycle(b.take());
    return Promise.resolve();
  }

  read(): JournalReader {
    throw new Error('an instant journal keeps nothing to read');
  }

  lastSeq(): number {
    return this.seq;
  }

  durableSeq(): number {
    return this.seq;
  }

  lastTs(): number {
    return this.ts;
  }

  async close(): Promise<void> {}
}

const allLayers: Array<{ name: string; run: (cmds: Command[]) => Promise<number> }> = [
  { name: 'apply', run: async (cmds) => enginePass(createEngine, USERS, cmds, false).mainCpuNs! },
  ...([
    ['sequencer', async () => new InstantJournal(false)],
    ['encode', async () => new InstantJournal(true)],
    ['journal', openBenchJournal],
  ] as Array<[string, JournalOpener]>).map(([name, open]) => ({
    name,
    run: async (cmds: Command[]) => (await journalPass(createEngine, USERS, cmds, INFLIGHT, open)).mainCpuNs!,
  })),
];

/** LAYERS=encode,journal (say) runs only those, e.g. under --cpu-prof. */
const only = process.env.LAYERS?.split(',');
const layers = only ? allLayers.filter((l) => only.includes(l.name)) : allLayers;

const w = generateWorkload({ ops: OPS, seed: 20261122, users: USERS, tsStart: BASE_TS + 10_000, idBase: 0 });
const warm = generateWorkload({ ops: 50_000, seed: 7, users: USERS, tsStart: BASE_TS + 10_000, idBase: 0x4000_0000 });
const cmds = engineCommands(w);
const warmCmds = engineCommands(warm);
for (const layer of layers) await layer.run(warmCmds);

const us: number[][] = layers.map(() => []);
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? layers.map((_, i) => i) : layers.map((_, i) => layers.length - 1 - i);
  for (const i of order) us[i].push((await layers[i].run(cmds)) / OPS / 1000);
}
console.log(`${OPS.toLocaleString('en-US')} commands, ${rounds} rounds; main-thread CPU µs per command (median)\n`);
console.log('| layer | µs / command | this layer | rounds |\n|---|---:|---:|---|');
let prev = 0;
layers.forEach((layer, i) => {
  const m = median(us[i]);
  console.log(`| ${layer.name} | ${m.toFixed(2)} | ${i === 0 ? '' : `${m >= prev ? '+' : ''}${(m - prev).toFixed(2)}`} | ${us[i].map((x) => x.toFixed(2)).join(' ')} |`);
  prev = m;
});
