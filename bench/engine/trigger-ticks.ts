// Dev aid: the cost of a price tick while many untriggered STOP_LIMIT orders and active TpSl wait far from
// the market (none fires), for each source tree given, so a worktree of an older commit shows what a change
// did to the tick path:
//   git worktree add /tmp/perpx-base <rev>
//   node --import tsx bench/engine/trigger-ticks.ts /tmp/perpx-base .
// Env: STOPS (untriggered stops, default 100,000), TPSL (active TpSl, default 10,000), TICKS (default 2,000).
// Prints µs per tick (median, p99), and the same with nothing waiting (1,000 one-lot positions either way) as the floor.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Command } from '../../src/engine/commands.js';
import type { ExchangeEngine } from '../../src/engine/api.js';
import { orderIdPrefix } from '../../src/domain/order-id.js';
import { envInt } from '../env-int.js';
import { LEVERAGE, setupCommands } from './runs.js';
import { median } from './stats.js';
import { BASE_TS, INSTRUMENTS, orderId } from './workload.js';

const USERS = 1000;
const STOPS = envInt('STOPS', 100_000);
const TPSL = envInt('TPSL', 10_000);
const TICKS = envInt('TICKS', 2_000);
const spec = INSTRUMENTS[0];

type Factory = () => ExchangeEngine;

function applyAll(engine: ExchangeEngine, cmds: Command[]): void {
  for (const c of cmds) {
    const r = engine.apply(c);
    if (!r.reply.ok) throw new Error(`${c.kind} refused: ${r.reply.error.code} ${r.reply.error.message}`);
    const order = 'order' in r.reply ? r.reply.order : undefined;
    if (order?.status === 'REJECTED') throw new Error(`order rejected: ${order.rejectedReason}`);
  }
}

/** Stops far above (BUY) and below (SELL) the market, and TpSl far from it on one-lot positions. */
function waitingLoad(stops: number, tpsl: number): Command[] {
  const cmds: Command[] = [];
  const ts = BASE_TS + USERS + 1;
  const prefix = orderIdPrefix(ts);
  let n = 0x6000_0000;
  const lot = spec.lot;
  const far = (k: number, up: boolean): number => {
    const offset = Math.floor((spec.startPrice * 4) / 100 / spec.tick) * spec.tick + (k % 1_000) * spec.tick;
    return up ? spec.startPrice + offset : spec.startPrice - offset;
  };
  for (let k = 0; k < stops; k++) {
    const up = k % 2 === 0;
    const stop = far(k, up);
    cmds.push({
      ts, kind: 'order.place', userId: 1 + (k % USERS),
      order: { id: orderId(prefix, n++), instrument: spec.id, side: up ? 'BUY' : 'SELL', type: 'STOP_LIMIT', timeInForce: 'GTC', leverage: LEVERAGE, quantity: lot, limitPrice: stop, stopPrice: stop },
    });
  }
  // Users 2j+1 buy one lot from users 2j+2 at the start price: every user holds a position (which a tick
  // revalues whether or not anything waits), so the floor row has the same holders.
  for (let u = 1; u < USERS; u += 2) {
    cmds.push({ ts, kind: 'order.place', userId: u + 1, order: { id: orderId(prefix, n++), instrument: spec.id, side: 'SELL', type: 'LIMIT', timeInForce: 'GTC', leverage: LEVERAGE, quantity: lot, limitPrice: spec.startPrice } });
    cmds.push({ ts, kind: 'order.place', userId: u, order: { id: orderId(prefix, n++), instrument: spec.id, side: 'BUY', type: 'LIMIT', timeInForce: 'GTC', leverage: LEVERAGE, quantity: lot, limitPrice: spec.startPrice } });
  }
  {
    for (let k = 0; k < tpsl; k++) {
      const userId = 1 + (k % USERS);
      const long = userId % 2 === 1;
      const takeProfit = k % 2 === 0;
      cmds.push({
        ts, kind: 'tpsl.create', userId, instrument: spec.id, orderId: null, quantity: 0,
        type: takeProfit ? 'take-profit' : 'stop-loss', side: long ? 'SELL' : 'BUY',
        price: far(k, long === takeProfit),
      });
    }
  }
  return cmds;
}

/** µs per tick over TICKS ticks that move the mark a few ticks around the start price. */
function tickCost(engine: ExchangeEngine): { p50: number; p99: number } {
  let ts = BASE_TS + USERS + 10;
  const lat: number[] = [];
  for (let i = 0; i < TICKS; i++) {
    const price = spec.startPrice + ((i % 7) - 3) * spec.tick;
    const cmd: Command = { ts: ++ts, kind: 'price.tick', instrument: spec.id, indexPrice: price, markPrice: price };
    const t0 = process.hrtime.bigint();
    const r = engine.apply(cmd);
    lat.push(Number(process.hrtime.bigint() - t0) / 1e3);
    if (!r.reply.ok) throw new Error(`tick refused: ${r.reply.error.message}`);
  }
  lat.sort((a, b) => a - b);
  return { p50: median(lat), p99: lat[Math.floor(lat.length * 0.99)] };
}

for (const dir of process.argv.slice(2)) {
  const mod = (await import(pathToFileURL(resolve(dir, 'src/engine/engine.ts')).href)) as { createEngine: Factory };
  const row = (stops: number, tpsl: number): string => {
    const engine = mod.createEngine();
    applyAll(engine, setupCommands(USERS));
    applyAll(engine, waitingLoad(stops, tpsl));
    tickCost(engine); // warm-up
    const { p50, p99 } = tickCost(engine);
    return `${stops.toLocaleString('en-US')} stops + ${tpsl.toLocaleString('en-US')} TpSl: p50 ${p50.toFixed(1)} µs, p99 ${p99.toFixed(1)} µs per tick`;
  };
  console.log(`${dir}: ${row(0, 0)}; ${row(STOPS, 0)}; ${row(0, TPSL)}; ${row(STOPS, TPSL)}`);
}
