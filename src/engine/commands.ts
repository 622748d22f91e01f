/**
 * Commands: the only way to change exchange state. Each is plain JSON (journaled as-is) and carries its
 * own time (`ts`, epoch ms, stamped by the sequencer), so applying the same commands always gives the
 * same state. Prices and quantities are Units (safe-integer counts of 1e-8); money amounts are decimal
 * strings of integer 1e-8 counts (bigint in the engine). Signed withdraw, replace and TpSl commands carry the
 * EIP-712 `digest` the gateway verified: the engine spends it, so the instruction takes effect at most once.
 */
import type { InstrumentConfig } from '../domain/instrument.js';
import type { OrderGroup, Side, TimeInForce, TpSlType, TradingState } from '../domain/enums.js';
import type { CommandResult, EngineEvent } from './records.js';

export interface SelfMatchPrevention {
  smp: boolean;
  smpId: string;
}

export interface TpSlInput {
  type: TpSlType;
  side: Side;
  /** Units; 0 = the whole position. */
  quantity: number;
  /** Units. */
  price: number;
}

export interface PlaceOrderInput {
  /** Client order id, v2 format. */
  id: string;
  instrument: string;
  side: Side;
  type: 'LIMIT' | 'MARKET' | 'STOP_LIMIT';
  /** LIMIT: GTC/DAY/IOC/FOK; MARKET: IOC/FOK; STOP_LIMIT: GTC. */
  timeInForce: TimeInForce;
  leverage: number;
  /** Units; required for LIMIT and STOP_LIMIT, derived while matching for MARKET. */
  quantity?: number;
  limitPrice?: number;
  stopPrice?: number;
  /** MARKET: collateral to spend, Units (1e-8 of USDT). */
  cashQuantity?: number;
  postOnly?: boolean;
  smp?: SelfMatchPrevention;
  /** Engine-internal orders (liquidation, tpsl…) set a group; user orders are `manually`. */
  group?: OrderGroup;
  /** Set by position-close: the order may only reduce the position. */
  reduceOnly?: boolean;
  tpsl?: TpSlInput[];
}

export interface ReplaceInput {
  orderId: string;
  quantity: number;
  limitPrice: number;
  stopPrice?: number;
  postOnly?: boolean;
  smp?: SelfMatchPrevention;
  /** EIP-712 digest of the signed replace (0x + 64 hex), spent while the order is open (spent-signatures.ts). */
  digest?: string;
}

export type Command =
  | { kind: 'instrument.upsert'; ts: number; config: InstrumentConfig }
  | { kind: 'instrument.trading'; ts: number; instrument: string; trading: TradingState }
  | { kind: 'matcher.state'; ts: number; state: string }
  | { kind: 'funds.deposit'; ts: number; userId: number; amount: string; transferId: string }
  /** Locks `amount` for a withdrawal (pending). */
  | { kind: 'funds.withdraw'; ts: number; userId: number; amount: string; transferId: string; recipient?: string; digest?: string }
  /** Finishes a pending withdrawal: done (money leaves) or error (lock released). */
  | { kind: 'funds.withdraw.settle'; ts: number; transferId: string; success: boolean }
  /** Operator hold on a pending withdrawal (status blocked; settle is refused) or its release (pending). */
  | { kind: 'funds.withdraw.hold'; ts: number; transferId: string; hold: boolean }
  | { kind: 'order.place'; ts: number; userId: number; order: PlaceOrderInput }
  | { kind: 'order.placeBatch'; ts: number; userId: number; instrument: string; orders: PlaceOrderInput[] }
  | { kind: 'order.replace'; ts: number; userId: number; replace: ReplaceInput }
  | { kind: 'order.replaceBatch'; ts: number; userId: number; instrument: string; items: ReplaceInput[] }
  | { kind: 'order.cancel'; ts: number; userId: number; orderId: string }
  | { kind: 'order.cancelAll'; ts: number; userId: number; instrument: string }
  | { kind: 'order.cancelMany'; ts: number; userId: number; orderIds: string[] }
  | { kind: 'position.leverage'; ts: number; userId: number; instrument: string; leverage: number }
  /** Market order that only reduces the position; quantity 0 = the whole position. */
  | { kind: 'position.close'; ts: number; userId: number; instrument: string; id: string; quantity: number; leverage: number }
  /** Index/mark price update (price ticks are commands so replay reproduces triggers). */
  | { kind: 'price.tick'; ts: number; instrument: string; indexPrice: number; markPrice?: number }
  /** Funding settlement for the interval that just ended (sent by the app's funding clock). */
  | { kind: 'funding.settle'; ts: number; instrument: string; intervalMs: number }
  /** TpSl for a position (orderId null) or waiting on an order of the user (waitOrder until it fills). */
  | { kind: 'tpsl.create'; ts: number; userId: number; instrument: string; type: TpSlType; side: Side; quantity: number; price: number; orderId: string | null; digest?: string }
  | { kind: 'tpsl.modify'; ts: number; userId: number; instrument: string; id: string; type: TpSlType; side: Side; quantity: number; price: number; digest?: string }
  | { kind: 'tpsl.cancel'; ts: number; userId: number; instrument: string; id: string };

export type CommandKind = Command['kind'];

export type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** A command as its sender builds it (gateway, feeds, bots, operator); the sequencer stamps `ts` and journals it. */
export type CommandInput = DistributiveOmit<Command, 'ts'>;
/** The command path: applies, journals, and resolves once the command is durable. */
export type Submit = (cmd: CommandInput) => Promise<CommandResult>;

/** The events one journaled command produced: what the event bus carries, in seq order. */
export interface EventBatch {
  seq: number;
  ts: number;
  kind: CommandKind;
  /** Empty for a refused command; published anyway so subscribers can track the seq they are at. */
  events: EngineEvent[];
}
