/**
 * The engine's stages, one module each, in the order a command meets them (engine.ts wires them):
 * validation (order-rules), order entry and amendment, risk checks, matching, settlement, the order
 * lifecycle, triggers (stops and TpSl), funds, prices and funding, instruments, positions. Liquidation and
 * ADL (liquidation.ts) run after every command. Stages call each other through this record.
 */
import type { Funds } from './funds.js';
import type { Instruments } from './instruments.js';
import type { Matching } from './matching.js';
import type { OrderAmend } from './order-amend.js';
import type { OrderEntry } from './order-entry.js';
import type { OrderLifecycle } from './order-lifecycle.js';
import type { Positions } from './positions.js';
import type { PricesFunding } from './prices-funding.js';
import type { RiskChecks } from './risk-checks.js';
import type { Settlement } from './settlement.js';
import type { StopTriggers } from './stop-triggers.js';
import type { TpSlOrders } from './tpsl-orders.js';

export interface Stages {
  entry: OrderEntry;
  amend: OrderAmend;
  risk: RiskChecks;
  matching: Matching;
  settlement: Settlement;
  lifecycle: OrderLifecycle;
  stops: StopTriggers;
  tpsl: TpSlOrders;
  funds: Funds;
  prices: PricesFunding;
  instruments: Instruments;
  positions: Positions;
}
