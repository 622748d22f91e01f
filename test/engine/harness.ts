/**
 * Test harness for the engine: a fresh engine with the demo instruments and start prices, helpers to fund
 * users and place orders in human units, and `run` that checks every invariant after each command.
 */
import assert from 'node:assert/strict';
import { parseMoney, parseUnits } from '../../src/domain/fixed.js';
import { DEMO_INSTRUMENTS, DEMO_START_PRICES } from '../../src/domain/instrument.js';
import { orderIdPrefix } from '../../src/domain/order-id.js';
import type { Command, CommandInput, PlaceOrderInput } from '../../src/engine/commands.js';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import type { CommandResult, EngineEvent, OrderView } from '../../src/engine/records.js';

/** A fixed start time (2026-11-22 10:00 UTC) so order-id prefixes are stable. */
export const T0 = Date.UTC(2026, 10, 22, 10, 0, 0);

export type { CommandInput };

export class Harness {
  readonly engine: Engine = createEngine();
  ts = T0;
  private n = 0;
  /** Every command applied, with its ts (for replay/determinism checks). */
  readonly log: Command[] = [];

  constructor(opts: { instruments?: boolean; prices?: boolean } = {}) {
    if (opts.instruments !== false) for (const config of DEMO_INSTRUMENTS) this.ok({ kind: 'instrument.upsert', config });
    if (opts.prices !== false) {
      for (const config of DEMO_INSTRUMENTS) this.ok({ kind: 'price.tick', instrument: config.id, indexPrice: parseUnits(DEMO_START_PRICES[config.id]) });
    }
  }

  run(input: CommandInput, advanceMs = 1): CommandResult {
    this.ts += advanceMs;
    const cmd = { ...input, ts: this.ts } as Command;
    this.log.push(cmd);
    const result = this.engine.apply(cmd);
    this.engine.checkInvariants();
    return result;
  }

  ok(input: CommandInput): CommandResult {
    const r = this.run(input);
    assert.ok(r.reply.ok, `${input.kind} refused: ${JSON.stringify(!r.reply.ok && r.reply.error)}`);
    return r;
  }

  newId(): string {
    return `${orderIdPrefix(this.ts)}:${(++this.n).toString(16).padStart(26, '0')}`;
  }

  deposit(userId: number, usdt: string): void {
    this.ok({ kind: 'funds.deposit', userId, amount: parseMoney(usdt).toString(), transferId: `dep-${userId}-${++this.n}` });
  }

  /** Places an order given in decimal strings; returns the reply's order view (throws on refusal). */
  order(userId: number, o: {
    side: 'BUY' | 'SELL'; qty?: string; price?: string; type?: PlaceOrderInput['type']; tif?: PlaceOrderInput['timeInForce'];
    instrument?: string; leverage?: number; cash?: string; stop?: string; postOnly?: boolean; smp?: PlaceOrderInput['smp'];
    tpsl?: PlaceOrderInput['tpsl']; id?: string;
  }): OrderView {
    const r = this.place(userId, o);
    assert.ok(r.reply.ok, `order refused: ${JSON.stringify(!r.reply.ok && r.reply.error)}`);
    assert.ok(r.reply.ok && r.reply.order);
    return r.reply.order!;
  }

  place(userId: number, o: Parameters<Harness['order']>[1]): CommandResult {
    const type = o.type ?? (o.cash ? 'MARKET' : o.stop ? 'STOP_LIMIT' : 'LIMIT');
    const order: PlaceOrderInput = {
      id: o.id ?? this.newId(), instrument: o.instrument ?? 'BTCUSDT', side: o.side, type,
      timeInForce: o.tif ?? (type === 'MARKET' ? 'IOC' : 'GTC'), leverage: o.leverage ?? 10,
    };
    if (o.qty !== undefined) order.quantity = parseUnits(o.qty);
    if (o.price !== undefined) order.limitPrice = parseUnits(o.price);
    if (o.stop !== undefined) order.stopPrice = parseUnits(o.stop);
    if (o.cash !== undefined) order.cashQuantity = parseUnits(o.cash);
    if (o.postOnly) order.postOnly = true;
    if (o.smp) order.smp = o.smp;
    if (o.tpsl) order.tpsl = o.tpsl;
    return this.run({ kind: 'order.place', userId, order });
  }

  tick(instrument: string, index: string, mark?: string): CommandResult {
    const cmd: CommandInput = { kind: 'price.tick', instrument, indexPrice: parseUnits(index) };
    if (mark !== undefined) (cmd as { markPrice?: number }).markPrice = parseUnits(mark);
    return this.ok(cmd);
  }
}

export const U = parseUnits;
export const M = parseMoney;

export type Ev<T extends EngineEvent['type']> = Extract<EngineEvent, { type: T }>;

/** The events of one type in a command's result. */
export function evs<T extends EngineEvent['type']>(r: CommandResult, type: T): Ev<T>[] {
  return r.events.filter((e): e is Ev<T> => e.type === type);
}

/** The error of a refused command (fails when the command was accepted). */
export function err(r: CommandResult): { status: number; code: string; message: string } {
  assert.equal(r.reply.ok, false, `expected a refusal, got ${JSON.stringify(r.reply, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`);
  return (r.reply as { ok: false; error: { status: number; code: string; message: string } }).error;
}

/** A fresh harness with users 1..n funded with `usdt` each. */
export function setup(n = 4, usdt = '1000000'): Harness {
  const h = new Harness();
  for (let u = 1; u <= n; u++) h.deposit(u, usdt);
  return h;
}

/** Sets the mark explicitly (the computed mark would move with the book's mid). */
export function mark(h: Harness, price: string, instrument = 'BTCUSDT'): CommandResult {
  return h.tick(instrument, price, price);
}
