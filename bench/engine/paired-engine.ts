/**
 * (b)/(d) measured in rounds that run the engine and the peer back to back (order reversed every other round),
 * as pairedWithPeer does for (a): this VM's speed drifts over minutes, so only a ratio taken within a round
 * compares the two on the same machine. The ratio of ops per main-thread CPU second is the one that counts
 * when other processes share the cores (a pass that waits for a CPU loses wall time, not CPU time); passes of
 * a whole stream are long enough for the CPU clock. The wall ratios are reported beside it.
 */
import type { Command } from '../../src/engine/commands.js';
import { enginePass, peerArgs, peerPass, type EngineFactory } from './runs.js';
import { median } from './stats.js';
import type { Workload } from './workload.js';

export interface EnginePeerRatios {
  /** Ratios of ops per main-thread CPU second (wall ops/s where the CPU clock is not available). */
  ratios: number[];
  median: number;
  wallRatios: number[];
  wallMedian: number;
}

export function pairedEngineWithPeer(
  create: EngineFactory, users: number, cmds: Command[], w: Workload, rounds: number, log: (msg: string) => void,
): EnginePeerRatios {
  const ratios: number[] = [];
  const wallRatios: number[] = [];
  for (let r = 0; r < rounds; r++) {
    log(`(b)/(d) paired: round ${r + 1}/${rounds}`);
    const order = r % 2 === 0 ? (['b', 'd'] as const) : (['d', 'b'] as const);
    const wall = { b: 0, d: 0 };
    const cpu = { b: 0, d: 0 };
    for (const k of order) {
      // The peer's arguments exist only around its own pass, as in its own run.
      const p = k === 'b' ? enginePass(create, users, cmds, false) : peerPass(w, peerArgs(w), false);
      wall[k] = w.n / (p.elapsedNs / 1e9);
      cpu[k] = w.n / ((p.mainCpuNs ?? p.elapsedNs) / 1e9);
    }
    ratios.push(cpu.b / cpu.d);
    wallRatios.push(wall.b / wall.d);
  }
  return { ratios, median: median(ratios), wallRatios, wallMedian: median(wallRatios) };
}
