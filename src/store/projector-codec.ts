/**
 * The bytes that carry event batches from the event loop to the projector worker (ThreadedSqliteProjector).
 *
 * Hand-written instead of postMessage's structured clone, which V8 does with its ValueSerializer: that writes
 * every property name of every object and cost the event loop more than applying the command. Here the
 * frequent events' views are written as their values only, field by field in a fixed order, into one buffer
 * that is transferred (not copied): several times cheaper both ways (npm run bench:codec; docs/performance.md).
 *
 * Decoding gives back what a structured clone gives for these values: the same own keys (a key the object
 * lacks stays absent, `undefined` stays a present undefined), numbers as float64 (−0 and NaN included),
 * bigints of any size, strings with any code units, plain objects. The batches' `kind` (bus batches carry
 * it) is not sent: the projector reads seq, ts and events. Event types without a field-by-field form go
 * through a generic form with their keys; the field-by-field decoders are checked against their view types
 * at compile time (AllKeys), and test/store/projector-codec.test.ts checks the round trip.
 */
import type {
  EngineEvent, FillView, FundingChangeView, InstrumentStateView, OrderFeeView, OrderView, PositionView, TradeView,
} from '../engine/records.js';
import { ByteReader } from '../codec/byte-reader.js';
import { ByteWriter } from '../codec/byte-writer.js';
import type { ProjectionBatch } from './projector.js';

export const PROJECTOR_CODEC_VERSION = 1;

/** Event codes: 0 = the generic form (any plain event), then one per view written field by field. */
const GENERIC = 0;
const E_ORDER = 1;
const E_FILL = 2;
const E_TRADE = 3;
const E_POSITION = 4;
const E_FUNDING = 5;
const E_ORDER_FEE = 6;
const E_INSTRUMENT = 7;
const E_BOOK = 8;

/**
 * A view type with every key required: each decoder below builds its view as a literal of this type, so a
 * field added to a view (optional ones too) fails to compile until the codec writes and reads it.
 */
type AllKeys<T> = { [K in keyof T]-?: T[K] };

// Value tags.
const T_ABSENT = 0; // an optional view field the object does not have
const T_UNDEFINED = 1;
const T_NULL = 2;
const T_FALSE = 3;
const T_TRUE = 4;
const T_NUMBER = 5; // float64
const T_BIGINT = 6; // a safe integer, as float64
const T_BIGINT_TEXT = 7; // any other bigint, as ASCII decimal text
const T_ASCII = 8;
const T_UTF16 = 9;
const T_ARRAY = 10;
const T_OBJECT = 11;

const MAX_DEPTH = 64;

/**
 * Writes event batches. One instance is reused: it writes into its own scratch buffer (grown as needed, kept)
 * and hands out an exact-size copy, which the caller may transfer. (A fresh buffer per call, sized by a
 * guess, was zero-filled and often regrown or mostly unused; copying ~0.5 kB per command costs less.)
 */
export class ProjectorEncoder extends ByteWriter {
  encode(batches: readonly ProjectionBatch[]): Uint8Array {
    this.pos = 0;
    this.byte(PROJECTOR_CODEC_VERSION);
    this.uint(batches.length);
    for (const b of batches) {
      this.f64(b.seq);
      this.f64(b.ts);
      const events = b.events;
      this.uint(events.length);
      for (let i = 0; i < events.length; i++) this.event(events[i]);
    }
    return this.buf.slice(0, this.pos);
  }

  private event(e: EngineEvent): void {
    // Each view is written field by field in the order its decoder reads them back: the decoder builds each
    // view as one object literal (adding the fields by name, from a list, took ~3x as long on the worker).
    switch (e.type) {
      case 'order': this.byte(E_ORDER); this.order(e.order); return;
      case 'fill': this.byte(E_FILL); this.fill(e.fill); return;
      case 'trade': this.byte(E_TRADE); this.trade(e.trade); return;
      case 'position': this.byte(E_POSITION); this.position(e.position); return;
      case 'funding': this.byte(E_FUNDING); this.funding(e.funding); return;
      case 'orderFee': this.byte(E_ORDER_FEE); this.orderFee(e.fee); return;
      case 'instrument': this.byte(E_INSTRUMENT); this.instrument(e.instrument); return;
      case 'book': this.byte(E_BOOK); this.value(e.instrument, 1); this.value(e.t, 1); return;
      default: this.byte(GENERIC); this.value(e, 0);
    }
  }

  private order(o: OrderView): void {
    this.value(o.id, 1); this.value(o.userId, 1); this.value(o.instrument, 1); this.value(o.type, 1); this.value(o.side, 1);
    this.value(o.status, 1); this.value(o.rejectedReason, 1); this.value(o.timeInForce, 1); this.value(o.postOnly, 1);
    this.value(o.leverage, 1); this.value(o.quantity, 1); this.value(o.limitPrice, 1); this.value(o.stopPrice, 1);
    this.value(o.group, 1); this.value(o.unFilledQuantity, 1); this.value(o.cashQuantity, 1); this.value(o.filledQuantity, 1);
    this.value(o.filledValue, 1); this.value(o.realizedPnL, 1); this.value(o.fee, 1); this.value(o.triggeredAt, 1);
    this.value(o.createdAt, 1); this.value(o.updatedAt, 1);
  }

  private fill(f: FillView): void {
    this.value(f.executionId, 1); this.value(f.userId, 1); this.value(f.orderId, 1); this.value(f.instrument, 1);
    this.value(f.side, 1); this.value(f.role, 1); this.value(f.quantity, 1); this.value(f.price, 1); this.value(f.fee, 1);
    this.value(f.realizedPnL, 1); this.value(f.createdAt, 1);
  }

  private trade(t: TradeView): void {
    this.value(t.executionId, 1); this.value(t.instrument, 1); this.value(t.side, 1); this.value(t.quantity, 1);
    this.value(t.price, 1); this.value(t.createdAt, 1);
  }

  private position(p: PositionView): void {
    this.value(p.id, 1); this.value(p.userId, 1); this.value(p.instrument, 1); this.value(p.side, 1); this.value(p.quantity, 1);
    this.value(p.costBasis, 1); this.value(p.avgPrice, 1); this.value(p.leverage, 1); this.value(p.maintenanceMargin, 1);
    this.value(p.fundingPaid, 1); this.value(p.fee, 1); this.value(p.realizedPnL, 1); this.value(p.unRealizedPnL, 1);
    this.value(p.markPrice, 1); this.value(p.bankruptcyPrice, 1); this.value(p.adlLevel, 1); this.value(p.createdAt, 1);
    this.value(p.updatedAt, 1);
  }

  private funding(f: FundingChangeView): void {
    this.value(f.userId, 1); this.value(f.coin, 1); this.value(f.quantity, 1); this.value(f.balance, 1); this.value(f.reason, 1);
    this.value(f.updatedAt, 1);
  }

  private orderFee(f: OrderFeeView): void {
    this.value(f.id, 1); this.value(f.userId, 1); this.value(f.orderId, 1); this.value(f.executionId, 1); this.value(f.coin, 1);
    this.value(f.quantity, 1); this.value(f.type, 1); this.value(f.createdAt, 1);
  }

  private instrument(i: InstrumentStateView): void {
    this.value(i.id, 1); this.value(i.lastPrice, 1); this.value(i.markPrice, 1); this.value(i.indexPrice, 1);
    this.value(i.openInterest, 1); this.value(i.trading, 1); this.value(i.updatedAt, 1);
    // The two optional fields: absent stays absent.
    if ('fundingRate' in i) this.value(i.fundingRate, 1);
    else this.byte(T_ABSENT);
    if ('fundingRateAt' in i) this.value(i.fundingRateAt, 1);
    else this.byte(T_ABSENT);
  }

  private value(v: unknown, depth: number): void {
    switch (typeof v) {
      case 'number':
        this.byte(T_NUMBER);
        this.f64(v);
        return;
      case 'string':
        this.text(v);
        return;
      case 'bigint': {
        const n = Number(v);
        if (Number.isSafeInteger(n)) {
          this.byte(T_BIGINT);
          this.f64(n);
        } else {
          this.byte(T_BIGINT_TEXT);
          this.text(v.toString());
        }
        return;
      }
      case 'boolean':
        this.byte(v ? T_TRUE : T_FALSE);
        return;
      case 'undefined':
        this.byte(T_UNDEFINED);
        return;
      case 'object':
        if (v === null) {
          this.byte(T_NULL);
          return;
        }
        if (depth >= MAX_DEPTH) throw new Error('projector codec: event nested too deeply');
        if (Array.isArray(v)) {
          this.byte(T_ARRAY);
          this.uint(v.length);
          for (let i = 0; i < v.length; i++) this.value(v[i], depth + 1);
        } else {
          const o = v as Record<string, unknown>;
          const keys = Object.keys(o);
          this.byte(T_OBJECT);
          this.uint(keys.length);
          for (const k of keys) {
            this.text(k);
            this.value(o[k], depth + 1);
          }
        }
        return;
      default:
        // Events are plain data; a function or symbol in one is a bug, not something to drop quietly.
        throw new Error(`projector codec: cannot send a ${typeof v}`);
    }
  }

  private text(s: string): void {
    this.string(s, T_ASCII, T_UTF16);
  }
}

/** Reads what ProjectorEncoder wrote. Throws on anything malformed. */
export function decodeEventBatches(bytes: Uint8Array): ProjectionBatch[] {
  const d = new ProjectorDecoder(bytes);
  const version = d.byte();
  if (version !== PROJECTOR_CODEC_VERSION) d.fail(`unknown version ${version}`);
  const n = d.uint();
  const out: ProjectionBatch[] = [];
  for (let b = 0; b < n; b++) {
    const seq = d.f64();
    const ts = d.f64();
    const count = d.uint();
    const events: EngineEvent[] = [];
    for (let i = 0; i < count; i++) events.push(d.event());
    out.push({ seq, ts, events });
  }
  if (d.pos !== bytes.length) d.fail(`${bytes.length - d.pos} trailing bytes`);
  return out;
}

/** Strings up to this length go through the decoder's cache; its slots (a power of two). */
const SHORT_STRING = 24;
const SHORT_CACHE = 256;

class ProjectorDecoder extends ByteReader {
  private readonly shortCache = new Array<string | undefined>(SHORT_CACHE).fill(undefined);
  constructor(bytes: Uint8Array) {
    super(bytes, 'projector codec:');
  }

  event(): EngineEvent {
    const code = this.byte();
    switch (code) {
      case GENERIC: return this.value(0) as EngineEvent;
      case E_ORDER: return { type: 'order', order: this.order() };
      case E_FILL: return { type: 'fill', fill: this.fill() };
      case E_TRADE: return { type: 'trade', trade: this.trade() };
      case E_POSITION: return { type: 'position', position: this.position() };
      case E_FUNDING: return { type: 'funding', funding: this.funding() };
      case E_ORDER_FEE: return { type: 'orderFee', fee: this.orderFee() };
      case E_INSTRUMENT: return { type: 'instrument', instrument: this.instrument() };
      case E_BOOK: return { type: 'book', instrument: this.v() as string, t: this.v() as number };
      default: return this.fail(`unknown event code ${code}`);
    }
  }

  // The view decoders: literals in the encoder's field order (properties are evaluated left to right).
  // Values are whatever was written (`v()` is typed loosely): the codec carries values, it does not check them.

  private order(): OrderView {
    const o: AllKeys<OrderView> = {
      id: this.v(), userId: this.v(), instrument: this.v(), type: this.v(), side: this.v(), status: this.v(),
      rejectedReason: this.v(), timeInForce: this.v(), postOnly: this.v(), leverage: this.v(), quantity: this.v(),
      limitPrice: this.v(), stopPrice: this.v(), group: this.v(), unFilledQuantity: this.v(), cashQuantity: this.v(),
      filledQuantity: this.v(), filledValue: this.v(), realizedPnL: this.v(), fee: this.v(), triggeredAt: this.v(),
      createdAt: this.v(), updatedAt: this.v(),
    };
    return o;
  }

  private fill(): FillView {
    const f: AllKeys<FillView> = {
      executionId: this.v(), userId: this.v(), orderId: this.v(), instrument: this.v(), side: this.v(), role: this.v(),
      quantity: this.v(), price: this.v(), fee: this.v(), realizedPnL: this.v(), createdAt: this.v(),
    };
    return f;
  }

  private trade(): TradeView {
    const t: AllKeys<TradeView> = {
      executionId: this.v(), instrument: this.v(), side: this.v(), quantity: this.v(), price: this.v(), createdAt: this.v(),
    };
    return t;
  }

  private position(): PositionView {
    const p: AllKeys<PositionView> = {
      id: this.v(), userId: this.v(), instrument: this.v(), side: this.v(), quantity: this.v(), costBasis: this.v(),
      avgPrice: this.v(), leverage: this.v(), maintenanceMargin: this.v(), fundingPaid: this.v(), fee: this.v(),
      realizedPnL: this.v(), unRealizedPnL: this.v(), markPrice: this.v(), bankruptcyPrice: this.v(), adlLevel: this.v(),
      createdAt: this.v(), updatedAt: this.v(),
    };
    return p;
  }

  private funding(): FundingChangeView {
    const f: AllKeys<FundingChangeView> = {
      userId: this.v(), coin: this.v(), quantity: this.v(), balance: this.v(), reason: this.v(), updatedAt: this.v(),
    };
    return f;
  }

  private orderFee(): OrderFeeView {
    const f: AllKeys<OrderFeeView> = {
      id: this.v(), userId: this.v(), orderId: this.v(), executionId: this.v(), coin: this.v(), quantity: this.v(),
      type: this.v(), createdAt: this.v(),
    };
    return f;
  }

  private instrument(): InstrumentStateView {
    const required: Omit<AllKeys<InstrumentStateView>, 'fundingRate' | 'fundingRateAt'> = {
      id: this.v(), lastPrice: this.v(), markPrice: this.v(), indexPrice: this.v(), openInterest: this.v(),
      trading: this.v(), updatedAt: this.v(),
    };
    const i: InstrumentStateView = required;
    // The optional two: written as absent when the view lacks them.
    let tag = this.byte();
    if (tag !== T_ABSENT) i.fundingRate = this.tagged(tag, 1) as InstrumentStateView['fundingRate'];
    tag = this.byte();
    if (tag !== T_ABSENT) i.fundingRateAt = this.tagged(tag, 1) as InstrumentStateView['fundingRateAt'];
    return i;
  }

  /** The next value, typed as whatever its field is (see the view decoders). */
  private v<T>(): T {
    return this.tagged(this.byte(), 1) as T;
  }

  private value(depth: number): unknown {
    return this.tagged(this.byte(), depth);
  }

  private tagged(tag: number, depth: number): unknown {
    switch (tag) {
      case T_UNDEFINED: return undefined;
      case T_NULL: return null;
      case T_FALSE: return false;
      case T_TRUE: return true;
      case T_NUMBER: return this.f64();
      case T_BIGINT: return BigInt(this.f64());
      case T_BIGINT_TEXT: return BigInt(this.text());
      case T_ASCII:
      case T_UTF16:
        this.pos--;
        return this.text();
      case T_ARRAY: {
        if (depth >= MAX_DEPTH) this.fail('nested too deeply');
        const n = this.uint();
        if (n > this.length - this.pos) this.fail('bad array length');
        const a = new Array<unknown>(n);
        for (let i = 0; i < n; i++) a[i] = this.value(depth + 1);
        return a;
      }
      case T_OBJECT: {
        if (depth >= MAX_DEPTH) this.fail('nested too deeply');
        const n = this.uint();
        const o: Record<string, unknown> = {};
        for (let i = 0; i < n; i++) {
          const k = this.text();
          const v = this.value(depth + 1);
          // A key named __proto__ is an own property in a clone, not the prototype.
          if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
          else o[k] = v;
        }
        return o;
      }
      default:
        return this.fail(`bad tag ${tag}`);
    }
  }

  private text(): string {
    return this.string(T_ASCII, T_UTF16);
  }

  /**
   * A short ASCII string, from a small cache of the ones seen (sides, statuses, instruments, coins, reasons
   * repeat in every batch): comparing a few bytes costs less than Buffer.toString's native call and copy.
   */
  protected override ascii(start: number, n: number): string {
    if (n > SHORT_STRING) return super.ascii(start, n);
    const buf = this.buf;
    let h = n;
    for (let i = start; i < start + n; i++) h = (Math.imul(h, 31) + buf[i]) | 0;
    const slot = (h ^ (h >>> 8)) & (SHORT_CACHE - 1);
    const cached = this.shortCache[slot];
    if (cached !== undefined && cached.length === n) {
      let same = true;
      for (let i = 0; i < n; i++) {
        if (cached.charCodeAt(i) !== buf[start + i]) {
          same = false;
          break;
        }
      }
      if (same) return cached;
    }
    const s = super.ascii(start, n);
    this.shortCache[slot] = s;
    return s;
  }
}
