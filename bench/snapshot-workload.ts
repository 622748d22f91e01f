/** What bench:snapshot and bench:standby-snapshot share: the preload of resting orders, the submit loop and a result row. */
import { performance } from 'node:perf_hooks';
import { orderIdPrefix } from '../src/domain/order-id.js';
import type { Command } from '../src/engine/commands.js';
import type { Sequencer } from '../src/sequencer/sequencer.js';
import { mulberry32 } from '../src/simulation/seeded-random.js';
import { LEVERAGE } from './engine/runs.js';
import { BASE_TS, INSTRUMENTS, restingOrderAt } from './engine/workload.js';

/** One mode's mixed phase: throughput, acknowledgement latency (ms) and the leader's longest stall. */
export interface SnapshotBenchRow<Mode extends string> {
  mode: Mode;
  opsPerSec: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  loopMaxMs: number;
  snapshots: number;
  saved: number;
  failures: number;
}

/** `count` non-crossing resting limit orders of `users` users (seeded: the same book every run). */
export function restingCommands(count: number, users: number): Command[] {
  const rnd = mulberry32(99);
  const prefix = orderIdPrefix(BASE_TS);
  const out: Command[] = [];
  let ts = BASE_TS + 5_000;
  for (let i = 0; i < count; i++) {
    const s = restingOrderAt(i, rnd, users, prefix, 0x7000_0000);
    out.push({
      kind: 'order.place', ts: ts++, userId: s.user,
      order: { id: s.id, instrument: INSTRUMENTS[s.inst].id, side: s.bid ? 'BUY' : 'SELL', type: 'LIMIT', timeInForce: 'GTC', leverage: LEVERAGE, quantity: s.qty, limitPrice: s.price },
    });
  }
  return out;
}

/**
 * Submits `cmds` `inflight` per turn, setting the sequencer's clock to each command's ts; with `rate` > 0 a turn
 * waits until its place in the schedule. `lat` receives each command's acknowledgement latency (ms).
 */
export async function submitInTurns(
  seq: Pick<Sequencer, 'submit'>, setNow: (ts: number) => void, cmds: Command[], inflight: number,
  options: { lat?: Float64Array; rate?: number } = {},
): Promise<void> {
  const { lat, rate = 0 } = options;
  const began = performance.now();
  for (let start = 0; start < cmds.length; start += inflight) {
    const ahead = rate > 0 ? (start * 1000) / rate - (performance.now() - began) : 0;
    if (ahead > 1) await new Promise((r) => setTimeout(r, ahead));
    const end = Math.min(cmds.length, start + inflight);
    const t0 = performance.now();
    let last: Promise<unknown> | undefined;
    for (let i = start; i < end; i++) {
      const { ts, ...input } = cmds[i];
      setNow(ts);
      last = seq.submit(input as never);
    }
    await last;
    // Acknowledgements come in seq order: the turn's last one stamps the whole turn.
    if (lat) lat.fill(performance.now() - t0, start, end);
  }
}
