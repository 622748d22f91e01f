/**
 * Runs the golden streams and digests what the engine did: every reply and event (JSON, bigints as
 * strings), the state hash where the stream is snapshotted and restored, and the final state hash.
 * Shared by the golden test and its recorder (scripts/golden-record.ts).
 */
import { createHash } from 'node:crypto';
import { createEngine, restoreEngine, type Engine } from '../../src/engine/engine.js';
import type { EngineEvent } from '../../src/engine/records.js';
import { goldenStreams, type GoldenStream } from './golden-streams.js';

export const DIGESTS_FILE = new URL('./golden-digests.json', import.meta.url);
/** Streams per flavour (four flavours) in `npm test`; GOLDEN_STREAMS raises it for a longer search. */
export const DEFAULT_PER_FLAVOUR = 375;

const json = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x));

/** What the streams reached, summed: a stream set that stops reaching a path fails the test. */
export interface Reached {
  commands: number; refusals: number; trades: number; liquidationFills: number; adlFills: number; reserveCovered: number;
  marginCalls: number; stopsTriggered: number; tpslDone: number; fundingPayments: number; dayExpired: number; withdrawals: number;
}

export function runStream(stream: GoldenStream, reached: Reached): string {
  const digest = createHash('sha256');
  let engine = createEngine();
  stream.commands.forEach((cmd, i) => {
    const result = engine.apply(cmd);
    digest.update(json(result));
    count(reached, result.reply.ok, result.events);
    if (i % 25 === 24) digest.update(json(views(engine)));
    if (i === stream.restoreAt) {
      const hash = engine.stateHash();
      engine = restoreEngine(JSON.parse(JSON.stringify(engine.snapshot())));
      if (engine.stateHash() !== hash) throw new Error(`${stream.name}: restored state hash differs at command ${i}`);
      digest.update(hash);
    }
  });
  digest.update(engine.stateHash());
  digest.update(json(views(engine)));
  engine.checkInvariants();
  return digest.digest('hex').slice(0, 24);
}

/** Everything the gateway reads from the live engine, for every user and instrument. */
function views(engine: Engine): unknown {
  const out: unknown[] = [engine.matcher(), engine.instrumentConfigs(), engine.pendingTransfers(), engine.ledger()];
  for (const id of ['BTCUSDT', 'ETHUSDT', 'NONE']) {
    out.push(engine.instrumentConfig(id), engine.instrumentState(id), engine.depth(id, 20, 0), engine.depth(id, 5, 100_000_000));
  }
  for (const u of [1, 2, 3, 4, 99]) {
    out.push(engine.account(u), engine.openOrders(u), engine.positions(u), engine.tpsls(u), engine.pendingTransfers(u));
    out.push(engine.power(u, 'BTCUSDT'), engine.power(u, 'ETHUSDT'), engine.power(u, 'NONE'));
    for (const o of engine.openOrders(u).slice(0, 3)) out.push(engine.getOrder(u, o.id), engine.hasOrderId(u, o.id));
    out.push(engine.getOrder(u, 'not-an-id'), engine.hasOrderId(u, 'not-an-id'));
  }
  for (const t of engine.pendingTransfers().slice(0, 3)) out.push(engine.transfer(t.id), engine.hasTransfer(t.id));
  out.push(engine.transfer('none'), engine.hasTransfer('none'));
  return out;
}

function count(r: Reached, ok: boolean, events: EngineEvent[]): void {
  r.commands++;
  if (!ok) r.refusals++;
  for (const e of events) {
    if (e.type === 'trade') r.trades++;
    else if (e.type === 'fill' && e.fill.orderId.includes(':ffffffffff')) {
      // system order ids; which kind is told by the order events below
    } else if (e.type === 'order') {
      const o = e.order;
      if (o.group === 'liquidation' && o.filledQuantity > 0 && o.status !== 'NEW') r.liquidationFills++;
      if (o.group === 'adl' && o.status === 'FILLED') r.adlFills++;
      if (o.triggeredAt !== null && o.type === 'STOP_LIMIT' && o.status !== 'NEW') r.stopsTriggered++;
      if (o.status === 'EXPIRED' && o.rejectedReason === 'Day order expired') r.dayExpired++;
    } else if (e.type === 'tpsl' && e.tpsl.status === 'done') r.tpslDone++;
    else if (e.type === 'funding') {
      if (e.funding.reason === 'funding') r.fundingPayments++;
      if (e.funding.reason === 'reserve-fund') r.reserveCovered++;
      if (e.funding.reason === 'withdraw') r.withdrawals++;
    } else if (e.type === 'account' && e.marginCall) r.marginCalls++;
  }
}

export function emptyReached(): Reached {
  return { commands: 0, refusals: 0, trades: 0, liquidationFills: 0, adlFills: 0, reserveCovered: 0, marginCalls: 0, stopsTriggered: 0, tpslDone: 0, fundingPayments: 0, dayExpired: 0, withdrawals: 0 };
}

export function runGolden(perFlavour: number): { digests: Record<string, string>; reached: Reached } {
  const reached = emptyReached();
  const digests: Record<string, string> = {};
  for (const s of goldenStreams(perFlavour)) digests[s.name] = runStream(s, reached);
  return { digests, reached };
}
