/**
 * A leader for the cluster tests (Sequencer + JetStream journal on the machine's NATS, as in the journal's
 * e2e tests) and a small market workload: instruments, prices, deposits, orders that rest, match and are
 * refused. The clock is fixed and advances 1 ms per call, so two sequencers fed the same commands stamp the same ts.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { parseMoney, parseUnits } from '../../src/domain/fixed.js';
import { DEMO_INSTRUMENTS, DEMO_START_PRICES } from '../../src/domain/instrument.js';
import { orderIdPrefix } from '../../src/domain/order-id.js';
import type { CommandInput } from '../../src/engine/commands.js';
import { createEngine } from '../../src/engine/engine.js';
import { openJetStreamJournal } from '../../src/journal/jetstream-journal.js';
import type { CommandJournal, SnapshotStore } from '../../src/journal/ports.js';
import type { EventBroker } from '../../src/sequencer/ports.js';
import { Sequencer } from '../../src/sequencer/sequencer.js';
import { silentLogger } from '../journal/helpers.js';

export const T0 = Date.UTC(2026, 10, 28, 10, 0, 0);

export function steppingClock(): () => number {
  let t = T0;
  return () => ++t;
}

export function sequencerOn(journal: CommandJournal, options: { snapshots?: SnapshotStore; bus?: EventBroker } = {}): Sequencer {
  return new Sequencer({ engine: createEngine(), journal, clock: steppingClock(), logger: silentLogger, snapshotOnStop: false, ...options });
}

export interface Leader {
  sequencer: Sequencer;
  stop(): Promise<void>;
}

/** A leader on a fresh (empty) stream of `cluster`. */
export async function startLeader(nc: NatsConnection, cluster: string, options: { snapshots?: SnapshotStore; bus?: EventBroker } = {}): Promise<Leader> {
  const journal = await openJetStreamJournal({ nc, cluster });
  const sequencer = sequencerOn(journal, options);
  return {
    sequencer,
    stop: async () => {
      await sequencer.stop();
      await journal.close();
    },
  };
}

let ids = 0;
const orderId = (): string => `${orderIdPrefix(T0)}:${(++ids).toString(16).padStart(26, '0')}`;

export const setupCommands = (): CommandInput[] => [
  ...DEMO_INSTRUMENTS.map((config): CommandInput => ({ kind: 'instrument.upsert', config })),
  ...DEMO_INSTRUMENTS.map((config): CommandInput => ({ kind: 'price.tick', instrument: config.id, indexPrice: parseUnits(DEMO_START_PRICES[config.id]) })),
];

export const deposit = (userId: number, usdt: string): CommandInput => ({ kind: 'funds.deposit', userId, amount: parseMoney(usdt).toString(), transferId: `dep-${userId}-${++ids}` });

export function limit(userId: number, side: 'BUY' | 'SELL', qty: string, price: string, id = orderId()): CommandInput {
  return {
    kind: 'order.place', userId,
    order: { id, instrument: 'BTCUSDT', side, type: 'LIMIT', timeInForce: 'GTC', leverage: 10, quantity: parseUnits(qty), limitPrice: parseUnits(price) },
  };
}

/** Two funded users trading: resting orders, a cross that fills, a cancel, and an order refused for margin. */
export function tradingCommands(round: number): CommandInput[] {
  const [a, b] = [10 + round * 2, 11 + round * 2];
  const resting = orderId();
  return [
    deposit(a, '100000'),
    deposit(b, '100000'),
    limit(a, 'BUY', '0.01', '100000', resting),
    limit(a, 'BUY', '0.02', '99000'),
    limit(b, 'SELL', '0.015', '99500'),
    { kind: 'order.cancel', userId: a, orderId: resting },
    limit(b, 'SELL', '5000', '105000'),
  ];
}
