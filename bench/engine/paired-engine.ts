/**
 * (b)/(d) measured in rounds that run the engine and the peer back to back (order reversed every other round),
 * as pairedWithPeer does for (a): this VM's speed drifts over minutes, so only a ratio taken within a round
 * compares the two on the same machine.
 */
import type { Command } from '../../src/engine/commands.js';
import { enginePass, peerArgs, peerPass, type EngineFactory } from './runs.js';
import { median } from './stats.js';
import type { Workload } from './workload.js';

export interface EnginePeerRatios {
  ratios: number[];
  median: number;
}

export function pairedEngineWithPeer(
  create: EngineFactory, users: number, cmds: Command[], w: Workload, rounds: number, log: (msg: string) => void,
): EnginePeerRatios {
  const ratios: number[] = [];
  for (let r = 0; r < rounds; r++) {
    log(`(b)/(d) paired: round ${r + 1}/${rounds}`);
    const order = r % 2 === 0 ? (['b', 'd'] as const) : (['d', 'b'] as const);
    const ops = { b: 0, d: 0 };
    for (const k of order) {
      // The peer's arguments exist only around its own pass, as in its own run.
      const p = k === 'b' ? enginePass(create, users, cmds, false) : peerPass(w, peerArgs(w), false);
      ops[k] = w.n / (p.elapsedNs / 1e9);
    }
    ratios.push(ops.b / ops.d);
  }
  return { ratios, median: median(ratios) };
}
