// The binary journal body (src/journal/command-codec.ts) must give back exactly what the JSON text gave:
// decode(encode(cmd)) deep-equals JSON.parse(JSON.stringify(cmd)) for every command kind and odd values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import type { Command } from '../../src/engine/commands.js';
import { DEMO_INSTRUMENTS } from '../../src/domain/instrument.js';
import { CommandEncoder, decodeCommand, isBinaryKind } from '../../src/journal/command-codec.js';
import { AppendBuffer, forEachRow } from '../../src/journal/append-buffer.js';
import { openSqliteJournal } from '../../src/journal/sqlite-journal.js';
import { openThreadedSqliteJournal } from '../../src/journal/threaded-sqlite-journal.js';
import { decodeBody } from '../../src/journal/sqlite-journal-reader.js';
import { tempDir } from './helpers.js';

const viaJson = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

/** Any code unit, lone surrogates included. */
const str = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
  fc.constantFrom('BUY', 'SELL', 'GTC', 'IOC', 'order.place', 'BTCUSDT', '', '__proto__', 'ид-ордера-😀'),
);
const num = fc.oneof(
  fc.integer(),
  fc.nat(),
  fc.maxSafeInteger(),
  fc.maxSafeNat(),
  fc.double(),
  fc.constantFrom(0, -0, 2 ** 31, 2 ** 32, 2 ** 53 - 1, -(2 ** 53 - 1), 2 ** 53, 2 ** 64, 1e21, 1e-7, NaN, Infinity, -Infinity, 0.1),
);
const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
const side = fc.constantFrom('BUY', 'SELL');
const tpsl = fc.record({ type: fc.constantFrom('take-profit', 'stop-loss'), side, quantity: num, price: num });
const order = fc.record(
  {
    id: str, instrument: str, side, type: fc.constantFrom('LIMIT', 'MARKET', 'STOP_LIMIT'),
    timeInForce: fc.constantFrom('GTC', 'DAY', 'IOC', 'FOK'), leverage: num,
    quantity: opt(num), limitPrice: opt(num), stopPrice: opt(num), cashQuantity: opt(num), postOnly: opt(fc.boolean()),
    smp: opt(fc.record({ smp: fc.boolean(), smpId: str })), group: opt(fc.constantFrom('manually', 'tpsl', 'liquidation')),
    reduceOnly: opt(fc.boolean()), tpsl: opt(fc.array(tpsl, { maxLength: 3 })),
  },
  { requiredKeys: ['id', 'instrument', 'side', 'type', 'timeInForce', 'leverage'] },
);
/** A signed command's EIP-712 digest (0x + 64 hex), or any string. */
const digest = fc.oneof(fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => `0x${Buffer.from(b).toString('hex')}`), str);
const replace = fc.record(
  {
    orderId: str, quantity: num, limitPrice: num, stopPrice: opt(num), postOnly: opt(fc.boolean()), smp: opt(fc.record({ smp: fc.boolean(), smpId: str })),
    digest: opt(digest),
  },
  { requiredKeys: ['orderId', 'quantity', 'limitPrice'] },
);
const ts = fc.oneof(fc.maxSafeNat(), fc.constant(1_753_315_200_123));
const user = fc.oneof(fc.nat(), fc.maxSafeNat());

/** Every kind of Command, with odd values where the types allow them. */
const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ kind: fc.constant('instrument.upsert'), ts, config: fc.constantFrom(...DEMO_INSTRUMENTS) }),
  fc.record({ kind: fc.constant('instrument.trading'), ts, instrument: str, trading: fc.constantFrom('all', 'none') }),
  fc.record({ kind: fc.constant('matcher.state'), ts, state: str }),
  fc.record({ kind: fc.constant('funds.deposit'), ts, userId: user, amount: str, transferId: str }),
  fc.record({ kind: fc.constant('funds.withdraw'), ts, userId: user, amount: str, transferId: str, recipient: opt(str), digest: opt(digest) }, { requiredKeys: ['kind', 'ts', 'userId', 'amount', 'transferId'] }),
  fc.record({ kind: fc.constant('funds.withdraw.settle'), ts, transferId: str, success: fc.boolean() }),
  fc.record({ kind: fc.constant('funds.withdraw.hold'), ts, transferId: str, hold: fc.boolean() }),
  fc.record({ kind: fc.constant('order.place'), ts, userId: user, order }),
  fc.record({ kind: fc.constant('order.placeBatch'), ts, userId: user, instrument: str, orders: fc.array(order, { maxLength: 4 }) }),
  fc.record({ kind: fc.constant('order.replace'), ts, userId: user, replace }),
  fc.record({ kind: fc.constant('order.replaceBatch'), ts, userId: user, instrument: str, items: fc.array(replace, { maxLength: 4 }) }),
  fc.record({ kind: fc.constant('order.cancel'), ts, userId: user, orderId: str }),
  fc.record({ kind: fc.constant('order.cancelAll'), ts, userId: user, instrument: str }),
  fc.record({ kind: fc.constant('order.cancelMany'), ts, userId: user, orderIds: fc.array(str, { maxLength: 5 }) }),
  fc.record({ kind: fc.constant('position.leverage'), ts, userId: user, instrument: str, leverage: num }),
  fc.record({ kind: fc.constant('position.close'), ts, userId: user, instrument: str, id: str, quantity: num, leverage: num }),
  fc.record({ kind: fc.constant('price.tick'), ts, instrument: str, indexPrice: num, markPrice: opt(num) }, { requiredKeys: ['kind', 'ts', 'instrument', 'indexPrice'] }),
  fc.record({ kind: fc.constant('funding.settle'), ts, instrument: str, intervalMs: num }),
  fc.record(
    { kind: fc.constant('tpsl.create'), ts, userId: user, instrument: str, type: fc.constantFrom('take-profit', 'stop-loss'), side, quantity: num, price: num, orderId: fc.option(str, { nil: null }), digest: opt(digest) },
    { requiredKeys: ['kind', 'ts', 'userId', 'instrument', 'type', 'side', 'quantity', 'price', 'orderId'] },
  ),
  fc.record(
    { kind: fc.constant('tpsl.modify'), ts, userId: user, instrument: str, id: str, type: fc.constantFrom('take-profit', 'stop-loss'), side, quantity: num, price: num, digest: opt(digest) },
    { requiredKeys: ['kind', 'ts', 'userId', 'instrument', 'id', 'type', 'side', 'quantity', 'price'] },
  ),
  fc.record({ kind: fc.constant('tpsl.cancel'), ts, userId: user, instrument: str, id: str }),
) as fc.Arbitrary<Command>;

test('codec: every command kind round-trips to what its JSON text gives (the encoder never declines a command)', () => {
  const enc = new CommandEncoder(8); // tiny, so growth is exercised
  fc.assert(
    fc.property(command, (cmd) => {
      assert.equal(enc.encode(cmd), true);
      const body = enc.take();
      assert.equal(body[0], 1, 'format byte');
      assert.deepStrictEqual(decodeCommand(body), viaJson(cmd));
    }),
    { numRuns: 3000 },
  );
});

/** Unsigned LEB128 of a non-negative integer, by bigint: the format's definition of tags 3 and 4. */
function leb128(v: bigint): number[] {
  const out: number[] = [];
  do {
    const group = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v > 0n ? group | 0x80 : group);
  } while (v > 0n);
  return out;
}

test('codec: safe integers are written as LEB128, byte for byte, on both sides of 2^31 and 2^32 (the fast path above 31 bits)', () => {
  const enc = new CommandEncoder(8);
  const magnitude = fc.oneof(
    fc.maxSafeNat(),
    fc.integer({ min: 0, max: 52 }).chain((bits) => fc.integer({ min: -3, max: 3 }).map((d) => Math.max(0, Math.min(Number.MAX_SAFE_INTEGER, 2 ** bits + d)))),
  );
  fc.assert(
    fc.property(magnitude, fc.boolean(), (m, negative) => {
      const v = negative && m > 0 ? -m : m;
      assert.equal(enc.encode({ v }), true);
      const body = [...enc.take()];
      // format, object, key (inline: 'v' is not in KEYS), the number, end of object
      const key = [0xfe, 6, 1, 'v'.charCodeAt(0)];
      assert.deepEqual(body, [1, 10, ...key, v < 0 ? 4 : 3, ...leb128(BigInt(m)), 0xff]);
      assert.deepStrictEqual(decodeCommand(Uint8Array.from(body)), { v });
    }),
    { numRuns: 3000 },
  );
});

test('codec: arbitrary JSON-ish objects (undefined, -0, NaN, holes, unknown keys, nesting) decode as JSON.parse(JSON.stringify(v))', () => {
  const enc = new CommandEncoder(8);
  const value = fc.anything({
    withNullPrototype: true, withObjectString: false, withBoxedValues: false, withMap: false, withSet: false,
    withBigInt: false, withDate: false, withTypedArray: false, withSparseArray: true, maxDepth: 4,
  }).filter((v) => typeof v === 'object' && v !== null);
  fc.assert(
    fc.property(value, (v) => {
      const start = enc.pos;
      if (!enc.encode(v as object)) {
        assert.equal(enc.pos, start, 'a declined value writes nothing');
        return;
      }
      assert.deepStrictEqual(decodeCommand(enc.take()), viaJson(v));
    }),
    { numRuns: 3000 },
  );
});

test('codec: what JSON treats specially is declined, so the journal writes JSON text (and a bigint still throws)', () => {
  const enc = new CommandEncoder();
  assert.equal(enc.encode({ kind: 'order.cancel', at: new Date(0) }), false);
  assert.equal(enc.encode({ kind: 'order.cancel', n: 1n }), false);
  assert.equal(enc.encode({ kind: 'order.cancel', toJSON: () => 1 }), false);
  const cyclic: Record<string, unknown> = { kind: 'order.cancel' };
  cyclic.self = cyclic;
  assert.equal(enc.encode(cyclic), false);
  assert.equal(enc.pos, 0);

  const buf = new AppendBuffer(0, 0);
  buf.append(1, { kind: 'order.cancel', ts: 1, userId: 1, orderId: 'a', at: new Date(0) } as unknown as Command);
  assert.throws(() => buf.append(2, { kind: 'order.cancel', ts: 2, userId: 1, orderId: 'b', n: 1n } as unknown as Command), TypeError);
  assert.equal(buf.lastSeq, 1, 'a command that cannot be serialized is not appended');
  const bodies: Array<string | Buffer> = [];
  forEachRow(buf.take(), (_s, _t, body) => bodies.push(body));
  assert.deepEqual(bodies, [JSON.stringify({ kind: 'order.cancel', ts: 1, userId: 1, orderId: 'a', at: new Date(0) })]);
});

test('codec: a malformed body is an error, not a guess', () => {
  const enc = new CommandEncoder();
  enc.encode({ kind: 'order.cancel', ts: 1, userId: 2, orderId: 'abc' });
  const good = enc.take();
  assert.throws(() => decodeCommand(good.subarray(0, good.length - 1)));
  assert.throws(() => decodeCommand(Buffer.concat([good, Buffer.from([0])])));
  assert.throws(() => decodeCommand(Buffer.from([2, 0])), /format 2/);
  assert.throws(() => decodeCommand(Buffer.alloc(0)));
});

for (const [name, open] of [['inline', openSqliteJournal], ['threaded', openThreadedSqliteJournal]] as const) {
  test(`${name} journal: hot kinds stored as binary BLOBs, the rest as JSON TEXT; a journal with JSON rows only (older) still reads`, async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'journal.db');
      const cmds = fc.sample(command, { numRuns: 400, seed: 7 }).map((c, i) => ({ ...c, ts: 1000 + i }) as Command);
      const j = await open({ file });
      let seq = 0;
      for (const c of cmds.slice(0, 150)) j.append(++seq, c);
      await j.flush();
      for (const c of cmds.slice(150)) j.append(++seq, c);
      await j.close();

      const db = new Database(file);
      const rows = db.prepare('SELECT seq, ts, typeof(body) AS t FROM commands ORDER BY seq').all() as Array<{ seq: number; ts: number; t: string }>;
      assert.equal(rows.length, cmds.length);
      rows.forEach((r, i) => {
        assert.equal(r.seq, i + 1);
        assert.equal(r.ts, cmds[i].ts);
        assert.equal(r.t, isBinaryKind(cmds[i].kind) ? 'blob' : 'text');
      });
      // An older journal: every body JSON text.
      const update = db.prepare('UPDATE commands SET body = ?, crc = NULL WHERE seq = ?');
      db.transaction(() => cmds.forEach((c, i) => (i % 2 === 0 ? update.run(JSON.stringify(c), i + 1) : undefined)))();
      db.close();

      const again = await open({ file });
      const read = [...again.read(0)];
      assert.deepStrictEqual(read.map((e) => e.command), cmds.map(viaJson));
      assert.equal(again.lastSeq(), cmds.length);
      await again.close();
    } finally {
      cleanup();
    }
  });
}

test('codec: bodies written before the digest key was appended decode unchanged; a digest now costs one key byte', () => {
  // order.replace as the encoder wrote it before `digest` joined KEYS (bytes captured from that version)
  const older = Buffer.from('010a0008020103fb98ebcd8333020307190a15062030303030313a30313233343536373839616263646566303132333435363738390a03a08d060b0380b080a1be9402ffff', 'hex');
  const replace = { orderId: '00001:0123456789abcdef0123456789', quantity: 100000, limitPrice: 9500000000000 };
  const cmd = { kind: 'order.replace', ts: 1753315200123, userId: 7, replace };
  assert.deepStrictEqual(decodeCommand(older), cmd);
  const enc = new CommandEncoder();
  enc.encode(cmd);
  assert.deepStrictEqual(Buffer.from(enc.take()), older, 'a command without a digest encodes exactly as before');
  const signed = { ...cmd, replace: { ...replace, digest: `0x${'ab'.repeat(32)}` } };
  enc.encode(signed);
  const body = enc.take();
  assert.deepStrictEqual(decodeCommand(body), signed);
  assert.equal(body.length, older.length + 1 + 2 + 66, 'key byte + ASCII tag and length + the 66 characters');
});

test('decodeBody: TEXT is JSON, a BLOB is the binary format', () => {
  const cmd: Command = { kind: 'order.cancel', ts: 5, userId: 3, orderId: 'x' };
  const enc = new CommandEncoder();
  enc.encode(cmd);
  assert.deepStrictEqual(decodeBody(Buffer.from(enc.take())), cmd);
  assert.deepStrictEqual(decodeBody(JSON.stringify(cmd)), cmd);
});
