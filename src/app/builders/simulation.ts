/**
 * The demo environment (SEED_DEMO, MARKET_MAKERS, DEMO_WALLET): the demo instruments on an empty engine, the
 * market makers' accounts, and the demo wallet, all through the ordinary command path. The bots start
 * trading last (startMarketMakers), once the gateway listens, and are the first thing to stop.
 */
import type pino from 'pino';
import { DEMO_INSTRUMENTS, DEMO_START_PRICES } from '../../domain/instrument.js';
import { parseUnits } from '../../domain/fixed.js';
import type { ExchangeEngine } from '../../engine/api.js';
import type { Submit } from '../../engine/commands.js';
import { MarketMakerFleet } from '../../simulation/market-maker.js';
import { setUpDemoWallet, setUpMarketMakers, type DemoWallet, type UserDirectory } from '../../simulation/system-accounts.js';
import type { ExchangeConfig } from '../config.js';
import type { Built } from '../shutdown-registry.js';

export interface Demo {
  /** The market-making bots (not trading until startMarketMakers), when MARKET_MAKERS > 0. */
  marketMakers: MarketMakerFleet | undefined;
  /** The funded demo wallet, to print at start-up. */
  demoWallet: DemoWallet | undefined;
}

type DemoConfig = Pick<ExchangeConfig, 'seedDemo' | 'marketMakers' | 'demoWallet' | 'faucetAmount'>;
interface DemoDeps {
  dataDir: string;
  engine: ExchangeEngine;
  submit: Submit;
  users: UserDirectory;
  log: pino.Logger;
}

async function seedDemoInstruments({ engine, submit, log }: DemoDeps): Promise<void> {
  if (engine.instrumentConfigs().length > 0) return;
  for (const inst of DEMO_INSTRUMENTS) {
    const r = await submit({ kind: 'instrument.upsert', config: inst });
    if (!r.reply.ok) log.warn({ instrument: inst.id, error: r.reply.error }, 'demo instrument refused');
  }
  for (const inst of DEMO_INSTRUMENTS) {
    const price = DEMO_START_PRICES[inst.id];
    if (!price) continue;
    const r = await submit({ kind: 'price.tick', instrument: inst.id, indexPrice: parseUnits(price) });
    if (!r.reply.ok) log.warn({ instrument: inst.id, error: r.reply.error }, 'demo start price refused');
  }
  log.info({ instruments: DEMO_INSTRUMENTS.map((i) => i.id) }, 'seeded demo instruments');
}

export async function buildDemo(config: DemoConfig, deps: DemoDeps): Promise<Built<Demo>> {
  const { engine, submit, users, log } = deps;
  if (config.seedDemo) await seedDemoInstruments(deps);
  const mm = config.marketMakers;
  const marketMakers = mm.count > 0
    ? new MarketMakerFleet({ engine, submit, clock: Date.now, logger: log.child({ module: 'market-makers' }) }, mm,
      await setUpMarketMakers(users, engine, submit, mm.count, mm.funds))
    : undefined;
  const demoWallet = config.demoWallet
    ? await setUpDemoWallet(deps.dataDir, users, engine, submit, config.faucetAmount === '0' ? '10000' : config.faucetAmount)
    : undefined;
  // Accounts and instruments are journaled state: nothing to stop.
  return { service: { marketMakers, demoWallet }, stop: () => undefined };
}

/** The bots start quoting; their stop waits for the round in flight (their commands must not race the stop). */
export function startMarketMakers(fleet: MarketMakerFleet | undefined, intervalMs: number, log: pino.Logger): Built<void> {
  if (fleet) {
    fleet.start(intervalMs);
    log.info({ bots: fleet.userIds, intervalMs }, 'market makers started');
  }
  return { service: undefined, stop: () => fleet?.stop() };
}
