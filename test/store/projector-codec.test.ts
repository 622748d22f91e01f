// The projector worker's batches (src/store/projector-codec.ts) must arrive exactly as a structured clone
// would deliver them: decode(encode(batches)) deep-equals the batches (seq, ts, events), for the engine's
// real events and for any values a view's fields might hold.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createEngine } from '../../src/engine/engine.js';
import type { EngineEvent } from '../../src/engine/records.js';
import type { ProjectionBatch } from '../../src/store/projector.js';
import { decodeEventBatches, ProjectorEncoder } from '../../src/store/projector-codec.js';
import { materialize, opsArb } from '../engine/random-ops.js';
import { generateHistory } from './history-fixture.js';

const roundTrip = (batches: ProjectionBatch[]): ProjectionBatch[] => decodeEventBatches(new ProjectorEncoder().encode(batches));
const plain = (batches: ReadonlyArray<ProjectionBatch & { kind?: string }>): ProjectionBatch[] => batches.map(({ seq, ts, events }) => ({ seq, ts, events }));

test('projector codec: the engine\'s events over random command streams come back equal', () => {
  const seen = new Set<string>();
  fc.assert(
    fc.property(opsArb(20, 120), (ops) => {
      const engine = createEngine();
      const batches: ProjectionBatch[] = [];
      for (const cmd of materialize(ops)) {
        const r = engine.apply(cmd);
        batches.push({ seq: engine.seq, ts: cmd.ts, events: r.events });
        for (const e of r.events) seen.add(e.type);
      }
      // One buffer for the whole stream and one per few batches, as the feed groups them.
      assert.deepStrictEqual(roundTrip(batches), batches);
      for (let i = 0; i < batches.length; i += 7) {
        const group = batches.slice(i, i + 7);
        assert.deepStrictEqual(roundTrip(group), group);
      }
    }),
    { numRuns: Number(process.env.FC_RUNS ?? 40) },
  );
  // Every event type written field by field was exercised, and some of the generic ones.
  for (const type of ['order', 'fill', 'trade', 'position', 'funding', 'orderFee', 'instrument', 'book', 'transfer', 'price']) {
    assert.ok(seen.has(type), `no ${type} event in the random streams`);
  }
});

test('projector codec: the read-model fixture history comes back equal, bus batches lose only their kind', () => {
  const { batches } = generateHistory({ seed: 11, orders: 400 });
  assert.deepStrictEqual(roundTrip(batches), batches);
  const withKind = batches.map((b) => ({ ...b, kind: 'order.place' }));
  assert.deepStrictEqual(roundTrip(withKind), plain(withKind));
  assert.deepStrictEqual(roundTrip([]), []);
});

// Plain objects only (noNullPrototype): a structured clone turns a null-prototype object into a plain one too.

/** Any string: lone surrogates, non-ASCII, the empty string, long ones, names that are special to objects. */
const anyString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
  fc.constantFrom('', 'BUY', 'BTCUSDT', '__proto__', 'constructor', 'ид-ордера-😀', 'x'.repeat(300)),
);
const anyNumber = fc.oneof(fc.double(), fc.integer(), fc.maxSafeInteger(), fc.constantFrom(-0, NaN, Infinity, -Infinity, 2 ** 53, -(2 ** 60)));
const anyBigint = fc.oneof(fc.bigInt(), fc.bigInt({ min: -(2n ** 300n), max: 2n ** 300n }), fc.constantFrom(0n, 2n ** 53n, -(2n ** 53n), 2n ** 53n - 1n));
const anyScalar = fc.oneof(anyString, anyNumber, anyBigint, fc.boolean(), fc.constant(null), fc.constant(undefined));
const anyValue = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, anyScalar, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(anyString, tie('value'), { maxKeys: 4, noNullPrototype: true }),
})).value;

/** A view of `keys`, each holding any scalar (the codec carries values, whatever their declared type). */
const viewOf = (keys: readonly string[]) =>
  fc.tuple(...keys.map(() => anyScalar)).map((values) => Object.fromEntries(keys.map((k, i) => [k, values[i]])));

const ORDER = ['id', 'userId', 'instrument', 'type', 'side', 'status', 'rejectedReason', 'timeInForce', 'postOnly', 'leverage',
  'quantity', 'limitPrice', 'stopPrice', 'group', 'unFilledQuantity', 'cashQuantity', 'filledQuantity', 'filledValue',
  'realizedPnL', 'fee', 'triggeredAt', 'createdAt', 'updatedAt'];
const FILL = ['executionId', 'userId', 'orderId', 'instrument', 'side', 'role', 'quantity', 'price', 'fee', 'realizedPnL', 'createdAt'];
const TRADE = ['executionId', 'instrument', 'side', 'quantity', 'price', 'createdAt'];
const POSITION = ['id', 'userId', 'instrument', 'side', 'quantity', 'costBasis', 'avgPrice', 'leverage', 'maintenanceMargin',
  'fundingPaid', 'fee', 'realizedPnL', 'unRealizedPnL', 'markPrice', 'bankruptcyPrice', 'adlLevel', 'createdAt', 'updatedAt'];
const FUNDING = ['userId', 'coin', 'quantity', 'balance', 'reason', 'updatedAt'];
const FEE = ['id', 'userId', 'orderId', 'executionId', 'coin', 'quantity', 'type', 'createdAt'];
const INSTRUMENT = ['id', 'lastPrice', 'markPrice', 'indexPrice', 'openInterest', 'trading', 'updatedAt'];

const anyEvent: fc.Arbitrary<unknown> = fc.oneof(
  viewOf(ORDER).map((order) => ({ type: 'order', order })),
  viewOf(FILL).map((fill) => ({ type: 'fill', fill })),
  viewOf(TRADE).map((trade) => ({ type: 'trade', trade })),
  viewOf(POSITION).map((position) => ({ type: 'position', position })),
  viewOf(FUNDING).map((funding) => ({ type: 'funding', funding })),
  viewOf(FEE).map((fee) => ({ type: 'orderFee', fee })),
  // The instrument view's two optional fields may be absent, present or present and undefined.
  fc.tuple(viewOf(INSTRUMENT), fc.option(anyScalar), fc.option(anyScalar)).map(([v, rate, at]) => ({
    type: 'instrument',
    instrument: { ...v, ...(rate === null ? {} : { fundingRate: rate }), ...(at === null ? {} : { fundingRateAt: at }) },
  })),
  fc.tuple(anyScalar, anyScalar).map(([instrument, t]) => ({ type: 'book', instrument, t })),
  // Types without a field-by-field form, and objects of any shape.
  fc.tuple(fc.constantFrom('transfer', 'matcher', 'tpsl', 'account', 'price', 'fundingRate', 'something-new'), fc.dictionary(anyString, anyValue, { maxKeys: 6, noNullPrototype: true }))
    .map(([type, rest]) => ({ ...rest, type })),
);

test('projector codec: any values in the views, any plain shape in the other events', () => {
  const encoder = new ProjectorEncoder(); // reused, as the projector reuses it
  fc.assert(
    fc.property(fc.array(fc.record({ seq: fc.maxSafeNat(), ts: anyNumber, events: fc.array(anyEvent, { maxLength: 6 }) }, { noNullPrototype: true }), { maxLength: 5 }), (raw) => {
      const batches = raw as unknown as ProjectionBatch[];
      assert.deepStrictEqual(decodeEventBatches(encoder.encode(batches)), batches);
    }),
    { numRuns: Number(process.env.FC_RUNS ?? 300) },
  );
});

test('projector codec: a malformed buffer is refused, not half-read', () => {
  const batches: ProjectionBatch[] = [{ seq: 1, ts: 2, events: [{ type: 'book', instrument: 'BTCUSDT', t: 3 } as EngineEvent] }];
  const bytes = new ProjectorEncoder().encode(batches);
  assert.throws(() => decodeEventBatches(bytes.subarray(0, bytes.length - 1)), /truncated/);
  assert.throws(() => decodeEventBatches(Uint8Array.from([...bytes, 0])), /trailing/);
  const wrongVersion = Uint8Array.from(bytes);
  wrongVersion[0] = 99;
  assert.throws(() => decodeEventBatches(wrongVersion), /version/);
  const badEvent = Uint8Array.from(bytes);
  badEvent[1 + 1 + 16 + 1] = 200; // version, batch count, seq + ts, event count, then the event code
  assert.throws(() => decodeEventBatches(badEvent), /unknown event code/);
  assert.throws(() => new ProjectorEncoder().encode([{ seq: 1, ts: 1, events: [{ type: 'x', f: () => 1 } as unknown as EngineEvent] }]), /cannot send a function/);
});
