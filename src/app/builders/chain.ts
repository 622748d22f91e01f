/** The chain adapter: the simulated network (a real chain watcher implements the same port) and the bridge. */
import type pino from 'pino';
import { ChainBridge } from '../../chain/chain-bridge.js';
import type { PayoutGuard } from '../../chain/pay-once.js';
import { SimulatedChain } from '../../chain/simulated-chain.js';
import type { ExchangeEngine } from '../../engine/api.js';
import type { Submit } from '../../engine/commands.js';
import type { EventBroker } from '../../sequencer/ports.js';
import type { ExchangeConfig } from '../config.js';
import type { Built } from '../shutdown-registry.js';

export interface Chain {
  bridge: ChainBridge;
  simulated: SimulatedChain;
}

export function buildChain(
  config: Pick<ExchangeConfig, 'chainDelayMs' | 'chainFailureRate' | 'chainSeed'>,
  deps: { engine: ExchangeEngine; submit: Submit; bus: Pick<EventBroker, 'subscribe'>; log: pino.Logger; payouts?: PayoutGuard; simulated?: SimulatedChain },
): Built<Chain> {
  // A cluster passes the network shared by its engines (NatsSimulatedChain); one process keeps its own.
  const simulated = deps.simulated ?? new SimulatedChain({ delayMs: config.chainDelayMs, failureRate: config.chainFailureRate, seed: config.chainSeed });
  const bridge = new ChainBridge({ network: simulated, engine: deps.engine, submit: deps.submit, logger: deps.log.child({ module: 'chain' }), payouts: deps.payouts });
  deps.bus.subscribe('chain', bridge.onBatch);
  bridge.start();
  return { service: { bridge, simulated }, stop: () => bridge.stop() };
}
