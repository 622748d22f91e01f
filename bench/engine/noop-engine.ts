/**
 * An engine that only counts commands: run behind the Sequencer + journal it gives the ceiling of (c),
 * i.e. what stamping, JSON serialization, SQLite inserts, fsync and acknowledgement cost on their own.
 * Queries are not supported (the Sequencer makes none while submitting); any other member throws, so the
 * stub keeps type-checking as the ExchangeEngine interface grows.
 */
import type { EngineSnapshot, ExchangeEngine } from '../../src/engine/api.js';
import type { CommandResult } from '../../src/engine/records.js';

const OK: CommandResult = { reply: { ok: true }, events: [] };

export function createNoopEngine(): ExchangeEngine {
  let seq = 0;
  const base = {
    apply(): CommandResult {
      seq++;
      return OK;
    },
    get seq() {
      return seq;
    },
    snapshot: (): EngineSnapshot => ({ version: 1, seq, state: null }),
    stateHash: () => String(seq),
    checkInvariants: () => undefined,
  };
  return new Proxy(base, {
    get(target, prop, receiver) {
      if (prop in target) return Reflect.get(target, prop, receiver) as unknown;
      return () => {
        throw new Error(`the no-op benchmark engine does not implement ${String(prop)}`);
      };
    },
  }) as unknown as ExchangeEngine;
}
