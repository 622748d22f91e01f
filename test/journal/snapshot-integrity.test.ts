/**
 * Every snapshot byte is verifiable (issue 26, point 6). A real engine's journal and snapshots are written
 * through the sequencer; then the newest snapshot file is damaged three ways:
 *   - one digit of a balance flipped (bit rot): the checksum rejects it;
 *   - a balance edited and the checksum recomputed: the recorded state hash rejects it;
 *   - a balance edited and both checksum and state hash recomputed: the engine invariants (money
 *     conservation) reject it.
 * Each time recovery skips that snapshot, uses the one before, reports (and logs) both, and arrives at the
 * state of a clean replay of the journal from zero. With every snapshot bad it replays the whole journal.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { DEMO_INSTRUMENTS } from '../../src/domain/instrument.js';
import { orderIdPrefix } from '../../src/domain/order-id.js';
import { createEngine, restoreEngine } from '../../src/engine/engine.js';
import type { EngineSnapshot } from '../../src/engine/api.js';
import { FileSnapshotStore, snapshotFileName } from '../../src/journal/file-snapshots.js';
import { openSqliteJournal } from '../../src/journal/sqlite-journal.js';
import { recoverWithReport, verifyJournal } from '../../src/sequencer/recovery.js';
import type { CommandInput } from '../../src/engine/commands.js';
import { Sequencer } from '../../src/sequencer/sequencer.js';
import { silentLogger, tempDir } from './helpers.js';

const PRICE = 10_000_000_000_000; // 100,000.00000000

/** Deposits, resting orders and crossing ones (positions with open cost), in rounds with a snapshot after each. */
async function writeHistory(dir: string): Promise<{ snapshotSeqs: number[]; seq: number; stateHash: string }> {
  const journal = await openSqliteJournal({ file: join(dir, 'journal.db') });
  const snapshots = new FileSnapshotStore({ dir: join(dir, 'snapshots'), keep: 3 });
  let now = Date.UTC(2026, 0, 5, 12);
  const sequencer = new Sequencer({ engine: createEngine(), journal, snapshots, clock: () => now++, logger: silentLogger, snapshotOnStop: false });
  const prefix = orderIdPrefix(now);
  let n = 0;
  const ok = async (cmd: CommandInput) => {
    const r = await sequencer.submit(cmd);
    assert.ok(r.reply.ok, `${cmd.kind}: ${JSON.stringify(r.reply, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v))}`);
  };
  await ok({ kind: 'instrument.upsert', config: DEMO_INSTRUMENTS[0] });
  await ok({ kind: 'price.tick', instrument: 'BTCUSDT', indexPrice: PRICE });
  const snapshotSeqs: number[] = [];
  for (let round = 0; round < 3; round++) {
    for (let u = 1; u <= 4; u++) await ok({ kind: 'funds.deposit', userId: u, amount: '1000000000000', transferId: `d${round}-${u}` });
    for (let u = 1; u <= 4; u++) {
      const id = `${prefix}:${(++n).toString(16).padStart(26, '0')}`;
      const side = u % 2 ? 'BUY' : 'SELL';
      await ok({
        kind: 'order.place', userId: u,
        order: { id, instrument: 'BTCUSDT', side, type: 'LIMIT', timeInForce: 'GTC', leverage: 10, quantity: 1_000_000 * (round + 1), limitPrice: PRICE },
      });
    }
    snapshotSeqs.push(await sequencer.snapshotNow());
  }
  const { seq, stateHash } = await sequencer.checkpoint();
  await sequencer.stop();
  await snapshots.close();
  await journal.close();
  return { snapshotSeqs, seq, stateHash };
}

interface Tamper {
  name: string;
  edit: (file: Buffer) => Buffer;
  reason: RegExp;
}

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

function splitFile(file: Buffer): { header: Record<string, unknown>; body: Buffer } {
  const nl = file.indexOf(0x0a);
  return { header: JSON.parse(file.subarray(0, nl).toString()) as Record<string, unknown>, body: file.subarray(nl + 1) };
}

function joinFile(header: Record<string, unknown>, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), body]);
}

/** The snapshot with user 1's balance changed by one digit (the first digit that is not 9 becomes 9). */
function editBalance(snapshot: EngineSnapshot): EngineSnapshot {
  const state = snapshot.state as { accounts: Array<{ userId: number; balance: string }> };
  const account = state.accounts.find((a) => a.userId === 1)!;
  const i = [...account.balance].findIndex((c) => c !== '9' && c !== '-');
  account.balance = `${account.balance.slice(0, i)}9${account.balance.slice(i + 1)}`;
  return snapshot;
}

const tampers: Tamper[] = [
  {
    name: 'one digit of a balance flipped in place',
    edit: (file) => {
      const text = file.toString();
      const m = /"balance":"(\d)/.exec(text.slice(text.indexOf('\n')))!;
      const at = text.indexOf('\n') + m.index + '"balance":"'.length;
      const copy = Buffer.from(file);
      copy[at] = copy[at] === 0x39 ? 0x38 : copy[at] + 1;
      return copy;
    },
    reason: /checksum mismatch/,
  },
  {
    name: 'a balance edited and the checksum recomputed',
    edit: (file) => {
      const { header, body } = splitFile(file);
      const edited = Buffer.from(JSON.stringify(editBalance(JSON.parse(body.toString()) as EngineSnapshot)));
      return joinFile({ ...header, bytes: edited.length, sha256: sha256(edited) }, edited);
    },
    reason: /state hash [0-9a-f]+ ≠ recorded/,
  },
  {
    name: 'a balance edited and both the checksum and the state hash recomputed',
    edit: (file) => {
      const { header, body } = splitFile(file);
      const snapshot = editBalance(JSON.parse(body.toString()) as EngineSnapshot);
      const edited = Buffer.from(JSON.stringify(snapshot));
      return joinFile({ ...header, bytes: edited.length, sha256: sha256(edited), stateHash: restoreEngine(snapshot).stateHash() }, edited);
    },
    reason: /money not conserved/,
  },
];

/** Pino lines written during a recovery. */
function capturingLogger(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

for (const tamper of tampers) {
  test(`snapshot integrity: ${tamper.name} is skipped; recovery uses the one before and equals a clean replay`, async () => {
    const { dir, cleanup } = tempDir('perpx-snapint-');
    try {
      const history = await writeHistory(dir);
      const [, older, newest] = history.snapshotSeqs;
      const file = join(dir, 'snapshots', snapshotFileName(newest));
      writeFileSync(file, tamper.edit(readFileSync(file)));

      const journal = await openSqliteJournal({ file: join(dir, 'journal.db') });
      const snapshots = new FileSnapshotStore({ dir: join(dir, 'snapshots') });
      const { logger, lines } = capturingLogger();
      const { engine, report } = await recoverWithReport({ journal, snapshots, createEngine, restoreEngine, logger });
      assert.equal(report.snapshotSeq, older, 'the snapshot before the damaged one is used');
      assert.equal(report.skippedSnapshots.length, 1);
      assert.equal(report.skippedSnapshots[0].seq, newest);
      assert.match(report.skippedSnapshots[0].reason, tamper.reason);
      assert.equal(report.replayed, history.seq - older);
      const warned = lines.find((l) => l.snapshotSeq === newest);
      assert.ok(warned && /skipped/.test(String(warned.msg)), `the log names the skipped snapshot: ${JSON.stringify(lines)}`);

      assert.equal(engine.stateHash(), history.stateHash, 'same state as before the restart');
      const clean = await verifyJournal({ journal, createEngine, expected: { seq: engine.seq, stateHash: engine.stateHash() } });
      assert.equal(clean.ok, true, 'equals a clean replay from zero');
      await snapshots.close();
      await journal.close();
    } finally {
      cleanup();
    }
  });
}

test('snapshot integrity: with every snapshot damaged recovery replays the whole journal', async () => {
  const { dir, cleanup } = tempDir('perpx-snapint-');
  try {
    const history = await writeHistory(dir);
    for (const [i, seq] of history.snapshotSeqs.entries()) {
      const file = join(dir, 'snapshots', snapshotFileName(seq));
      writeFileSync(file, tampers[i].edit(readFileSync(file)));
    }
    const journal = await openSqliteJournal({ file: join(dir, 'journal.db') });
    const snapshots = new FileSnapshotStore({ dir: join(dir, 'snapshots') });
    const { engine, report } = await recoverWithReport({ journal, snapshots, createEngine, restoreEngine });
    assert.deepEqual(report.skippedSnapshots.map((s) => s.seq), [...history.snapshotSeqs].reverse());
    assert.equal(report.snapshotSeq, 0);
    assert.equal(report.replayed, history.seq);
    assert.equal(engine.stateHash(), history.stateHash);
    await snapshots.close();
    await journal.close();
  } finally {
    cleanup();
  }
});
