/**
 * Property tests over random command streams (fast-check): several users on both demo instruments placing
 * random limit / market / IOC / FOK / post-only / stop orders (some with TpSl), batch creates, cancels
 * (single, mass, by id list), replaces (single and batch), leverage changes, price ticks (index-only and
 * explicit mark), deposits, withdrawals and their settlement, position closes, TpSl create/modify/cancel,
 * matcher halts and instrument trading states, with time jumps that cross UTC midnight (DAY expiry). Signed
 * withdraw / replace / TpSl commands draw their digests from a small pool, so repeats (refused while spent)
 * and replace digests ending with their orders are exercised too.
 *
 * Properties:
 *  (a) checkInvariants() holds after every command (money conservation, long OI = short OI, no crossed book…);
 *  (b) determinism: the same commands on two fresh engines give equal stateHash and equal events at every step;
 *  (c) snapshot → JSON → restoreEngine at a random cut, then the rest of the commands, gives the uninterrupted
 *      engine's stateHash after every command (and the same replies and events);
 *  (d) a refused command ({ok:false}) changes nothing but seq and emits nothing (checked for commands on the
 *      same UTC day as the previous one: the first command of a day also runs DAY expiry and id pruning).
 *  (e) applied with `retractRefusal` (as the sequencer does), a retracted refusal leaves the state hash and
 *      seq as they were; the engine ends in the state of one that counted every refusal (but seq), and a
 *      replay of only the commands that used a seq (the journal) reaches its state hash exactly.
 *
 * Random ops (random-ops.ts) are generated abstractly and turned into concrete commands by a pure function
 * (`materialize`), so every engine sees exactly the same list. Set FC_SEED / FC_RUNS to reproduce or to
 * search harder.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { dayNumber } from '../../src/domain/order-id.js';
import type { Command } from '../../src/engine/commands.js';
import { createEngine, restoreEngine, type Engine } from '../../src/engine/engine.js';
import type { CommandResult } from '../../src/engine/records.js';
import { serializeState } from '../../src/engine/snapshot.js';
import { materialize, opsArb } from './random-ops.js';

// ------------------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------------------

const bigintSafe = (_k: string, v: unknown): unknown => (typeof v === 'bigint' ? `${v}n` : v);

function eventsJson(r: CommandResult): string {
  return JSON.stringify(r, bigintSafe);
}

/**
 * Equality of two long strings without node's diff (which is very slow on long single-line strings, and
 * fast-check calls it on every shrink attempt): reports the first difference with some context.
 */
function sameText(actual: string, expected: string, what: string): void {
  if (actual === expected) return;
  let i = 0;
  while (i < actual.length && actual[i] === expected[i]) i++;
  const from = Math.max(0, i - 300);
  throw new Error(`${what}\n  first difference at ${i}:\n  actual:   …${actual.slice(from, i + 200)}\n  expected: …${expected.slice(from, i + 200)}`);
}

function stateWithoutSeq(e: Engine): string {
  return JSON.stringify({ ...serializeState(e.s), seq: 0 });
}

function apply(e: Engine, c: Command, i: number): CommandResult {
  const r = e.apply(c);
  try {
    e.checkInvariants();
  } catch (err) {
    throw new Error(`after command #${i} ${JSON.stringify(c)}: ${(err as Error).message}`);
  }
  return r;
}

/** What the generated streams exercised, summed over all runs (so a silent generator cannot pass vacuously). */
const seen = {
  commands: 0, refusals: 0, trades: 0, rejected: 0, marginRejected: 0, expired: 0, dayExpired: 0, cancelled: 0, smpCancelled: 0, stopTriggered: 0,
  tpslDone: 0, positionsClosed: 0, withdrawDone: 0, withdrawFailed: 0, restoredMidStream: 0, signatureReused: 0, replaceSignaturesEnded: 0,
  retracted: 0,
};

function tally(r: CommandResult): void {
  seen.commands++;
  if (!r.reply.ok) seen.refusals++;
  if (!r.reply.ok && r.reply.error.code === 'SIGNATURE_ALREADY_USED') seen.signatureReused++;
  if (r.reply.ok && r.reply.batch?.some((b) => /already used/.test(b.failReason ?? ''))) seen.signatureReused++;
  for (const e of r.events) {
    if (e.type === 'trade') seen.trades++;
    if (e.type === 'order') {
      const o = e.order;
      if (o.status === 'REJECTED') seen.rejected++;
      if (o.rejectedReason === 'Insufficient available balance') seen.marginRejected++;
      if (o.status === 'EXPIRED') seen.expired++;
      if (o.status === 'EXPIRED' && o.rejectedReason === 'Day order expired') seen.dayExpired++;
      if (o.status === 'CANCELLED') seen.cancelled++;
      if (o.rejectedReason === 'Self-match prevention') seen.smpCancelled++;
      if (o.triggeredAt !== null && o.triggeredAt === o.updatedAt) seen.stopTriggered++;
    }
    if (e.type === 'tpsl' && e.tpsl.status === 'done') seen.tpslDone++;
    if (e.type === 'position' && e.position.quantity === 0) seen.positionsClosed++;
    if (e.type === 'transfer' && e.transfer.type === 'withdraw' && e.transfer.status === 'done') seen.withdrawDone++;
    if (e.type === 'transfer' && e.transfer.type === 'withdraw' && e.transfer.status === 'error') seen.withdrawFailed++;
  }
}

const RUNS = Number(process.env.FC_RUNS ?? 0);
const SEED = process.env.FC_SEED !== undefined ? Number(process.env.FC_SEED) : undefined;
function params(numRuns: number): fc.Parameters<unknown> {
  return { numRuns: RUNS > 0 ? RUNS : numRuns, includeErrorInReport: true, ...(SEED !== undefined ? { seed: SEED } : {}) };
}

// ------------------------------------------------------------------------------------------------------
// Properties
// ------------------------------------------------------------------------------------------------------

describe('engine properties over random command streams', () => {
  it('(a) invariants hold after every command and (d) refused commands change nothing but seq', () => {
    fc.assert(
      fc.property(opsArb(30, 160), (ops) => {
        const cmds = materialize(ops);
        const e = createEngine();
        let prevTs = cmds[0].ts;
        cmds.forEach((c, i) => {
          // Time-driven housekeeping (DAY expiry, pruning of old ids) runs on the first command of a new
          // UTC day whatever that command is, so (d) is checked for commands on the same day as the last one.
          const sameDay = dayNumber(c.ts) === dayNumber(prevTs);
          const before = sameDay ? stateWithoutSeq(e) : '';
          const seq = e.seq;
          const spentBefore = e.s.spent.scoped;
          const r = apply(e, c, i);
          tally(r);
          if (e.s.spent.scoped < spentBefore) seen.replaceSignaturesEnded++;
          assert.equal(e.seq, seq + 1);
          if (!r.reply.ok && sameDay) {
            assert.ok(r.events.length === 0, `refused command #${i} ${JSON.stringify(c)} emitted events`);
            sameText(stateWithoutSeq(e), before, `refused command #${i} ${JSON.stringify(c)} (${r.reply.error.code}) changed the state`);
          }
          prevTs = c.ts;
        });
      }),
      params(60),
    );
  });

  it('(b) determinism: two fresh engines agree on stateHash and events after every command', () => {
    fc.assert(
      fc.property(opsArb(20, 120), (ops) => {
        const cmds = materialize(ops);
        const a = createEngine();
        const b = createEngine();
        cmds.forEach((c, i) => {
          const ra = a.apply(structuredClone(c));
          const rb = b.apply(structuredClone(c));
          sameText(eventsJson(ra), eventsJson(rb), `results differ at command #${i}`);
          assert.ok(a.stateHash() === b.stateHash(), `state differs at command #${i}`);
        });
      }),
      params(40),
    );
  });

  it('(c) snapshot → JSON → restore at a random cut, then the rest, reaches the same state', () => {
    fc.assert(
      fc.property(opsArb(20, 140), fc.nat(), (ops, cutSeed) => {
        const cmds = materialize(ops);
        const cut = cutSeed % (cmds.length + 1);
        const whole = createEngine();
        const hashes: string[] = [];
        const results: string[] = [];
        for (const c of cmds) {
          results.push(eventsJson(whole.apply(c)));
          hashes.push(whole.stateHash());
        }
        const first = createEngine();
        for (let i = 0; i < cut; i++) first.apply(cmds[i]);
        const snap = JSON.parse(JSON.stringify(first.snapshot()));
        const restored = restoreEngine(snap);
        assert.equal(restored.seq, first.seq);
        assert.equal(restored.stateHash(), first.stateHash(), 'restore reproduces the snapshot state');
        restored.checkInvariants();
        if (cut > 0 && cut < cmds.length) seen.restoredMidStream++;
        for (let i = cut; i < cmds.length; i++) {
          const r = apply(restored, cmds[i], i);
          sameText(eventsJson(r), results[i], `after restore at ${cut}, the result of command #${i} ${JSON.stringify(cmds[i])} differs`);
          assert.ok(restored.stateHash() === hashes[i], `after restore at ${cut}, state differs at command #${i} ${JSON.stringify(cmds[i])}`);
        }
        assert.equal(restored.stateHash(), whole.stateHash());
      }),
      params(40),
    );
  });

  it('(e) retracted refusals use no seq and change nothing; the journaled commands replay to the same state', () => {
    fc.assert(
      fc.property(opsArb(20, 140), (ops) => {
        const cmds = materialize(ops);
        const live = createEngine();
        const counting = createEngine();
        const journal: Command[] = [];
        cmds.forEach((c, i) => {
          const before = live.stateHash();
          const seq = live.seq;
          const r = live.apply(structuredClone(c), true);
          counting.apply(structuredClone(c));
          if (r.retracted) {
            seen.retracted++;
            assert.equal(r.reply.ok, false, `command #${i} retracted but not refused`);
            assert.equal(live.seq, seq, `retracted command #${i} used a seq`);
            assert.ok(live.stateHash() === before, `retracted command #${i} ${JSON.stringify(c)} changed the state`);
          } else {
            assert.equal(live.seq, seq + 1);
            journal.push(c);
          }
        });
        sameText(stateWithoutSeq(live), stateWithoutSeq(counting), 'retracting refusals changed where the engine ends');
        const replayed = createEngine();
        for (const c of journal) assert.equal(replayed.apply(structuredClone(c)).retracted, undefined);
        assert.equal(replayed.seq, live.seq);
        assert.ok(replayed.stateHash() === live.stateHash(), 'a replay of the journaled commands reaches another state');
      }),
      params(40),
    );
  });

  it('the generated streams exercised the interesting paths', () => {
    // Runs after the properties above (node:test runs a suite's tests in order).
    if (process.env.FC_STATS) console.log(JSON.stringify(seen));
    for (const [k, v] of Object.entries(seen)) assert.ok(v > 0, `no ${k} in any generated stream: ${JSON.stringify(seen)}`);
  });
});
