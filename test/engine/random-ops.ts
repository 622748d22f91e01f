/**
 * Random command streams for the engine property tests: fast-check arbitraries of abstract operations and a
 * pure `materialize` that turns them into concrete commands (same ops → same commands), so several engines
 * (or a replay from a scratch script) see exactly the same list.
 */
import fc from 'fast-check';
import { parseMoney, parseUnits } from '../../src/domain/fixed.js';
import { DEMO_INSTRUMENTS, DEMO_START_PRICES } from '../../src/domain/instrument.js';
import { dayNumber, orderIdPrefix } from '../../src/domain/order-id.js';
import type { Command, PlaceOrderInput, TpSlInput } from '../../src/engine/commands.js';
import { T0, type CommandInput } from './harness.js';

// ------------------------------------------------------------------------------------------------------
// Random operations
// ------------------------------------------------------------------------------------------------------

export const USERS = [1, 2, 3, 4] as const;
const INSTRUMENTS = ['BTCUSDT', 'ETHUSDT'] as const;
type Inst = (typeof INSTRUMENTS)[number];
type Side = 'BUY' | 'SELL';

/** Price grid around the start prices: BTC 100000 ± step × 100, ETH 3500 ± step × 3.5 (1‰ per step). */
function priceAt(inst: Inst, step: number): number {
  return inst === 'BTCUSDT' ? parseUnits('100000') + step * parseUnits('100') : parseUnits('3500') + step * parseUnits('3.5');
}
/** BTC step × 0.001, ETH step × 0.05 (≈ 100 USDT per step). */
function qtyAt(inst: Inst, step: number): number {
  return inst === 'BTCUSDT' ? step * parseUnits('0.001') : step * parseUnits('0.05');
}

type TpSlOp = { type: 'take-profit' | 'stop-loss'; side: Side; priceStep: number; qtyStep: number };
/**
 * A signed command's digest, from a small pool so the same one comes back often (a repeat is refused while it
 * is spent: for good for withdraw and TpSl, while the order is open for replace); null = unsigned (system).
 */
type Sig = number | null;

export type Op = { dt: number } & (
  | { t: 'limit'; user: number; inst: Inst; side: Side; priceStep: number; qtyStep: number; tif: 'GTC' | 'DAY' | 'IOC' | 'FOK'; postOnly: boolean; lev: number; smp: boolean; tpsl: TpSlOp[] }
  | { t: 'market'; user: number; inst: Inst; side: Side; cashStep: number; tif: 'IOC' | 'FOK'; lev: number }
  | { t: 'stop'; user: number; inst: Inst; side: Side; stopStep: number; limitOffset: number; qtyStep: number; tif: 'GTC' | 'DAY'; lev: number }
  | { t: 'batch'; user: number; inst: Inst; items: Array<{ side: Side; priceStep: number; qtyStep: number; reuse: number | null }> }
  | { t: 'badDate'; user: number; inst: Inst }
  | { t: 'cancel'; user: number; ref: number }
  | { t: 'cancelAll'; user: number; inst: Inst }
  | { t: 'cancelMany'; user: number; refs: number[] }
  | { t: 'replace'; user: number; ref: number; priceStep: number; qtyStep: number; sig: Sig }
  | { t: 'replaceBatch'; user: number; inst: Inst; items: Array<{ ref: number; priceStep: number; qtyStep: number; sig: Sig }> }
  | { t: 'leverage'; user: number; inst: Inst; lev: number }
  | { t: 'tick'; inst: Inst; indexStep: number; markStep: number | null }
  | { t: 'deposit'; user: number; amount: number }
  | { t: 'withdraw'; user: number; amount: number; sig: Sig }
  | { t: 'settle'; ref: number; success: boolean }
  | { t: 'close'; user: number; inst: Inst; qtyStep: number }
  | { t: 'tpslCreate'; user: number; inst: Inst; tpsl: TpSlOp; onOrder: number | null; sig: Sig }
  | { t: 'tpslModify'; user: number; inst: Inst; n: number; tpsl: TpSlOp; sig: Sig }
  | { t: 'tpslCancel'; user: number; inst: Inst; n: number }
  | { t: 'matcher'; active: boolean }
  | { t: 'funding'; inst: Inst; hours: number }
  | { t: 'trading'; inst: Inst; state: 'all' | 'onlyClose' | 'none' | 'restricted' }
);

const user = fc.constantFrom(...USERS);
const inst = fc.constantFrom(...INSTRUMENTS);
const side = fc.constantFrom<Side>('BUY', 'SELL');
const lev = fc.constantFrom(1, 2, 5, 10, 10, 20, 50, 100, 300);
/** Mostly within ±3.5% of the start price; sometimes beyond the 10% fat-finger band. */
const priceStep = fc.oneof({ arbitrary: fc.integer({ min: -35, max: 35 }), weight: 12 }, { arbitrary: fc.integer({ min: -130, max: 130 }), weight: 1 });
const qtyStep = fc.integer({ min: 1, max: 30 });
/** Milliseconds between commands: mostly short, sometimes hours (crossing UTC midnight now and then). */
const dt = fc.oneof({ arbitrary: fc.integer({ min: 1, max: 3000 }), weight: 30 }, { arbitrary: fc.integer({ min: 3_600_000, max: 9 * 3_600_000 }), weight: 1 });
const sig: fc.Arbitrary<Sig> = fc.option(fc.integer({ min: 0, max: 11 }), { freq: 4 });
const tpslOp: fc.Arbitrary<TpSlOp> = fc.record({
  type: fc.constantFrom<'take-profit' | 'stop-loss'>('take-profit', 'stop-loss'), side, priceStep: fc.integer({ min: -60, max: 60 }), qtyStep: fc.integer({ min: 0, max: 10 }),
});

const body: fc.Arbitrary<Omit<Op, 'dt'>> = fc.oneof(
  { weight: 30, arbitrary: fc.record({ t: fc.constant('limit' as const), user, inst, side, priceStep, qtyStep, tif: fc.constantFrom<'GTC' | 'DAY' | 'IOC' | 'FOK'>('GTC', 'GTC', 'GTC', 'DAY', 'IOC', 'FOK'), postOnly: fc.boolean(), lev, smp: fc.boolean(), tpsl: fc.array(tpslOp, { maxLength: 2 }) }) },
  { weight: 8, arbitrary: fc.record({ t: fc.constant('market' as const), user, inst, side, cashStep: fc.integer({ min: 1, max: 40 }), tif: fc.constantFrom<'IOC' | 'FOK'>('IOC', 'IOC', 'FOK'), lev }) },
  { weight: 5, arbitrary: fc.record({ t: fc.constant('stop' as const), user, inst, side, stopStep: fc.integer({ min: -30, max: 30 }), limitOffset: fc.integer({ min: -10, max: 10 }), qtyStep, tif: fc.constantFrom<'GTC' | 'DAY'>('GTC', 'DAY'), lev }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('batch' as const), user, inst, items: fc.array(fc.record({ side, priceStep, qtyStep, reuse: fc.option(fc.nat(), { freq: 4 }) }), { minLength: 1, maxLength: 6 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('badDate' as const), user, inst }) },
  { weight: 8, arbitrary: fc.record({ t: fc.constant('cancel' as const), user, ref: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('cancelAll' as const), user, inst }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('cancelMany' as const), user, refs: fc.array(fc.nat(), { minLength: 0, maxLength: 4 }) }) },
  { weight: 6, arbitrary: fc.record({ t: fc.constant('replace' as const), user, ref: fc.nat(), priceStep, qtyStep, sig }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('replaceBatch' as const), user, inst, items: fc.array(fc.record({ ref: fc.nat(), priceStep, qtyStep, sig }), { minLength: 0, maxLength: 4 }) }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('leverage' as const), user, inst, lev }) },
  { weight: 10, arbitrary: fc.record({ t: fc.constant('tick' as const), inst, indexStep: fc.integer({ min: -50, max: 50 }), markStep: fc.option(fc.integer({ min: -50, max: 50 }), { freq: 2 }) }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('deposit' as const), user, amount: fc.integer({ min: 1, max: 20 }) }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('withdraw' as const), user, amount: fc.integer({ min: 1, max: 20 }), sig }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('settle' as const), ref: fc.nat(), success: fc.boolean() }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('close' as const), user, inst, qtyStep: fc.integer({ min: 0, max: 20 }) }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('tpslCreate' as const), user, inst, tpsl: tpslOp, onOrder: fc.option(fc.nat(), { freq: 3 }), sig }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('tpslModify' as const), user, inst, n: fc.integer({ min: 1, max: 40 }), tpsl: tpslOp, sig }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('tpslCancel' as const), user, inst, n: fc.integer({ min: 1, max: 40 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('matcher' as const), active: fc.constantFrom(true, true, false) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('funding' as const), inst, hours: fc.constantFrom(0, 1, 8) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('trading' as const), inst, state: fc.constantFrom<'all' | 'onlyClose' | 'none' | 'restricted'>('all', 'all', 'all', 'onlyClose', 'none', 'restricted') }) },
);

const op: fc.Arbitrary<Op> = fc.tuple(dt, body).map(([d, b]) => ({ dt: d, ...b }) as Op);
export const opsArb = (min: number, max: number) => fc.array(op, { minLength: min, maxLength: max });

// ------------------------------------------------------------------------------------------------------
// Materialization: abstract ops → concrete commands (pure: same ops, same commands)
// ------------------------------------------------------------------------------------------------------

/** The pool's digests (0x + 64 hex); undefined = the command carries none. */
function digestOf(s: Sig): { digest?: string } {
  return s === null ? {} : { digest: `0x${s.toString(16).padStart(64, '0')}` };
}

function tpslUuid(n: number): string {
  return `00000002-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

/** Setup commands (instruments, start prices, funding) followed by the random ops. */
export function materialize(ops: Op[]): Command[] {
  const cmds: Command[] = [];
  let ts = T0;
  let n = 0;
  const orderIds: string[] = [];
  const orderInst = new Map<string, Inst>();
  const idsOf = new Map<number, string[]>();
  const withdrawIds: string[] = [];
  const push = (c: CommandInput, d = 1): void => {
    ts += d;
    cmds.push({ ...c, ts } as Command);
  };
  const newId = (at: number, i: Inst, userId: number): string => {
    const id = `${orderIdPrefix(at)}:${(++n).toString(16).padStart(26, '0')}`;
    orderIds.push(id);
    orderInst.set(id, i);
    const own = idsOf.get(userId) ?? [];
    own.push(id);
    idsOf.set(userId, own);
    return id;
  };
  /** Mostly one of the user's own recent ids; one time in five any id (usually someone else's). */
  const pick = (ref: number, userId: number): string => {
    const own = idsOf.get(userId) ?? [];
    if (ref % 5 !== 0 && own.length) return own[own.length - 1 - (ref % Math.min(own.length, 8))];
    return orderIds.length ? orderIds[ref % orderIds.length] : `${orderIdPrefix(ts)}:${'e'.repeat(26)}`;
  };
  const tpslInput = (i: Inst, t: TpSlOp): TpSlInput => ({ type: t.type, side: t.side, quantity: qtyAt(i, t.qtyStep), price: priceAt(i, t.priceStep) });

  for (const config of DEMO_INSTRUMENTS) push({ kind: 'instrument.upsert', config });
  for (const config of DEMO_INSTRUMENTS) push({ kind: 'price.tick', instrument: config.id, indexPrice: parseUnits(DEMO_START_PRICES[config.id]) });
  for (const u of USERS) push({ kind: 'funds.deposit', userId: u, amount: parseMoney('5000').toString(), transferId: `init-${u}` });

  for (const o of ops) {
    const at = ts + o.dt;
    let c: CommandInput;
    switch (o.t) {
      case 'limit': {
        const order: PlaceOrderInput = {
          id: newId(at, o.inst, o.user), instrument: o.inst, side: o.side, type: 'LIMIT', timeInForce: o.tif, leverage: o.lev,
          quantity: qtyAt(o.inst, o.qtyStep), limitPrice: priceAt(o.inst, o.priceStep),
        };
        if (o.postOnly) order.postOnly = true;
        if (o.smp) order.smp = { smp: true, smpId: o.user % 2 === 0 ? 'even' : '' };
        // attached TpSl close the position the order opens: on the other side (a same-side one is refused)
        if (o.tpsl.length) order.tpsl = o.tpsl.map((t) => tpslInput(o.inst, { ...t, side: o.side === 'BUY' ? 'SELL' : 'BUY' }));
        c = { kind: 'order.place', userId: o.user, order };
        break;
      }
      case 'market':
        c = { kind: 'order.place', userId: o.user, order: { id: newId(at, o.inst, o.user), instrument: o.inst, side: o.side, type: 'MARKET', timeInForce: o.tif, leverage: o.lev, cashQuantity: o.cashStep * parseUnits('100') } };
        break;
      case 'stop':
        c = {
          kind: 'order.place', userId: o.user, order: {
            id: newId(at, o.inst, o.user), instrument: o.inst, side: o.side, type: 'STOP_LIMIT', timeInForce: o.tif, leverage: o.lev,
            quantity: qtyAt(o.inst, o.qtyStep), stopPrice: priceAt(o.inst, o.stopStep), limitPrice: priceAt(o.inst, o.stopStep + o.limitOffset),
          },
        };
        break;
      case 'batch':
        c = {
          kind: 'order.placeBatch', userId: o.user, instrument: o.inst, orders: o.items.map((it) => ({
            id: it.reuse !== null && orderIds.length ? pick(it.reuse, o.user) : newId(at, o.inst, o.user), instrument: o.inst, side: it.side, type: 'LIMIT' as const,
            timeInForce: 'GTC' as const, leverage: 10, quantity: qtyAt(o.inst, it.qtyStep), limitPrice: priceAt(o.inst, it.priceStep),
          })),
        };
        break;
      case 'badDate': {
        const id = `${String(dayNumber(at) - 2).padStart(5, '0')}:${(++n).toString(16).padStart(26, '0')}`;
        c = { kind: 'order.place', userId: o.user, order: { id, instrument: o.inst, side: 'BUY', type: 'LIMIT', timeInForce: 'GTC', leverage: 10, quantity: qtyAt(o.inst, 1), limitPrice: priceAt(o.inst, -5) } };
        break;
      }
      case 'cancel':
        c = { kind: 'order.cancel', userId: o.user, orderId: pick(o.ref, o.user) };
        break;
      case 'cancelAll':
        c = { kind: 'order.cancelAll', userId: o.user, instrument: o.inst };
        break;
      case 'cancelMany':
        c = { kind: 'order.cancelMany', userId: o.user, orderIds: o.refs.map((ref) => pick(ref, o.user)) };
        break;
      case 'replace': {
        // prices/quantities on the scale of the order's own instrument (the id may still be another user's or finished)
        const id = pick(o.ref, o.user);
        const i: Inst = orderInst.get(id) ?? 'BTCUSDT';
        c = { kind: 'order.replace', userId: o.user, replace: { orderId: id, quantity: qtyAt(i, o.qtyStep), limitPrice: priceAt(i, o.priceStep), ...digestOf(o.sig) } };
        break;
      }
      case 'replaceBatch':
        c = { kind: 'order.replaceBatch', userId: o.user, instrument: o.inst, items: o.items.map((it) => ({ orderId: pick(it.ref, o.user), quantity: qtyAt(o.inst, it.qtyStep), limitPrice: priceAt(o.inst, it.priceStep), ...digestOf(it.sig) })) };
        break;
      case 'leverage':
        c = { kind: 'position.leverage', userId: o.user, instrument: o.inst, leverage: o.lev };
        break;
      case 'tick':
        c = o.markStep === null
          ? { kind: 'price.tick', instrument: o.inst, indexPrice: priceAt(o.inst, o.indexStep) }
          : { kind: 'price.tick', instrument: o.inst, indexPrice: priceAt(o.inst, o.indexStep), markPrice: priceAt(o.inst, o.markStep) };
        break;
      case 'deposit':
        c = { kind: 'funds.deposit', userId: o.user, amount: (BigInt(o.amount) * parseMoney('250')).toString(), transferId: `d-${++n}` };
        break;
      case 'withdraw': {
        const transferId = `w-${++n}`;
        withdrawIds.push(transferId);
        c = { kind: 'funds.withdraw', userId: o.user, amount: (BigInt(o.amount) * parseMoney('150')).toString(), transferId, ...digestOf(o.sig) };
        break;
      }
      case 'settle':
        c = { kind: 'funds.withdraw.settle', transferId: withdrawIds.length ? withdrawIds[o.ref % withdrawIds.length] : 'w-none', success: o.success };
        break;
      case 'close':
        c = { kind: 'position.close', userId: o.user, instrument: o.inst, id: newId(at, o.inst, o.user), quantity: qtyAt(o.inst, o.qtyStep), leverage: 10 };
        break;
      case 'tpslCreate':
        c = { kind: 'tpsl.create', userId: o.user, instrument: o.inst, ...tpslInput(o.inst, o.tpsl), orderId: o.onOrder === null ? null : pick(o.onOrder, o.user), ...digestOf(o.sig) };
        break;
      case 'tpslModify':
        c = { kind: 'tpsl.modify', userId: o.user, instrument: o.inst, id: tpslUuid(o.n), ...tpslInput(o.inst, o.tpsl), ...digestOf(o.sig) };
        break;
      case 'tpslCancel':
        c = { kind: 'tpsl.cancel', userId: o.user, instrument: o.inst, id: tpslUuid(o.n) };
        break;
      case 'funding':
        c = { kind: 'funding.settle', instrument: o.inst, intervalMs: o.hours * 3_600_000 }; // 0 h: refused
        break;
      case 'matcher':
        c = { kind: 'matcher.state', state: o.active ? 'active' : 'me-dead' };
        break;
      case 'trading':
        c = { kind: 'instrument.trading', instrument: o.inst, trading: o.state };
        break;
    }
    push(c, o.dt);
  }
  return cmds;
}
