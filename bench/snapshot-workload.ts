/** What bench:snapshot and bench:standby-snapshot share: the preload of resting orders and a result row. */
import { orderIdPrefix } from '../src/domain/order-id.js';
import type { Command } from '../src/engine/commands.js';
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
