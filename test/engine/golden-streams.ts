/**
 * The golden test's command streams: a seeded generator (mulberry32; no fast-check, so a library upgrade
 * cannot change the streams) over the random operations of random-ops.ts, in four flavours that reach
 * every engine path: everyday trading, crashes (large price moves at high leverage: liquidation, ADL,
 * reserve fund, bad debt), trigger-heavy streams (stops and TpSl) and funds/halts.
 */
import { DEMO_INSTRUMENTS } from '../../src/domain/instrument.js';
import type { Command } from '../../src/engine/commands.js';
import { mulberry32 } from '../../src/simulation/seeded-random.js';
import { materialize, type Op } from './random-ops.js';


export type Flavour = 'trading' | 'crash' | 'triggers' | 'funds';
export const FLAVOURS: readonly Flavour[] = ['trading', 'crash', 'triggers', 'funds'];

type OpBody = Op extends infer O ? (O extends unknown ? Omit<O, 'dt'> : never) : never;
type Kind = Op extends infer O ? (O extends { t: infer T } ? T : never) : never;

/** Relative weights of each operation per flavour. */
const WEIGHTS: Record<Flavour, Partial<Record<Kind, number>>> = {
  trading: { limit: 30, market: 8, stop: 4, batch: 3, badDate: 1, cancel: 8, cancelAll: 2, cancelMany: 2, replace: 6, replaceBatch: 2, leverage: 3, tick: 10, deposit: 3, withdraw: 2, settle: 2, close: 4, tpslCreate: 3, tpslModify: 2, tpslCancel: 2, matcher: 1, funding: 2, trading: 1 },
  crash: { limit: 30, market: 12, close: 3, tick: 14, leverage: 4, deposit: 2, funding: 3, cancel: 3, replace: 2, tpslCreate: 2, withdraw: 1, settle: 1 },
  triggers: { limit: 25, market: 6, stop: 14, tick: 16, tpslCreate: 10, tpslModify: 5, tpslCancel: 3, replace: 5, cancel: 4, close: 3, deposit: 2 },
  funds: { deposit: 10, withdraw: 10, settle: 8, limit: 14, market: 6, cancel: 4, tick: 6, matcher: 3, trading: 4, leverage: 3, close: 2, batch: 2, replaceBatch: 2, cancelMany: 2, badDate: 1 },
};

const USERS = [1, 2, 3, 4];
const INSTS = ['BTCUSDT', 'ETHUSDT'] as const;

/** One stream's operations. */
export function goldenOps(seed: number, flavour: Flavour, count: number): Op[] {
  const r = mulberry32(seed);
  const int = (min: number, max: number) => min + Math.floor(r() * (max - min + 1));
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const chance = (p: number) => r() < p;
  const table = Object.entries(WEIGHTS[flavour]) as Array<[Kind, number]>;
  const total = table.reduce((n, [, w]) => n + w, 0);
  const kind = (): Kind => {
    let x = r() * total;
    for (const [k, w] of table) if ((x -= w) < 0) return k;
    return table[0][0];
  };
  const side = () => pick(['BUY', 'SELL'] as const);
  const user = () => pick(USERS);
  const inst = () => pick(INSTS);
  const lev = () => (flavour === 'crash' ? pick([20, 50, 100, 100, 200, 300]) : pick([1, 2, 5, 10, 10, 20, 50, 100, 300]));
  const price = () => (chance(1 / 13) ? int(-130, 130) : int(-35, 35));
  const qty = () => int(1, flavour === 'crash' ? 400 : 30);
  const sig = () => (chance(0.2) ? null : int(0, 11));
  const tpsl = () => ({ type: pick(['take-profit', 'stop-loss'] as const), side: side(), priceStep: int(-60, 60), qtyStep: int(0, 10) });
  let index = 0; // crashes drift: each tick moves from the last index
  const ops: Op[] = [];
  for (let i = 0; i < count; i++) {
    const dt = chance(1 / 31) ? int(3_600_000, 9 * 3_600_000) : int(1, 3000);
    const k = kind();
    let op: OpBody;
    switch (k) {
      case 'limit': op = { t: k, user: user(), inst: inst(), side: side(), priceStep: price(), qtyStep: qty(), tif: pick(['GTC', 'GTC', 'GTC', 'DAY', 'IOC', 'FOK'] as const), postOnly: chance(0.2), lev: lev(), smp: chance(0.3), tpsl: chance(flavour === 'triggers' ? 0.5 : 0.15) ? [tpsl()] : [] }; break;
      case 'market': op = { t: k, user: user(), inst: inst(), side: side(), cashStep: int(1, flavour === 'crash' ? 400 : 40), tif: pick(['IOC', 'IOC', 'FOK'] as const), lev: lev() }; break;
      case 'stop': op = { t: k, user: user(), inst: inst(), side: side(), stopStep: int(-30, 30), limitOffset: int(-10, 10), qtyStep: qty(), tif: pick(['GTC', 'DAY'] as const), lev: lev() }; break;
      case 'batch': op = { t: k, user: user(), inst: inst(), items: Array.from({ length: int(1, 6) }, () => ({ side: side(), priceStep: price(), qtyStep: qty(), reuse: chance(0.2) ? int(0, 50) : null })) }; break;
      case 'badDate': op = { t: k, user: user(), inst: inst() }; break;
      case 'cancel': op = { t: k, user: user(), ref: int(0, 200) }; break;
      case 'cancelAll': op = { t: k, user: user(), inst: inst() }; break;
      case 'cancelMany': op = { t: k, user: user(), refs: Array.from({ length: int(0, 4) }, () => int(0, 200)) }; break;
      case 'replace': op = { t: k, user: user(), ref: int(0, 200), priceStep: price(), qtyStep: qty(), sig: sig() }; break;
      case 'replaceBatch': op = { t: k, user: user(), inst: inst(), items: Array.from({ length: int(0, 4) }, () => ({ ref: int(0, 200), priceStep: price(), qtyStep: qty(), sig: sig() })) }; break;
      case 'leverage': op = { t: k, user: user(), inst: inst(), lev: lev() }; break;
      case 'tick': {
        if (flavour === 'crash') {
          index = Math.max(-120, Math.min(120, index + int(-25, 25)));
          op = { t: k, inst: inst(), indexStep: index, markStep: chance(0.3) ? index + int(-10, 10) : null };
        } else {
          op = { t: k, inst: inst(), indexStep: int(-50, 50), markStep: chance(1 / 3) ? int(-50, 50) : null };
        }
        break;
      }
      case 'deposit': op = { t: k, user: user(), amount: int(1, 20) }; break;
      case 'withdraw': op = { t: k, user: user(), amount: int(1, 20), sig: sig() }; break;
      case 'settle': op = { t: k, ref: int(0, 100), success: chance(0.6) }; break;
      case 'close': op = { t: k, user: user(), inst: inst(), qtyStep: int(0, 20) }; break;
      case 'tpslCreate': op = { t: k, user: user(), inst: inst(), tpsl: tpsl(), onOrder: chance(0.4) ? int(0, 200) : null, sig: sig() }; break;
      case 'tpslModify': op = { t: k, user: user(), inst: inst(), n: int(1, 40), tpsl: tpsl(), sig: sig() }; break;
      case 'tpslCancel': op = { t: k, user: user(), inst: inst(), n: int(1, 40) }; break;
      case 'matcher': op = { t: k, active: chance(0.67) }; break;
      case 'funding': op = { t: k, inst: inst(), hours: pick([0, 1, 8]) }; break;
      case 'trading': op = { t: k, inst: inst(), state: pick(['all', 'all', 'all', 'onlyClose', 'none', 'restricted'] as const) }; break;
    }
    ops.push({ dt, ...op } as Op);
  }
  return ops;
}

export interface GoldenStream {
  name: string;
  commands: Command[];
  /** Index after which the engine is snapshotted, restored, and the rest applied to the restored copy. */
  restoreAt: number;
}

/** `perFlavour` streams of each flavour; stream i of a flavour has seed 1000·flavour + i. */
export function goldenStreams(perFlavour: number, length = 120): GoldenStream[] {
  const out: GoldenStream[] = [];
  FLAVOURS.forEach((flavour, f) => {
    for (let i = 0; i < perFlavour; i++) {
      const seed = 1000 * (f + 1) + i;
      const commands = withOperatorCommands(materialize(goldenOps(seed, flavour, length)), mulberry32(seed ^ 0x2545f491));
      out.push({ name: `${flavour}-${i}`, commands, restoreAt: Math.floor(mulberry32(seed ^ 0x5bd1e995)() * commands.length) });
    }
  });
  return out;
}

/**
 * Commands random-ops.ts does not make, inserted at random points: operator holds and releases of
 * withdrawals, instrument re-configurations (fees, leverage), malformed ones, and an unknown command kind.
 */
function withOperatorCommands(commands: Command[], r: () => number): Command[] {
  const out: Command[] = [];
  const withdrawals: string[] = [];
  for (const c of commands) {
    out.push(c);
    if (c.kind === 'funds.withdraw') withdrawals.push(c.transferId);
    const x = r();
    const ts = c.ts;
    if (x < 0.02 && withdrawals.length > 0) {
      out.push({ kind: 'funds.withdraw.hold', ts, transferId: withdrawals[Math.floor(r() * withdrawals.length)], hold: r() < 0.6 });
    } else if (x < 0.025) {
      const base = DEMO_INSTRUMENTS[Math.floor(r() * DEMO_INSTRUMENTS.length)];
      const variants = [
        { ...base, takerFee: '0.0007', makerFee: '0.0001' },
        { ...base, maxLeverage: 50 },
        { ...base, priceIncrement: '0' },
        { ...base, maxLeverage: 500 },
        { ...base, id: 'bad id!' },
        { ...base, minQuantity: '5', maxQuantity: '1' },
        { ...base, minPrice: '0' },
        base,
      ];
      out.push({ kind: 'instrument.upsert', ts, config: variants[Math.floor(r() * variants.length)] });
    } else if (x < 0.027) {
      out.push({ kind: 'no.such.command', ts } as unknown as Command);
    }
  }
  return out;
}
