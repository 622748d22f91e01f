// A long simulated run of the demo market makers on the real engine behind a real sequencer (memory
// journal, simulated clock): the index random-walks, the bots requote and cross every round, and after
// every round the book is not crossed and the engine's invariants (money conservation, OI balance,
// reserved volume) hold. The journal then replays to the same state hash.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { DEMO_INSTRUMENTS, DEMO_START_PRICES } from '../../src/domain/instrument.js';
import { parseMoney, parseUnits } from '../../src/domain/fixed.js';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import type { EngineEvent } from '../../src/engine/records.js';
import { MemoryJournal } from '../../src/journal/memory-journal.js';
import { InProcessEventBroker } from '../../src/sequencer/event-bus.js';
import { Sequencer } from '../../src/sequencer/sequencer.js';
import { verifyJournal } from '../../src/sequencer/recovery.js';
import { DEFAULT_MARKET_MAKER_SETTINGS, MarketMakerFleet } from '../../src/simulation/market-maker.js';
import { mulberry32 } from '../../src/simulation/seeded-random.js';

const silent = pino({ level: 'silent' });
const ROUNDS = 600;
const BOTS = [101, 102, 103];

function assertBookNotCrossed(engine: Engine, round: number): void {
  for (const c of engine.instrumentConfigs()) {
    const d = engine.depth(c.id, 1, 0);
    const bid = d?.bids[d.bids.length - 1]?.price;
    const ask = d?.asks[0]?.price;
    if (bid !== undefined && ask !== undefined) assert.ok(bid < ask, `round ${round}: ${c.id} crossed book bid ${bid} ≥ ask ${ask}`);
  }
}

describe('demo market makers: long simulated run', () => {
  test(`${ROUNDS} rounds × ${BOTS.length} bots × 2 instruments with a random-walk index`, async () => {
    const engine = createEngine();
    const journal = new MemoryJournal();
    const bus = new InProcessEventBroker({ logger: silent });
    let now = Date.UTC(2026, 0, 5, 22, 0, 0); // crosses a UTC midnight during the run
    const sequencer = new Sequencer({ engine, journal, bus, clock: () => now, logger: silent });
    const submit = (cmd: Parameters<Sequencer['submit']>[0]) => sequencer.submit(cmd);
    let trades = 0;
    const traders = new Set<number>();
    bus.subscribe('test', (batch) => {
      for (const e of batch.events as EngineEvent[]) {
        if (e.type === 'trade') trades++;
        if (e.type === 'fill') traders.add(e.fill.userId);
      }
    });

    for (const inst of DEMO_INSTRUMENTS) assert.ok((await submit({ kind: 'instrument.upsert', config: inst })).reply.ok);
    const index = new Map<string, number>();
    for (const inst of DEMO_INSTRUMENTS) {
      index.set(inst.id, parseUnits(DEMO_START_PRICES[inst.id]));
      assert.ok((await submit({ kind: 'price.tick', instrument: inst.id, indexPrice: index.get(inst.id)! })).reply.ok);
    }
    const funds = parseMoney('1000000');
    for (const id of BOTS) {
      assert.ok((await submit({ kind: 'funds.deposit', userId: id, amount: funds.toString(), transferId: `fund-${id}` })).reply.ok);
    }

    const random = mulberry32(42);
    const fleet = new MarketMakerFleet(
      { engine, submit, clock: () => now, random: mulberry32(7), logger: silent },
      { ...DEFAULT_MARKET_MAKER_SETTINGS, aggressiveness: 0.5 },
      BOTS,
    );
    for (let round = 1; round <= ROUNDS; round++) {
      now += 15_000;
      for (const inst of DEMO_INSTRUMENTS) {
        // ±0.3 % steps, rounded to the price increment.
        const tick = parseUnits(inst.priceIncrement);
        const next = Math.round((index.get(inst.id)! * (1 + (random() - 0.5) * 0.006)) / tick) * tick;
        index.set(inst.id, next);
        assert.ok((await submit({ kind: 'price.tick', instrument: inst.id, indexPrice: next })).reply.ok);
      }
      await fleet.round();
      assertBookNotCrossed(engine, round);
      engine.checkInvariants();
    }
    await sequencer.stop();

    // Money: nothing created or lost — deposits = balances + fees + reserve − open cost (checked above every
    // round); here the totals as a final, explicit statement.
    const l = engine.ledger();
    assert.equal(l.deposits, funds * BigInt(BOTS.length));
    assert.equal(l.balances + l.fees + l.reserveFund - l.openCost, l.deposits - l.withdrawals);
    assert.ok(l.fees > 0n, 'trading fees were charged');

    // The market was alive: trades on both instruments, every bot traded, books two-sided.
    assert.ok(trades > ROUNDS / 2, `trades ${trades}`);
    assert.deepEqual([...traders].sort(), BOTS);
    for (const inst of DEMO_INSTRUMENTS) {
      const d = engine.depth(inst.id, 100, 0)!;
      assert.ok(d.bids.length >= DEFAULT_MARKET_MAKER_SETTINGS.levels && d.asks.length >= DEFAULT_MARKET_MAKER_SETTINGS.levels, `${inst.id} depth`);
      assert.notEqual(engine.instrumentState(inst.id)?.lastPrice, null);
    }
    // Bots go through the command path and the engine accepted their commands.
    const c = fleet.counters;
    assert.equal(c.refused, 0, `refused commands: ${c.refused}`);
    assert.ok(c.rejectedOrders < c.commands / 20, `rejected orders ${c.rejectedOrders} of ${c.commands} commands`);
    assert.ok(c.crossingOrders > 0);
    // Inventory control keeps positions bounded (max inventory 100k USDT, 10x leverage).
    for (const id of BOTS) {
      for (const p of engine.positions(id)) {
        const notional = (p.quantity / 1e8) * (engine.instrumentState(p.instrument)!.markPrice! / 1e8);
        assert.ok(notional < 400_000, `bot ${id} ${p.instrument} position notional ${notional}`);
      }
    }

    // Replay of the journal reaches the same state.
    const v = await verifyJournal({ journal, createEngine, expected: { seq: engine.seq, stateHash: engine.stateHash() } });
    assert.ok(v.ok, `replay hash ${v.replayedHash} ≠ ${v.expectedHash} ${v.invariantError ?? ''}`);
  });
});
