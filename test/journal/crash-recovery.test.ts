/**
 * Crash test: start the durability core as a child process, stream commands, SIGKILL it mid-load,
 * restart it on the same directory, and prove that
 *   - every acknowledged command is in the recovered state, at the seq it was acknowledged with, and
 *   - the recovered state hash equals a clean replay of the journal from zero.
 * Several kill/restart rounds per run, each at a random moment; the seed is printed on failure.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { openSqliteJournal } from '../../src/journal/sqlite-journal.js';
import { verifyJournal } from '../../src/sequencer/recovery.js';
import type { CommandInput } from '../../src/engine/commands.js';
import { DEMO_INSTRUMENTS } from '../../src/domain/instrument.js';
import { orderIdPrefix } from '../../src/domain/order-id.js';
import { loadEngineFactory, realEngineExists, type EngineKind } from './engines.js';
import { tempDir } from './helpers.js';
import { mulberry32 } from '../../src/simulation/seeded-random.js';

const CHILD = fileURLToPath(new URL('../fixtures/journal-child.ts', import.meta.url));

class Child {
  readonly proc: ChildProcessWithoutNullStreams;
  private waiters: Array<{ prefix: string; resolve: (words: string[]) => void }> = [];
  private stderr = '';
  readonly exited: Promise<number | null>;
  onAck: (words: string[]) => void = () => {};

  constructor(dir: string, kind: EngineKind, journal: JournalWriter) {
    this.proc = spawn(process.execPath, ['--import', 'tsx', CHILD, dir, kind, '400'], {
      stdio: 'pipe',
      env: { ...process.env, JOURNAL_WRITER: journal },
    });
    this.proc.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((resolve) => this.proc.on('exit', (code) => resolve(code)));
    this.proc.stdin.on('error', () => {}); // EPIPE after SIGKILL is expected
    createInterface({ input: this.proc.stdout }).on('line', (line) => {
      const words = line.split(' ');
      if (words[0] === 'ack' || words[0] === 'nack') return this.onAck(words);
      const i = this.waiters.findIndex((w) => w.prefix === words[0]);
      if (i >= 0) this.waiters.splice(i, 1)[0].resolve(words);
    });
  }

  next(prefix: string): Promise<string[]> {
    return new Promise((resolve, reject) => {
      this.waiters.push({ prefix, resolve });
      void this.exited.then((code) => reject(new Error(`child exited (${code}) waiting for ${prefix}: ${this.stderr}`)));
    });
  }

  send(req: unknown): boolean {
    return this.proc.stdin.write(JSON.stringify(req) + '\n');
  }
}


interface Acked {
  seq: number;
  tag: string;
  ok: boolean;
  /** False for a retracted refusal: answered, never journaled, its seq is the command's before it. */
  journaled: boolean;
}

type Workload = {
  setup: CommandInput[];
  command: (round: number, i: number) => { tag: string; cmd: CommandInput };
  presence: (acked: Acked[]) => { transfers: string[]; orders: Array<[number, string]> };
};

const fakeWorkload: Workload = {
  setup: [],
  command: (round, i) => {
    // Every 50th repeats an earlier transfer id: a refusal, journaled and acknowledged like the rest.
    const tag = i % 50 === 49 ? `r${round}-${i - 1}` : `r${round}-${i}`;
    return { tag: `${tag}#${i}`, cmd: { kind: 'funds.deposit', userId: 1 + (i % 13), amount: String(1 + i), transferId: tag } };
  },
  presence: (acked) => ({ transfers: acked.map((a) => a.tag.split('#')[0]), orders: [] }),
};

function realWorkload(): Workload {
  const prefix = orderIdPrefix(Date.now());
  return {
    setup: [
      { kind: 'instrument.upsert', config: DEMO_INSTRUMENTS[0] },
      { kind: 'price.tick', instrument: 'BTCUSDT', indexPrice: 10_000_000_000_000 },
      ...Array.from({ length: 20 }, (_, u): CommandInput => ({
        kind: 'funds.deposit', userId: u + 1, amount: '100000000000000', transferId: `seed-${u + 1}`,
      })),
    ],
    command: (round, i) => {
      const userId = 1 + (i % 20);
      if (i % 10 === 0) {
        const tag = `d${round}-${i}`;
        return { tag: `${tag}#deposit#${userId}`, cmd: { kind: 'funds.deposit', userId, amount: '100000000', transferId: tag } };
      }
      const id = `${prefix}:${randomBytes(13).toString('hex')}`;
      const side = i % 2 ? 'BUY' : 'SELL';
      const limitPrice = 10_000_000_000_000 + ((i * 7919) % 200 - 100) * 10_000_000; // 100000 ± 10, 0.1 steps
      return {
        tag: `${id}#order#${userId}`,
        cmd: {
          kind: 'order.place', userId,
          order: { id, instrument: 'BTCUSDT', side, type: 'LIMIT', timeInForce: 'GTC', leverage: 10, quantity: 1_000_000, limitPrice },
        },
      };
    },
    presence: (acked) => {
      const transfers: string[] = [];
      const orders: Array<[number, string]> = [];
      for (const a of acked) {
        if (!a.ok) continue; // a refused order is not in the state, by design
        const [key, what, user] = a.tag.split('#');
        if (what === 'deposit') transfers.push(key);
        else orders.push([Number(user), key]);
      }
      return { transfers, orders };
    },
  };
}

/** Which SqliteJournal variant the child runs: inline writes, or the writer thread (what the app uses). */
type JournalWriter = 'inline' | 'thread';

async function crashRounds(
  kind: EngineKind, workload: Workload, rounds: number, perRound: number, note: (msg: string) => void,
  writer: JournalWriter = 'inline',
): Promise<void> {
  const seed = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const random = mulberry32(seed);
  const { dir, cleanup } = tempDir('perpx-crash-');
  const acked: Acked[] = [];
  let current: Child | undefined;
  try {
    for (let round = 0; round <= rounds; round++) {
      const child = new Child(dir, kind, writer);
      current = child;
      const [, readySeq] = await child.next('ready');
      note(`round ${round}: recovered at seq ${readySeq}, ${acked.length} acknowledged so far (seed ${seed})`);
      const lastAcked = acked.length ? Math.max(...acked.map((a) => a.seq)) : 0;
      assert.ok(Number(readySeq) >= lastAcked, `seed ${seed}: recovered seq ${readySeq} < acknowledged seq ${lastAcked}`);

      // Every acknowledged command is in the state…
      child.send({ op: 'has', ...workload.presence(acked) });
      const [, missing] = await child.next('has');
      assert.equal(missing, '[]', `seed ${seed}, round ${round}: acknowledged but missing after recovery`);

      // …and at the seq it was acknowledged with; and the recovered state equals a clean replay.
      child.send({ op: 'hash' });
      const [, hashSeq, hash] = await child.next('hash');
      const journal = await openSqliteJournal({ file: join(dir, 'journal.db') });
      const bySeq = new Map(acked.filter((a) => a.journaled).map((a) => [a.seq, a.tag]));
      for (const entry of journal.read(0)) {
        const tag = bySeq.get(entry.seq);
        if (tag === undefined) continue;
        const c = entry.command;
        const key = tag.split('#')[0];
        const journaled = c.kind === 'funds.deposit' ? c.transferId : c.kind === 'order.place' ? c.order.id : '';
        assert.equal(journaled, key, `seed ${seed}: seq ${entry.seq} holds another command than the one acked`);
        bySeq.delete(entry.seq);
      }
      assert.equal(bySeq.size, 0, `seed ${seed}: acknowledged seqs missing from the journal`);
      const factory = await loadEngineFactory(kind);
      const verdict = await verifyJournal({ journal, createEngine: factory.createEngine, expected: { seq: Number(hashSeq), stateHash: hash } });
      await journal.close();
      assert.equal(verdict.replayedHash, hash, `seed ${seed}: recovered state differs from a clean replay`);
      assert.ok(verdict.ok, `seed ${seed}: ${verdict.invariantError}`);

      if (round === rounds) {
        child.proc.stdin.end(); // graceful stop on the last round
        assert.equal(await child.exited, 0);
        break;
      }

      // Stream commands paced in small chunks and SIGKILL right after sending a random one of them, so the
      // kill lands while commands are still arriving: some durable and acked, some applied but not yet
      // durable, some still in the pipe.
      child.onAck = (words) => {
        if (words[0] === 'ack') acked.push({ seq: Number(words[1]), tag: words[2], ok: words[3] === 'ok', journaled: words[3] !== 'retracted' });
      };
      if (round === 0) for (const cmd of workload.setup) child.send({ op: 'submit', tag: 'setup#setup', cmd });
      const killAt = Math.floor(perRound * (0.1 + 0.8 * random()));
      for (let i = 0; i <= killAt; i++) {
        const { tag, cmd } = workload.command(round, i);
        child.send({ op: 'submit', tag, cmd });
        if (i % 64 === 63) await new Promise((r) => setTimeout(r, 1));
      }
      child.proc.kill('SIGKILL');
      await child.exited;
      // Setup commands are acked under a shared tag; they need no presence check of their own.
      for (let k = acked.length - 1; k >= 0; k--) if (acked[k].tag === 'setup#setup') acked.splice(k, 1);
    }
  } catch (err) {
    process.stderr.write(`crash test failed with CRASH_SEED=${seed}\n`);
    throw err;
  } finally {
    // A failed assertion must not leave the child running (the test file would never exit).
    if (current && current.proc.exitCode === null) current.proc.kill('SIGKILL');
    cleanup();
  }
}

test('crash recovery with the fake engine: acked commands survive SIGKILL, state equals clean replay', { timeout: 60_000 }, async (t) => {
  await crashRounds('fake', fakeWorkload, 3, 4000, (m) => t.diagnostic(m));
});

test('crash recovery with the journal writer thread: acked commands survive SIGKILL', { timeout: 60_000 }, async (t) => {
  await crashRounds('fake', fakeWorkload, 3, 4000, (m) => t.diagnostic(m), 'thread');
});

test('crash recovery with the real engine', { timeout: 60_000, skip: !realEngineExists() && 'src/engine/engine.ts not there yet' }, async (t) => {
  await crashRounds('real', realWorkload(), 2, 3000, (m) => t.diagnostic(m));
});
