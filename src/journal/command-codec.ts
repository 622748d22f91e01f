/**
 * Binary journal body (format 1): the same JSON value a command's JSON text would hold, in a compact form
 * written without JSON.stringify. The hot kinds (order.*, price.tick) are journaled this way; a row's body
 * is then a BLOB whose first byte is the format (1), while every other kind — and any command the encoder
 * declines — stays JSON TEXT as before. Readers tell them apart by the SQLite type of `body` (string = JSON,
 * Buffer = binary), so journals written before this format replay unchanged.
 *
 * Value = tag byte, then:
 *   0 null · 1 false · 2 true
 *   3 non-negative safe integer, LEB128 · 4 negative safe integer, LEB128 of its magnitude
 *   5 float64 (little endian)
 *   6 string of ASCII chars: LEB128 length, bytes · 7 any other string: LEB128 length in UTF-16 code units,
 *     then the code units little endian (lone surrogates survive, as they do through JSON)
 *   8 string from VALUES: one byte index
 *   9 array: LEB128 count, values
 *   10 object: entries, each a key byte (index into KEYS; 0xFE = a string value follows holding the key)
 *      then the value; 0xFF ends the object.
 * JSON semantics are kept exactly: keys in Object.keys order, undefined / functions skipped in objects and
 * null in arrays, non-finite numbers null, -0 as 0. Anything JSON.stringify would treat specially (toJSON,
 * a non-plain object, a bigint, a cycle) makes the encoder decline, and the caller writes JSON text instead
 * (which throws for a bigint, as before). KEYS and VALUES are part of the format: append only.
 */

import { ByteReader } from '../codec/byte-reader.js';
import { ByteWriter } from '../codec/byte-writer.js';

export const BINARY_FORMAT = 1;

const KEYS = [
  'kind', 'ts', 'userId', 'order', 'id', 'instrument', 'side', 'type', 'timeInForce', 'leverage',
  'quantity', 'limitPrice', 'stopPrice', 'cashQuantity', 'postOnly', 'smp', 'smpId', 'group', 'reduceOnly', 'tpsl',
  'price', 'orderId', 'orderIds', 'orders', 'items', 'replace', 'indexPrice', 'markPrice', 'intervalMs', 'amount',
  'transferId', 'recipient', 'success', 'hold', 'trading', 'state', 'config', 'digest',
] as const;

const VALUES = [
  'order.place', 'order.cancel', 'order.replace', 'order.placeBatch', 'order.replaceBatch', 'order.cancelAll',
  'order.cancelMany', 'price.tick', 'position.close', 'position.leverage',
  'BUY', 'SELL', 'LIMIT', 'MARKET', 'STOP', 'STOP_LIMIT', 'GTC', 'DAY', 'IOC', 'FOK',
  'manually', 'tpsl', 'take-profit', 'stop-loss', 'liquidation', 'adl', 'otc', 'otc-hidden',
] as const;

const KEY_INDEX = new Map<string, number>(KEYS.map((k, i) => [k, i]));
const VALUE_INDEX = new Map<string, number>(VALUES.map((v, i) => [v, i]));
/** Keys whose string values are looked up in VALUES (ids and other free text are not worth the lookup). */
const ENUM_KEYS = new Set(['kind', 'side', 'type', 'timeInForce', 'group']);
const IS_ENUM_KEY = KEYS.map((k) => ENUM_KEYS.has(k));
/** Entries of the per-position key cache (see CommandEncoder.object). */
const HINTS = 64;

const T_NULL = 0;
const T_FALSE = 1;
const T_TRUE = 2;
const T_UINT = 3;
const T_NINT = 4;
const T_F64 = 5;
const T_ASCII = 6;
const T_UTF16 = 7;
const T_DICT = 8;
const T_ARRAY = 9;
const T_OBJECT = 10;
const K_INLINE = 0xfe;
const K_END = 0xff;
/** Nesting deeper than this is declined (JSON text handles it, and a cycle ends here). */
const MAX_DEPTH = 32;

/** Thrown inside the encoder to decline a value; never escapes `encode`. */
const DECLINE = new Error('decline');

/** Kinds journaled in the binary format; the rest are rare and stay readable JSON text in the journal. */
export function isBinaryKind(kind: string): boolean {
  return kind.startsWith('order.') || kind === 'price.tick';
}

/**
 * Appends encoded commands to one growing buffer. `encode` returns false (having written nothing) when
 * the value must be journaled as JSON text instead.
 */
export class CommandEncoder extends ByteWriter {
  /**
   * Commands of one kind have the same keys in the same order, so the n-th key of a command is usually the
   * n-th key of the previous one of its kind: remembered per position, it costs a pointer comparison
   * instead of a map lookup; likewise an enum value (BUY, LIMIT…) at that position.
   */
  private keyPos = 0;
  private readonly hintKey: Array<string | undefined> = new Array<string | undefined>(HINTS).fill(undefined);
  private readonly hintKeyIdx = new Int32Array(HINTS);
  private readonly hintVal: Array<string | undefined> = new Array<string | undefined>(HINTS).fill(undefined);
  private readonly hintValIdx = new Int32Array(HINTS);

  encode(value: object): boolean {
    const start = this.pos;
    try {
      this.byte(BINARY_FORMAT);
      this.keyPos = 0;
      this.value(value, 0);
      return true;
    } catch (err) {
      this.pos = start;
      if (err === DECLINE || err instanceof RangeError) return false;
      throw err;
    }
  }

  private value(v: unknown, depth: number): void {
    switch (typeof v) {
      case 'string':
        this.text(v);
        return;
      case 'number':
        this.number(v);
        return;
      case 'boolean':
        this.byte(v ? T_TRUE : T_FALSE);
        return;
      case 'object':
        if (v === null) {
          this.byte(T_NULL);
          return;
        }
        if (depth >= MAX_DEPTH) throw DECLINE;
        if (Array.isArray(v)) this.array(v, depth + 1);
        else this.object(v as Record<string, unknown>, depth + 1);
        return;
      default:
        // undefined / function / symbol at the top or in an array, bigint: JSON text decides.
        throw DECLINE;
    }
  }

  private object(o: Record<string, unknown>, depth: number): void {
    const proto: unknown = Object.getPrototypeOf(o);
    if ((proto !== Object.prototype && proto !== null) || o.toJSON !== undefined) throw DECLINE;
    this.byte(T_OBJECT);
    for (const key in o) {
      const v = o[key];
      const t = typeof v;
      if (t === 'undefined' || t === 'function' || t === 'symbol') continue;
      const p = this.keyPos++ & (HINTS - 1);
      let k: number;
      if (key === this.hintKey[p]) {
        k = this.hintKeyIdx[p];
      } else {
        k = KEY_INDEX.get(key) ?? -1;
        this.hintKey[p] = key;
        this.hintKeyIdx[p] = k;
      }
      if (k >= 0) {
        this.byte(k);
        if (t === 'string' && IS_ENUM_KEY[k]) {
          this.enumString(v as string, p);
          continue;
        }
      } else {
        this.byte(K_INLINE);
        this.text(key);
      }
      this.value(v, depth);
    }
    this.byte(K_END);
  }

  private array(a: unknown[], depth: number): void {
    if ((a as { toJSON?: unknown }).toJSON !== undefined || Object.getPrototypeOf(a) !== Array.prototype) throw DECLINE;
    const n = a.length;
    this.byte(T_ARRAY);
    this.uint(n);
    for (let i = 0; i < n; i++) {
      const v = a[i];
      const t = typeof v;
      if (t === 'undefined' || t === 'function' || t === 'symbol') {
        this.byte(T_NULL);
      } else {
        this.value(v, depth);
      }
    }
  }

  private number(v: number): void {
    if (v >= 0 && v <= 0x7fffffff && (v | 0) === v) {
      // Covers -0 too (JSON writes it as 0).
      this.byte(T_UINT);
      this.uint(v);
    } else if (Number.isSafeInteger(v)) {
      this.byte(v > 0 ? T_UINT : T_NINT);
      this.uint(v > 0 ? v : -v);
    } else if (Number.isFinite(v)) {
      this.byte(T_F64);
      this.f64(v);
    } else {
      this.byte(T_NULL);
    }
  }

  /** A string that is usually one of VALUES; `p`: its key's position (for the cache). */
  private enumString(s: string, p: number): void {
    let d: number;
    if (s === this.hintVal[p]) {
      d = this.hintValIdx[p];
    } else {
      d = VALUE_INDEX.get(s) ?? -1;
      this.hintVal[p] = s;
      this.hintValIdx[p] = d;
    }
    if (d < 0) {
      this.text(s);
      return;
    }
    this.byte(T_DICT);
    this.byte(d);
  }

  private text(s: string): void {
    this.string(s, T_ASCII, T_UTF16);
  }
}

/** Reads a body written by CommandEncoder (format byte included). Throws on anything malformed. */
export function decodeCommand(body: Uint8Array): unknown {
  if (body.length === 0 || body[0] !== BINARY_FORMAT) {
    throw new Error(`unknown journal body format ${body.length === 0 ? '(empty)' : body[0]}`);
  }
  const d = new Decoder(body);
  d.pos = 1;
  const v = d.value();
  if (d.pos !== body.length) throw new Error(`journal body has ${body.length - d.pos} trailing bytes`);
  return v;
}

class Decoder extends ByteReader {
  constructor(body: Uint8Array) {
    super(body, 'journal body:');
  }

  value(): unknown {
    const tag = this.byte();
    switch (tag) {
      case T_NULL: return null;
      case T_FALSE: return false;
      case T_TRUE: return true;
      case T_UINT: return this.uint();
      case T_NINT: return -this.uint();
      case T_F64: return this.f64();
      case T_ASCII:
      case T_UTF16:
      case T_DICT:
        this.pos--;
        return this.text();
      case T_ARRAY: {
        const n = this.uint();
        if (n > this.length) this.fail('bad array length');
        const a = new Array<unknown>(n);
        for (let i = 0; i < n; i++) a[i] = this.value();
        return a;
      }
      case T_OBJECT: {
        const o: Record<string, unknown> = {};
        for (;;) {
          const k = this.byte();
          if (k === K_END) return o;
          let key: string;
          if (k === K_INLINE) key = this.text();
          else if (k < KEYS.length) key = KEYS[k];
          else this.fail(`bad key ${k}`);
          const v = this.value();
          if (key === '__proto__') Object.defineProperty(o, key, { value: v, enumerable: true, writable: true, configurable: true });
          else o[key] = v;
        }
      }
      default:
        this.fail(`bad tag ${tag}`);
    }
  }

  private text(): string {
    if (this.pos < this.length && this.buf[this.pos] === T_DICT) {
      this.pos++;
      const i = this.byte();
      if (i >= VALUES.length) this.fail(`bad dictionary string ${i}`);
      return VALUES[i];
    }
    return this.string(T_ASCII, T_UTF16);
  }
}
